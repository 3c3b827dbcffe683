// The background refreshes give way to writes (hub.ts, REFRESH_YIELD): while an export is being
// written, the timer does not fold the queues into the summaries the SQL views read; once the hub
// stops writing it does, without anyone asking the API. An export is kept in flight by a session
// holding its reconciler's row.
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
  hub = await startTestHub(testDb.url);
});

afterAll(async () => {
  await hub.stop();
  await testDb.drop();
});

/** What Grafana's host panels read for `host`. */
async function hostPanel(host: string): Promise<{ succeeded: number; failed: number } | undefined> {
  const rows = await queryAt(testDb.url)<{ succeeded: number; failed: number }>(
    'SELECT succeeded::int, failed::int FROM kalypso_host_summary WHERE host = $1',
    [host],
  );
  return rows[0];
}

async function send(spec: Parameters<typeof stateLog>[0]): Promise<void> {
  const exporter = createExporter('http-json', hub.ports);
  try {
    const result = await exportLogs(exporter, await buildLogRecords([stateLog(spec)]));
    expect(result.code, String(result.error)).toBe(ExportResultCode.SUCCESS);
  } finally {
    await exporter.shutdown();
  }
}

describe('the background refreshes', () => {
  it('wait while an export is being written, and fold everything in once none is', async () => {
    const [edge, held] = [randomName('edge'), randomName('held')];
    const minuteAgo = () => new Date(Date.now() - 60_000);
    await send({ host: edge, commit: randomCommit(), status: 'success', at: minuteAgo() });
    await send({ host: held, commit: randomCommit(), status: 'success', at: minuteAgo() });
    await waitFor(async () => (await hostPanel(edge))?.succeeded === 1 && (await hostPanel(held))?.succeeded === 1, 'the timer folding the first reports in');

    const locker = lockingSession(testDb.url);
    await locker.connect();
    let released = false;
    try {
      await locker.query('BEGIN');
      await locker.query(`SELECT 1 FROM reconciler r JOIN host h ON h.id = r.host_id WHERE h.name = $1 FOR UPDATE OF r`, [held]);
      const inFlight = send({ host: held, commit: randomCommit(), status: 'failure', at: new Date() });
      await waitFor(async () => (await hubSessionsWaitingOnLocks(testDb.url)) > 0, 'the held export waiting for its reconciler');
      await send({ host: edge, commit: randomCommit(), status: 'failure', at: new Date() });
      // The summary timer runs every second; giving way, it leaves the failure queued.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(await hostPanel(edge)).toEqual({ succeeded: 1, failed: 0 });

      await locker.query('COMMIT');
      released = true;
      await inFlight;
    } finally {
      if (!released) await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
    }
    await waitFor(async () => (await hostPanel(edge))?.failed === 1 && (await hostPanel(held))?.failed === 1, 'the timer folding the failures in');
  });
});
