// When is a Reconciler resource's state fresh? An API server ignores a re-apply of the same object
// (no new resourceVersion, no event, no new managedFields time), so an agent that declares a state
// once — as the original hub's did — never writes again while it holds. The hub confirms such a
// resource while it watches it; a writer that sets spec.lastHeartbeatTime is fresh only as long as it
// keeps writing. Through the real client against the stand-in, on one simulated clock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { AZURE_RESOURCE_GRAPHS, DEPLOYMENT_DESCRIPTORS, RECONCILERS } from '../../src/sources/kube/kube-objects.ts';
import type { FakeKubeApiServer } from '../support/kube-apiserver.ts';
import { type KubeHub, startKubeHub } from '../support/kube-hub.ts';
import { SimulatedClock } from '../support/promotion-flow.ts';
import { randomCommit, randomName } from '../support/random-ids.ts';
import type { TestDatabase } from '../support/test-database.ts';
import { waitFor } from '../support/wait-for.ts';

const MINUTE = 60_000;
let kube: KubeHub;
let api: FakeKubeApiServer;
let testDb: TestDatabase;
let hub: RunningHub;
let clock: SimulatedClock;

interface Agent {
  readonly name: string;
  readonly host: string;
  readonly endpoint: string;
  readonly commit: string;
}

function agent(): Agent {
  return {
    name: randomName('reconciler'),
    host: randomName('cluster'),
    endpoint: `https://github.com/${randomName('org')}/gitops/dev/${randomName('app')}`,
    commit: randomCommit(),
  };
}

/** The agent's apply of its Reconciler: the same object every time unless the state changes. */
function declare(of: Agent, deployment: { commit?: string; status?: string; message?: string } = {}, extra: Record<string, unknown> = {}) {
  return api.apply(
    RECONCILERS,
    {
      apiVersion: 'hub.kalypso.io/v1alpha1',
      kind: 'Reconciler',
      metadata: { name: of.name, namespace: 'edge' },
      spec: {
        hostName: of.host,
        reconcilerName: 'flux-system/app',
        reconcilerType: 'flux',
        manifestsEndpoint: of.endpoint,
        deployment: { gitOpsCommitId: deployment.commit ?? of.commit, status: deployment.status ?? 'success', statusMessage: deployment.message ?? 'Resource is Ready' },
        ...extra,
      },
    },
    `agent-${of.host}`,
  );
}

async function gate(of: Agent, commit = of.commit): Promise<{ succeeded: number; failed: number; stale: number; inProgress: number }> {
  const query = new URLSearchParams({ manifestsEndpoint: of.endpoint, commit });
  const response = await fetch(`http://127.0.0.1:${hub.ports.http}/api/v1/deployment-state?${query.toString()}`);
  expect(response.status).toBe(200);
  return (await response.json()) as { succeeded: number; failed: number; stale: number; inProgress: number };
}

const historyOf = (of: Agent) =>
  testDb.query<{ status: string }>(
    `SELECT h.status FROM deployment_state_history h JOIN reconciler r ON r.id = h.reconciler_id JOIN host ON host.id = r.host_id
      WHERE host.name = $1 ORDER BY h.observed_at, h.id`,
    [of.host],
  );

/** Real time for the hub's confirmation loop (every second here) to run a few times. */
const fewConfirmations = () => new Promise((resolve) => setTimeout(resolve, 2_500));

beforeAll(async () => {
  // Four days of scenario, all before the real now (the hub caps a report's time at its receipt).
  clock = new SimulatedClock(new Date(Date.now() - 4 * 24 * 60 * MINUTE));
  kube = await startKubeHub({
    kinds: [DEPLOYMENT_DESCRIPTORS, RECONCILERS, AZURE_RESOURCE_GRAPHS],
    flags: ['--kube-resync', '1s', '--stale-after', '15m'],
    clock: () => clock.now(),
  });
  ({ api, testDb, hub } = kube);
});

afterAll(async () => {
  await kube.stop();
});

describe('Reconciler liveness', () => {
  it('keeps a Reconciler that holds for days succeeded: the hub confirms it while it watches', async () => {
    const edge = agent();
    declare(edge);
    await waitFor(async () => (await gate(edge)).succeeded === 1, 'recorded');

    // The agent re-applies its unchanged resource: the API server persists nothing.
    clock.advance(10 * MINUTE);
    const before = api.get(RECONCILERS, 'edge', edge.name)!.metadata;
    const after = declare(edge).metadata;
    expect(after.resourceVersion).toBe(before.resourceVersion);
    expect(after.managedFields).toEqual(before.managedFields);

    clock.advance(3 * 24 * 60 * MINUTE);
    expect(await waitFor(async () => ((await gate(edge)).succeeded === 1 ? gate(edge) : undefined), 'confirmed days later')).toMatchObject({
      succeeded: 1,
      stale: 0,
    });
    // Confirmations are not transitions.
    expect(await historyOf(edge)).toEqual([{ status: 'success' }]);
  });

  it('lets a Reconciler with lastHeartbeatTime turn stale when its writer stops', async () => {
    const edge = agent();
    declare(edge, {}, { lastHeartbeatTime: clock.now().toISOString() });
    await waitFor(async () => (await gate(edge)).succeeded === 1, 'recorded');
    clock.advance(12 * MINUTE);
    declare(edge, {}, { lastHeartbeatTime: clock.now().toISOString() });

    // 24 minutes after the first write, 12 after the last heartbeat: fresh.
    clock.advance(12 * MINUTE);
    await fewConfirmations();
    expect(await gate(edge)).toMatchObject({ succeeded: 1, stale: 0 });

    // 18 minutes after the last heartbeat: stale, though the hub watches the resource all along.
    clock.advance(6 * MINUTE);
    await fewConfirmations();
    expect(await gate(edge)).toMatchObject({ succeeded: 0, stale: 1 });
    expect(await historyOf(edge)).toEqual([{ status: 'success' }]);
  });

  it('confirms nothing while it cannot read Reconcilers, and confirms again once it can', async () => {
    const edge = agent();
    declare(edge);
    await waitFor(async () => (await gate(edge)).succeeded === 1, 'recorded');

    api.unavailable.add('reconcilers');
    api.closeWatches({ abrupt: true });
    await fewConfirmations();
    clock.advance(16 * MINUTE);
    await fewConfirmations();
    expect(await gate(edge)).toMatchObject({ succeeded: 0, stale: 1 });

    api.unavailable.delete('reconcilers');
    await waitFor(async () => (await gate(edge)).succeeded === 1, 'confirmed after the API server answers again', 40_000);
  }, 60_000);

  it('takes a change the API server stamped before the hub’s last confirmation as the new state, once', async () => {
    const edge = agent();
    declare(edge);
    await waitFor(async () => (await gate(edge)).succeeded === 1, 'recorded');
    clock.advance(5 * MINUTE);
    await fewConfirmations();

    // The API server's clock runs two minutes behind the hub's: its write of the failure is stamped
    // before the hub's confirmation of the success.
    api.now = () => new Date(clock.now().getTime() - 2 * MINUTE);
    try {
      declare(edge, { status: 'failure', message: 'Health check failed after 5m0s' });
      await waitFor(async () => (await gate(edge)).failed === 1, 'the failure is current');
      expect(await historyOf(edge)).toEqual([{ status: 'success' }, { status: 'failure' }]);
    } finally {
      api.now = () => clock.now();
    }
  });
});
