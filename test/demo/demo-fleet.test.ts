// The demo fleet through the real OTLP path into a hub: the scenario it promises is what the
// hub then reports.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDemoFleet, DEMO_ENVIRONMENTS } from '../../src/demo/demo-fleet.ts';
import { feedDemoFleet } from '../../src/demo/demo-feeder.ts';
import type { RunningHub } from '../../src/hub.ts';
import { createLogger } from '../../src/log/logger.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';

let testDb: TestDatabase;
let hub: RunningHub;

beforeAll(async () => {
  testDb = await createTestDatabase();
  hub = await startTestHub(testDb.url);
});

afterAll(async () => {
  await hub.stop();
  await testDb.drop();
});

async function api(path: string): Promise<any> {
  return (await fetch(`http://127.0.0.1:${hub.ports.http}/api/v1${path}`)).json();
}

describe('demo fleet', () => {
  it('is the same fleet every time', () => {
    const now = new Date('2026-11-20T10:00:00Z');
    expect(JSON.stringify(buildDemoFleet({ hosts: 40, now }))).toBe(JSON.stringify(buildDemoFleet({ hosts: 40, now })));
  });

  it('arrives through OTLP with a rollout in progress, a failing host, an offline host and drift', async () => {
    const fleet = await feedDemoFleet({ otlpEndpoint: `http://127.0.0.1:${hub.ports.otlpHttp}`, hosts: 40, log: createLogger('silent') });
    const environments = await api('/environments');
    expect(environments.items.map((environment: { name: string }) => environment.name)).toEqual([...DEMO_ENVIRONMENTS]);
    expect((await api('/hosts?limit=1000')).items).toHaveLength(40);

    const drift = (await api('/drift')).items as { host: string; reasons: string[] }[];
    expect(drift.find((item) => item.host === fleet.scenario.failingHost)?.reasons).toEqual(['failing']);
    expect(drift.find((item) => item.host === fleet.scenario.offlineHost)?.reasons).toContain('stale');
    expect(drift.find((item) => item.host === fleet.scenario.driftingHost)?.reasons).toEqual(['not_on_desired_commit']);

    const rollout = await api(
      `/deployment-state?manifestsEndpoint=${encodeURIComponent(fleet.scenario.rolloutEndpoint)}&commit=${fleet.scenario.rolloutCommit}`,
    );
    const pendingHere = fleet.scenario.rolloutPending.filter((pending) => pending.endpoint === fleet.scenario.rolloutEndpoint);
    expect(rollout.inProgress).toBe(pendingHere.length);
    expect(rollout.inProgress).toBeGreaterThan(0);
    expect(rollout.succeeded).toBeGreaterThan(0);
    expect(rollout.settled).toBe(false);
    // The environment's gate holds for every reconciler of the branch, those not at its new head yet
    // included, and for nothing else.
    const staging = await api(`/deployment-state?environment=staging&commit=${fleet.scenario.rolloutCommit.slice(0, 10)}`);
    expect([staging.inProgress, staging.failed, staging.stale]).toEqual([fleet.scenario.rolloutPending.length, 0, 0]);
    expect(fleet.scenario.rolloutPending.length).toBeGreaterThan(pendingHere.length);

    // Every other environment's last merge, the one the Environments page links to, has landed on
    // every reconciler of its branch (contoso-retail's: its edge workload merges last each day), but
    // for the offline store in prod, silent. The drifting and the failing host are kaizentm's, whose
    // gates the checks above and below hold.
    const summaries = (await api('/environments')).items as { name: string; latestAssignment: { commit: string } }[];
    const silent: Record<string, number> = { dev: 0, qa: 0, prod: 1 };
    for (const [environment, stale] of Object.entries(silent)) {
      const { commit } = summaries.find((summary) => summary.name === environment)!.latestAssignment;
      const gate = await api(`/deployment-state?environment=${environment}&commit=${commit}`);
      expect({ environment, inProgress: gate.inProgress, failed: gate.failed, stale: gate.stale }).toEqual({ environment, inProgress: 0, failed: 0, stale });
      expect(gate.succeeded).toBe(gate.total - stale);
      expect(gate.total).toBeGreaterThan(stale);
    }

    // One verdict: prod checkout converged, then failed on the failing host. Delivery says so the
    // way the gate does (it once said "succeeded · 10/10 · 1 failed" beside a gate's 9/10 FAILED).
    const delivery = await api(`/metrics/delivery?environment=prod&workload=checkout&limit=1`);
    const [checkout] = delivery.recentRollouts;
    const gate = await api(`/deployment-state?environment=prod&commit=${checkout.commit.slice(0, 10)}`);
    const checkoutGate = gate.targets.find((target: { workload: string }) => target.workload === 'checkout');
    expect(checkout).toMatchObject({ status: 'failed', current: true, regressedOn: [fleet.scenario.failingHost] });
    expect([checkout.subscribers, checkout.succeeded, checkout.failed]).toEqual([checkoutGate.total, checkoutGate.succeeded, checkoutGate.failed]);
    expect(checkoutGate.failed).toBe(1);
  });
});
