// Drift and host events through the real paths: a hub started on a fleet takes what stands as it is
// (no event for it); then a cluster left behind by a merge is announced once its drift has lasted,
// and resolved when it catches up; a host that falls silent past stale-after goes offline, and
// online when it reports again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { clusterStates, FAST_NOTIFY, GitHostStandIn, mergeDescriptors, notificationsFile, orgRepos, PUBLIC_URL, randomOrg, send, startNotifyingHub } from '../support/notify-flow.ts';
import { randomCommit, randomName } from '../support/random-ids.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';
import { waitFor } from '../support/wait-for.ts';

const org = randomOrg('github');
const ENV = randomName('qa');
const WORKLOADS = [randomName('api')];
const [STEADY, LAGGING, SILENT] = [randomName('aks'), randomName('aks'), randomName('edge')];
let standIn: GitHostStandIn;
let testDb: TestDatabase;
let hub: RunningHub;
let first: string;

beforeAll(async () => {
  standIn = new GitHostStandIn();
  await standIn.start();
  testDb = await createTestDatabase();
  // Before the hub that tells anyone: a fleet with a host already silent.
  const quiet = await startTestHub(testDb.url, ['--stale-after', '3s']);
  first = randomCommit();
  await send(quiet, mergeDescriptors(org, ENV, { commit: first, version: '1.0.0', buildCommit: randomCommit(), workloads: WORKLOADS }));
  await send(quiet, [STEADY, LAGGING, SILENT].flatMap((cluster) => clusterStates(org, ENV, cluster, first, 'success', WORKLOADS)));
  await quiet.stop();
  await new Promise((resolve) => setTimeout(resolve, 3_500));
  hub = await startNotifyingHub(
    testDb.url,
    await notificationsFile(standIn, { repos: { github: orgRepos(org, 'github') }, webhook: true }),
    { notifyTuning: { ...FAST_NOTIFY, driftEventAfterMs: 1_000 } },
    ['--stale-after', '3s'],
  );
}, 60_000);

afterAll(async () => {
  await hub?.stop();
  await standIn?.stop();
  await testDb?.drop();
});

const events = (type: string) => standIn.events.filter((received) => received.event.type === type).map((received) => received.event);

describe('fleet events', () => {
  it('announce drift that lasts and hosts that go silent, and their end; what stood when the hub started is not news', async () => {
    // Everything silent at start (all three hosts, last heard 3.5 s ago with stale-after 3 s) is the baseline.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(events('io.kalypso.host.offline')).toEqual([]);
    expect(events('io.kalypso.drift.started')).toEqual([]);

    // They report again: online. Then a merge that one cluster does not apply: drift, announced once it lasted 1 s.
    await send(hub, [STEADY, LAGGING, SILENT].flatMap((cluster) => clusterStates(org, ENV, cluster, first, 'success', WORKLOADS)));
    await waitFor(() => events('io.kalypso.host.online').length === 3, 'three hosts online');
    // Their silence was drift (stale) when the hub started: it ends now.
    await waitFor(() => events('io.kalypso.drift.resolved').length === 3, 'the standing drift resolved');
    const next = randomCommit();
    await send(hub, mergeDescriptors(org, ENV, { commit: next, version: '1.1.0', buildCommit: randomCommit(), workloads: WORKLOADS }));
    // From now on every live cluster reports each 700 ms (stale-after is 3 s): only the silent one may go offline.
    const commits = new Map([[STEADY, next], [LAGGING, first], [SILENT, next]]);
    const live = new Set([STEADY, LAGGING, SILENT]);
    const report = () => send(hub, [...live].flatMap((cluster) => clusterStates(org, ENV, cluster, commits.get(cluster)!, 'success', WORKLOADS)));
    await report();
    const keepReporting = setInterval(() => void report(), 700);
    try {
      const started = await waitFor(() => events('io.kalypso.drift.started').find((event) => event.data.host === LAGGING), 'drift started on the lagging cluster');
      expect(started).toMatchObject({
        subject: `${LAGGING}/flux-system/${WORKLOADS[0]}`,
        source: PUBLIC_URL,
        data: { environment: ENV, workload: WORKLOADS[0], deploymentTarget: 'main', host: LAGGING, reasons: ['not_on_desired_commit'], url: `${PUBLIC_URL}/drift?environment=${ENV}` },
      });

      commits.set(LAGGING, next);
      await report();
      await waitFor(() => events('io.kalypso.drift.resolved').filter((event) => event.data.host === LAGGING).length === 2, 'drift resolved');
      // The others never drifted long enough to be news; the lagging one started once.
      expect(events('io.kalypso.drift.started').map((event) => event.data.host)).toEqual([LAGGING]);

      // The silent one stops reporting; the others keep on.
      live.delete(SILENT);
      const offline = await waitFor(() => events('io.kalypso.host.offline').find((event) => event.data.host === SILENT), 'the silent host offline', 15_000);
      expect(offline).toMatchObject({ subject: SILENT, data: { host: SILENT, url: `${PUBLIC_URL}/hosts/${SILENT}` } });
      expect(events('io.kalypso.host.offline').map((event) => event.data.host)).toEqual([SILENT]);
    } finally {
      clearInterval(keepReporting);
    }
    for (const received of standIn.events) expect(received.signatureValid).toBe(true);
  });
});
