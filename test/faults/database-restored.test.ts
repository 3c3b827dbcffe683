// The database loses rows the hub has already seen — restored from a backup, or failed over to a
// replica that had not received the last commits. The hub caches dimension ids (hosts,
// reconcilers, endpoints); it must notice that they are gone and carry on without a restart,
// not refuse every later report about those hosts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { httpExport } from '../support/raw-otlp.ts';
import { expectedCurrent, expectedHistory, protobufBatch, type Report, reportSet } from '../support/report-stream.ts';
import { asReports, queryAt, storedCurrent, storedHistory } from '../support/stored-reports.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';

let database: TestDatabase;
let hub: RunningHub;

beforeAll(async () => {
  database = await createTestDatabase();
  hub = await startTestHub(database.url);
});

afterAll(async () => {
  await hub?.stop();
  await database?.drop();
});

/**
 * `seen` stored, the database restored to a point without the rows of `tables` (emptied), then
 * `after` sent: it must be accepted and stored in full, history and current states alike.
 */
async function reportAcrossRestore(prefix: string, seen: readonly Report[], tables: string, after: readonly Report[]): Promise<void> {
  expect((await httpExport(hub.ports.otlpHttp, await protobufBatch(seen))).status).toBe(200);
  await database.query(`TRUNCATE ${tables} CASCADE`);

  const answer = await httpExport(hub.ports.otlpHttp, await protobufBatch(after));
  expect(answer.status, Buffer.from(await answer.arrayBuffer()).toString()).toBe(200);
  expect(await storedHistory(queryAt(database.url), prefix)).toEqual(expectedHistory(after));
  expect(asReports(await storedCurrent(queryAt(database.url), prefix))).toEqual(expectedCurrent(after));
}

describe('database restored to an earlier point', () => {
  it('stores reports about hosts whose rows vanished after the hub cached their ids', async () => {
    const after = reportSet('restored', 3, 2);
    // As if restored from a backup taken before the hub first saw these hosts.
    await reportAcrossRestore('restored', after.slice(0, 3), 'deployment_state_history, deployment_state, reconciler, host, manifests_endpoint', after);
  });

  it('notices it though the reports after the restore bring no commit it has not recorded', async () => {
    // No new sighting of a commit is written, so no foreign key of the commit evidence fails: the
    // writer's own check of the batch's ids must find the vanished rows (schema/0018).
    const reports = reportSet('quiet', 3, 1);
    await reportAcrossRestore('quiet', reports, 'deployment_state_history, deployment_state, reconciler, host, manifests_endpoint', reports);
    // Nothing names a row that is not there.
    const dangling = await database.query(
      'SELECT count(*)::int AS n FROM deployment_state s WHERE NOT EXISTS (SELECT 1 FROM reconciler r WHERE r.id = s.reconciler_id)',
    );
    expect(dangling[0]!['n']).toBe(0);
  });

  it('creates no reconciler on a host whose row vanished', async () => {
    // The hosts are cached, their rows gone; the endpoint is still there, and the reconcilers are
    // new: only the reconciler insert's own check can see that their host is missing (schema/0020).
    await reportAcrossRestore(
      'rehosted',
      reportSet('rehosted', 7, 1),
      'deployment_state_history, deployment_state, reconciler, host',
      reportSet('rehosted', 14, 1).slice(7),
    );
    const dangling = await database.query('SELECT count(*)::int AS n FROM reconciler r WHERE NOT EXISTS (SELECT 1 FROM host h WHERE h.id = r.host_id)');
    expect(dangling[0]!['n']).toBe(0);
  });
});
