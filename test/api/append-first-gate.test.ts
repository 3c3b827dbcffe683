// Read-your-writes with --append-first (issue 40): an export is acknowledged before its report is
// projected into current state, yet the rollout gate asked right after must count it — it folds in
// what is pending before it answers. The projector is held by a session holding its lock (as
// another hub's batch would), so the report is certainly still pending when the gate is asked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { hubSessionsWaitingOnLocks, lockingSession } from '../support/held-writes.ts';
import { stateLog } from '../support/kalypso-logs.ts';
import { buildLogRecords, createExporter, ExportResultCode, exportLogs } from '../support/otlp-client.ts';
import { randomCommit, randomName } from '../support/random-ids.ts';
import { queryAt } from '../support/stored-reports.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';
import { waitFor } from '../support/wait-for.ts';

let testDb: TestDatabase;
let hub: RunningHub;

beforeAll(async () => {
  testDb = await createTestDatabase();
  hub = await startTestHub(testDb.url, ['--append-first']);
});

afterAll(async () => {
  await hub.stop();
  await testDb.drop();
});

async function send(spec: Parameters<typeof stateLog>[0]): Promise<void> {
  const exporter = createExporter('http-json', hub.ports);
  try {
    const result = await exportLogs(exporter, await buildLogRecords([stateLog(spec)]));
    expect(result.code, String(result.error)).toBe(ExportResultCode.SUCCESS);
  } finally {
    await exporter.shutdown();
  }
}

async function gate(endpoint: string, commit: string): Promise<{ total: number; succeeded: number; settled: boolean }> {
  const response = await fetch(
    `http://127.0.0.1:${hub.ports.http}/api/v1/deployment-state?manifestsEndpoint=${encodeURIComponent(endpoint)}&commit=${commit}`,
  );
  expect(response.status).toBe(200);
  return (await response.json()) as { total: number; succeeded: number; settled: boolean };
}

const pending = async (): Promise<number> => (await queryAt(testDb.url)<{ n: number }>('SELECT count(*)::int AS n FROM pending_report'))[0]!.n;

describe('the rollout gate with --append-first', () => {
  it('counts a report acknowledged but not yet projected', async () => {
    const endpoint = `https://github.com/contoso/${randomName('gitops')}/prod/web`;
    const commit = randomCommit();
    const held = lockingSession(testDb.url);
    await held.connect();
    try {
      await held.query(`SELECT pg_advisory_lock(hashtext('kalypso_projector'))`);
      await send({ host: randomName('edge'), endpoint, commit, status: 'success', at: new Date(Date.now() - 1_000) });
      // Acknowledged, and only appended: nothing has projected it.
      expect(await pending()).toBe(1);
      expect(await queryAt(testDb.url)('SELECT 1 FROM deployment_state s JOIN manifests_endpoint e ON e.id = s.manifests_endpoint_id WHERE e.endpoint = $1', [endpoint])).toEqual([]);

      const answer = gate(endpoint, commit);
      // The gate waits for the projector's lock rather than answer without the report.
      await waitFor(async () => (await hubSessionsWaitingOnLocks(testDb.url)) > 0, 'the gate waiting for the projection');
      await held.query(`SELECT pg_advisory_unlock(hashtext('kalypso_projector'))`);
      expect(await answer).toMatchObject({ total: 1, succeeded: 1, settled: true });
      expect(await pending()).toBe(0);
    } finally {
      await held.end();
    }
  });

  it('answers with a report sent the moment before, with the projector free', async () => {
    const endpoint = `https://github.com/contoso/${randomName('gitops')}/prod/web`;
    const [first, next] = [randomCommit(), randomCommit()];
    const host = randomName('edge');
    await send({ host, endpoint, commit: first, status: 'success', at: new Date(Date.now() - 2_000) });
    expect(await gate(endpoint, first)).toMatchObject({ total: 1, succeeded: 1, settled: true });
    await send({ host, endpoint, commit: next, status: 'failure', at: new Date(Date.now() - 1_000) });
    expect(await gate(endpoint, next)).toMatchObject({ total: 1, succeeded: 0, failed: 1 });
  });
});
