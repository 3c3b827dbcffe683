import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.ts';
import type { Database } from '../../src/store/connect.ts';
import { RecordWriter } from '../../src/store/record-writer.ts';
import { closeTestDatabase, openTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { descriptorRecord, ENDPOINT, minute, stateRecord } from '../support/records.ts';
import { lockingSession } from '../support/held-writes.ts';

let testDb: TestDatabase;
let database: Database;
let writer: RecordWriter;
const NOW = new Date(Date.UTC(2026, 10, 21));

beforeAll(async () => {
  ({ testDb, database } = await openTestDatabase(12));
  writer = new RecordWriter(database.db, createLogger('silent'), { retryAfterSeconds: 1, now: () => NOW });
});

afterAll(() => closeTestDatabase({ testDb, database }));

beforeEach(async () => {
  await testDb.query(`TRUNCATE workspace, application, workload, environment, manifests_endpoint, deployment_target,
    workload_version, deployment_assignment, host, reconciler, deployment_state, deployment_state_history RESTART IDENTITY CASCADE`);
  writer = new RecordWriter(database.db, createLogger('silent'), { retryAfterSeconds: 1, now: () => NOW });
});

const history = (reconciler = 'hello-world') =>
  testDb.query<{ commit: string; status: string; observed_at: Date }>(
    `SELECT h.gitops_commit_id AS commit, h.status, h.observed_at FROM deployment_state_history h
       JOIN reconciler r ON r.id = h.reconciler_id WHERE r.name = $1 ORDER BY h.observed_at, h.id`,
    [reconciler],
  );
const current = async (reconciler = 'hello-world') =>
  (
    await testDb.query<{ commit: string; status: string; observed_at: Date; last_observed_at: Date }>(
      `SELECT s.gitops_commit_id AS commit, s.status, s.observed_at, s.last_observed_at FROM deployment_state s
         JOIN reconciler r ON r.id = s.reconciler_id WHERE r.name = $1`,
      [reconciler],
    )
  )[0];

describe('RecordWriter', () => {
  it('correlates desired and real state by manifests endpoint and commit', async () => {
    await writer.write([descriptorRecord({ version: '0.0.1', commit: 'c1', at: minute(0) })]);
    await writer.write([
      stateRecord({ host: 'aks-dev-eus', commit: 'c1', at: minute(2) }),
      stateRecord({ host: 'aks-dev-wus', commit: 'c1', status: 'failure', message: 'health check failed', at: minute(3) }),
    ]);
    const rows = await testDb.query(
      `SELECT e.name AS environment, t.name AS target, v.version, h.name AS host, s.status, s.status_message AS message
         FROM deployment_state s
         JOIN reconciler r ON r.id = s.reconciler_id
         JOIN host h ON h.id = r.host_id
         JOIN deployment_target t ON t.manifests_endpoint_id = s.manifests_endpoint_id
         JOIN environment e ON e.id = t.environment_id
         JOIN deployment_assignment a ON a.deployment_target_id = t.id AND a.gitops_commit_id = s.gitops_commit_id
         JOIN workload_version v ON v.id = a.workload_version_id
        ORDER BY h.name`,
    );
    expect(rows).toEqual([
      { environment: 'dev', target: 'functional-test', version: '0.0.1', host: 'aks-dev-eus', status: 'success', message: '' },
      { environment: 'dev', target: 'functional-test', version: '0.0.1', host: 'aks-dev-wus', status: 'failure', message: 'health check failed' },
    ]);
    const [target] = await testDb.query<{ endpoint: string; current: number }>(
      `SELECT m.endpoint, t.current_assignment_id::int AS current FROM deployment_target t JOIN manifests_endpoint m ON m.id = t.manifests_endpoint_id`,
    );
    expect(target).toEqual({ endpoint: ENDPOINT, current: 1 });
  });

  it('stores the same report received twice once', async () => {
    const batch = [stateRecord({ commit: 'c1', status: 'in_progress', at: minute(1) }), stateRecord({ commit: 'c1', at: minute(2) })];
    const first = await writer.write(batch);
    const second = await writer.write(batch);
    expect(first.transitions).toBe(2);
    expect(second.transitions).toBe(0);
    expect(await history()).toHaveLength(2);
    const descriptor = descriptorRecord({ version: '1.0.0', commit: 'c9', at: minute(0) });
    expect((await writer.write([descriptor])).assignments).toBe(1);
    expect((await writer.write([descriptor])).assignments).toBe(0);
    expect(await testDb.query('SELECT * FROM deployment_assignment')).toHaveLength(1);
  });

  it('records transitions only; a confirming report moves "last observed"', async () => {
    await writer.write([stateRecord({ commit: 'c1', at: minute(1) })]);
    await writer.write([stateRecord({ commit: 'c1', at: minute(5) })]);
    await writer.write([stateRecord({ commit: 'c2', status: 'in_progress', at: minute(6) })]);
    expect((await history()).map((row) => [row.commit, row.status])).toEqual([
      ['c1', 'success'],
      ['c2', 'in_progress'],
    ]);
    expect(await current()).toEqual({ commit: 'c2', status: 'in_progress', observed_at: minute(6), last_observed_at: minute(6) });
    await writer.write([stateRecord({ commit: 'c2', status: 'in_progress', at: minute(8) })]);
    expect((await current())?.last_observed_at).toEqual(minute(8));
    expect((await current())?.observed_at).toEqual(minute(6));
  });

  it('puts an older report into history without overwriting the newer current state', async () => {
    await writer.write([stateRecord({ commit: 'c2', at: minute(10) })]);
    await writer.write([stateRecord({ commit: 'c1', status: 'failure', at: minute(4) })]);
    expect(await current()).toMatchObject({ commit: 'c2', status: 'success', observed_at: minute(10) });
    expect((await history()).map((row) => row.commit)).toEqual(['c1', 'c2']);
    // Delivered again, the late report is still stored once.
    await writer.write([stateRecord({ commit: 'c1', status: 'failure', at: minute(4) })]);
    expect(await history()).toHaveLength(2);
  });

  it('creates unknown hosts and reconcilers, and keeps host type and last seen current', async () => {
    await writer.write([stateRecord({ host: 'edge-7', hostType: 'edge-device', reconciler: 'agent', type: 'custom', commit: 'c1', at: minute(1) })]);
    await writer.write([stateRecord({ host: 'edge-7', reconciler: 'agent', type: 'custom', commit: 'c1', at: minute(9) })]);
    expect(await testDb.query('SELECT name, type, last_seen_at FROM host')).toEqual([
      { name: 'edge-7', type: 'edge-device', last_seen_at: minute(9) },
    ]);
    // A host clock ahead of the hub never pushes "last seen" past the moment of receipt.
    await writer.write([stateRecord({ host: 'edge-7', reconciler: 'agent', type: 'custom', commit: 'c1', at: new Date(NOW.getTime() + 3_600_000) })]);
    expect((await testDb.query<{ last_seen_at: Date }>('SELECT last_seen_at FROM host'))[0]?.last_seen_at).toEqual(NOW);
    expect(await testDb.query('SELECT name, type FROM reconciler')).toEqual([{ name: 'agent', type: 'custom' }]);
  });

  it('moves a reconciler to the endpoint of its newest report, and revives a removed one', async () => {
    await writer.write([stateRecord({ commit: 'c1', at: minute(1) })]);
    await testDb.query(`UPDATE reconciler SET removed_at = $1`, [minute(3)]);
    await writer.write([stateRecord({ endpoint: `${ENDPOINT}-old`, commit: 'c0', at: minute(2) })]);
    expect(await testDb.query('SELECT removed_at FROM reconciler')).toEqual([{ removed_at: minute(3) }]);
    await writer.write([stateRecord({ endpoint: `${ENDPOINT}-v2`, commit: 'c5', at: minute(5) })]);
    expect(await testDb.query('SELECT m.endpoint, r.removed_at FROM reconciler r JOIN manifests_endpoint m ON m.id = r.manifests_endpoint_id')).toEqual([
      { endpoint: `${ENDPOINT}-v2`, removed_at: null },
    ]);
  });

  it('removes a reconciler from the current state, keeps its history, and takes it back on a newer report', async () => {
    await writer.write([stateRecord({ commit: 'c1', at: minute(1) })]);
    const removal = { kind: 'reconciler-removed', host: 'aks-dev-eus', reconciler: 'hello-world', removedAt: minute(5) } as const;
    // A removal older than the newest report is overtaken by it.
    expect((await writer.write([{ ...removal, removedAt: minute(0) }])).removed).toBe(0);
    expect(await current()).toBeDefined();
    expect((await writer.write([removal])).removed).toBe(1);
    expect(await current()).toBeUndefined();
    expect(await testDb.query('SELECT removed_at FROM reconciler')).toEqual([{ removed_at: minute(5) }]);
    expect(await history()).toHaveLength(1);
    // Removing an unknown reconciler is not an error.
    expect((await writer.write([{ ...removal, reconciler: 'never-seen' }])).removed).toBe(0);
    await writer.write([stateRecord({ commit: 'c2', at: minute(7) })]);
    expect(await current()).toMatchObject({ commit: 'c2' });
    expect(await testDb.query('SELECT removed_at FROM reconciler')).toEqual([{ removed_at: null }]);
    expect((await history()).map((row) => row.commit)).toEqual(['c1', 'c2']);
  });

  it('stores a report delivered again once after a removal and a late report restarted the current state', async () => {
    const warnings: string[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) });
    writer = new RecordWriter(database.db, log, { retryAfterSeconds: 1, now: () => NOW });
    await writer.write([stateRecord({ commit: 'c1', at: minute(1) }), stateRecord({ commit: 'c2', at: minute(3) })]);
    await writer.write([{ kind: 'reconciler-removed', host: 'aks-dev-eus', reconciler: 'hello-world', removedAt: minute(5) }]);
    // Older than the removal: a current state again, older than history already stored.
    await writer.write([stateRecord({ commit: 'c1', at: minute(2) })]);
    expect(await current()).toMatchObject({ commit: 'c1', last_observed_at: minute(2) });
    // Newer than that current state, and stored already.
    expect((await writer.write([stateRecord({ commit: 'c2', at: minute(3) })])).transitions).toBe(0);
    expect((await history()).map((row) => [row.commit, row.observed_at])).toEqual([
      ['c1', minute(1)],
      ['c1', minute(2)],
      ['c2', minute(3)],
    ]);
    // Known to be possible, so the write checked those rows from the start.
    expect(warnings).toEqual([]);
  });

  it('writes again checking every history row when a row it trusted to be new was stored already', async () => {
    const warnings: string[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) });
    writer = new RecordWriter(database.db, log, { retryAfterSeconds: 1, now: () => NOW });
    await writer.write([stateRecord({ commit: 'c1', at: minute(1) })]);
    // A row the write path never leaves: history newer than the current state of a live reconciler.
    await testDb.query(`INSERT INTO deployment_state_history (reconciler_id, manifests_endpoint_id, gitops_commit_id, status, observed_at)
                        SELECT reconciler_id, manifests_endpoint_id, 'c2', 'success', $1 FROM deployment_state`, [minute(4)]);
    const summary = await writer.write([stateRecord({ commit: 'c2', at: minute(4) }), stateRecord({ commit: 'c3', at: minute(6) })]);
    expect(summary.transitions).toBe(1);
    expect((await history()).map((row) => row.commit)).toEqual(['c1', 'c2', 'c3']);
    expect(await current()).toMatchObject({ commit: 'c3', last_observed_at: minute(6) });
    expect(warnings.map((line) => JSON.parse(line).msg)).toEqual([
      'a history row trusted to be new was stored already; writing again with every row checked',
    ]);
  });

  it('stores once a first report whose row history holds already, though it trusted it to be new', async () => {
    const warnings: string[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) });
    writer = new RecordWriter(database.db, log, { retryAfterSeconds: 1, now: () => NOW });
    await writer.write([stateRecord({ commit: 'c1', at: minute(1) })]);
    // Another row the write path never leaves: history of a live reconciler without a current state.
    // A reconciler with none is at its first contact, whose rows are trusted to be new.
    await testDb.query('DELETE FROM deployment_state');
    const summary = await writer.write([stateRecord({ commit: 'c1', at: minute(1) }), stateRecord({ commit: 'c2', at: minute(2) })]);
    expect(summary.transitions).toBe(1);
    expect((await history()).map((row) => row.commit)).toEqual(['c1', 'c2']);
    expect(await current()).toMatchObject({ commit: 'c2', last_observed_at: minute(2) });
    expect(warnings.map((line) => JSON.parse(line).msg)).toEqual([
      'a history row trusted to be new was stored already; writing again with every row checked',
    ]);
  });

  it('ranks the environments one write creates by their earliest record time (never later than receipt), then by position', async () => {
    // Random names in reverse name order: the ids (assigned in name order) cannot pass for the rank.
    const [w, x, y, z] = Array.from({ length: 4 }, () => `env-${randomUUID().slice(0, 8)}`).sort().reverse() as [string, string, string, string];
    const day = 86_400_000;
    const descriptor = (environment: string, at: Date) =>
      descriptorRecord({ environment, endpoint: `${ENDPOINT}-${environment}`, version: '1.0.0', commit: `c-${environment}-${at.getTime()}`, at });
    await writer.write([
      descriptor(x, minute(5)),
      // Clocks ahead of the hub count as the moment of receipt: y and z tie there, y first in the write.
      descriptor(y, new Date(NOW.getTime() + 2 * day)),
      descriptor(z, new Date(NOW.getTime() + day)),
      descriptor(w, minute(9)),
      descriptor(w, minute(1)),
    ]);
    const ranked = await testDb.query<{ name: string; first_seen_rank: number }>('SELECT name, first_seen_rank FROM environment ORDER BY id');
    expect(new Map(ranked.map((row) => [row.name, row.first_seen_rank]))).toEqual(
      new Map([
        [w, 0],
        [x, 1],
        [y, 2],
        [z, 3],
      ]),
    );
  });

  it('lets the newest assignment be the desired state, whatever the arrival order', async () => {
    await writer.write([descriptorRecord({ version: '0.0.2', commit: 'c2', at: minute(20) })]);
    await writer.write([descriptorRecord({ version: '0.0.1', commit: 'c1', at: minute(10) })]);
    const rows = await testDb.query(
      `SELECT v.version, a.gitops_commit_id AS commit FROM deployment_target t
         JOIN deployment_assignment a ON a.id = t.current_assignment_id JOIN workload_version v ON v.id = a.workload_version_id`,
    );
    expect(rows).toEqual([{ version: '0.0.2', commit: 'c2' }]);
    expect(await testDb.query('SELECT * FROM deployment_assignment')).toHaveLength(2);
  });

  it('takes the workload source a descriptor names, and keeps a version’s build facts once known', async () => {
    const path = `apps/${randomUUID().slice(0, 8)}`;
    const moved = descriptorRecord({ version: '0.0.2', commit: 'c2', at: minute(20) });
    await writer.write([descriptorRecord({ version: '0.0.1', commit: 'c1', at: minute(10) })]);
    await writer.write([{ ...moved, workload: { ...moved.workload, source: { repo: 'https://github.com/kaizentm/hello-world', branch: 'release', path } } }]);
    expect(await testDb.query('SELECT source_repo, source_branch, source_path FROM workload')).toEqual([
      { source_repo: 'https://github.com/kaizentm/hello-world', source_branch: 'release', source_path: path },
    ]);
    const buildTime = new Date(Date.UTC(2026, 10, 19, 23, 25, 5));
    const withFacts = descriptorRecord({ version: '0.0.1', commit: 'c3', at: minute(30) });
    await writer.write([{ ...withFacts, workloadVersion: { ...withFacts.workloadVersion, commit: 'ca9ee9d0ff9ec52b998fdcf64e128c84ddd0e661', buildTime } }]);
    await writer.write([descriptorRecord({ version: '0.0.1', commit: 'c4', at: minute(40) })]);
    expect(await testDb.query(`SELECT build_commit, build_time FROM workload_version WHERE version = '0.0.1'`)).toEqual([
      { build_commit: 'ca9ee9d0ff9ec52b998fdcf64e128c84ddd0e661', build_time: buildTime },
    ]);
  });

  it('keeps the whole history when reports arrive in order', async () => {
    const statuses = ['in_progress', 'success', 'success', 'failure', 'failure', 'in_progress', 'success'] as const;
    for (const [index, status] of statuses.entries()) {
      await writer.write([stateRecord({ commit: `c${Math.floor(index / 3)}`, status, at: minute(index) })]);
    }
    expect((await history()).map((row) => `${row.commit}:${row.status}`)).toEqual([
      'c0:in_progress',
      'c0:success',
      'c1:failure',
      'c1:in_progress',
      'c2:success',
    ]);
  });

  it('says it is writing from the start of a write until the gap after the last one under way, failed ones too', async () => {
    const idle = async () => {
      expect(writer.writingWithin(150)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(writer.writingWithin(150)).toBe(false);
    };
    expect(writer.writingWithin(150)).toBe(false);
    await writer.write([stateRecord({ host: 'aks-dev-wus', commit: 'c0', at: minute(0) })]);
    await idle();
    // The second write waits for its reconciler, which a session holds, until the first is done.
    const locker = lockingSession(testDb.url);
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`SELECT 1 FROM reconciler r JOIN host h ON h.id = r.host_id WHERE h.name = 'aks-dev-wus' FOR UPDATE OF r`);
      const second = writer.write([stateRecord({ host: 'aks-dev-wus', commit: 'c1', at: minute(1) })]);
      await writer.write([stateRecord({ host: 'aks-dev-eus', commit: 'c1', at: minute(1) })]);
      expect(writer.writingWithin(0)).toBe(true);
      await locker.query('COMMIT');
      await second;
    } finally {
      await locker.end();
    }
    expect(writer.writingWithin(0)).toBe(false);
    await idle();
    // A write the store refuses (a status the schema does not know: not the normalizer's output).
    const refused = writer.write([{ ...stateRecord({ host: 'aks-dev-eus', commit: 'c2', at: minute(2) }), status: 'sideways' as never }]);
    expect(writer.writingWithin(0)).toBe(true);
    await expect(refused).rejects.toThrow();
    expect(writer.writingWithin(0)).toBe(false);
    await idle();
  });

  it('takes concurrent, overlapping, out-of-order batches without deadlock or duplicates', async () => {
    const hosts = 6;
    const reconcilers = 8;
    const steps = 12;
    const reports: ReturnType<typeof stateRecord>[] = [];
    for (let h = 0; h < hosts; h += 1) {
      for (let r = 0; r < reconcilers; r += 1) {
        for (let s = 0; s < steps; s += 1) {
          reports.push(
            stateRecord({
              host: `host-${h}`,
              reconciler: `rec-${r}`,
              commit: `c${Math.floor(s / 4)}`,
              status: s % 4 === 3 ? 'success' : 'in_progress',
              at: minute(s),
            }),
          );
        }
      }
    }
    // Every report twice (a collector's retry), shuffled, cut into batches, written by 8 writers.
    const deliveries = [...reports, ...reports].sort(() => Math.random() - 0.5);
    const batches: (typeof deliveries)[] = [];
    for (let i = 0; i < deliveries.length; i += 37) batches.push(deliveries.slice(i, i + 37));
    const writers = Array.from({ length: 8 }, () => new RecordWriter(database.db, createLogger('silent'), { retryAfterSeconds: 1, now: () => NOW }));
    await Promise.all(
      writers.map(async (w, index) => {
        for (let b = index; b < batches.length; b += writers.length) await w.write(batches[b]!);
      }),
    );

    expect(await testDb.query('SELECT count(*)::int AS n FROM host')).toEqual([{ n: hosts }]);
    expect(await testDb.query('SELECT count(*)::int AS n FROM reconciler')).toEqual([{ n: hosts * reconcilers }]);
    const states = await testDb.query<{ commit: string; status: string; last: Date }>(
      'SELECT gitops_commit_id AS commit, status, last_observed_at AS last FROM deployment_state',
    );
    expect(states).toHaveLength(hosts * reconcilers);
    for (const state of states) expect(state).toEqual({ commit: 'c2', status: 'success', last: minute(steps - 1) });
    const duplicates = await testDb.query(
      `SELECT reconciler_id, observed_at FROM deployment_state_history GROUP BY 1, 2 HAVING count(*) > 1`,
    );
    expect(duplicates).toEqual([]);
    // Each reconciler's first report and final transition are always in its history.
    const ends = await testDb.query<{ first: Date; has_final: boolean }>(
      `SELECT min(observed_at) AS first, bool_or(gitops_commit_id = 'c2' AND status = 'success') AS has_final
         FROM deployment_state_history GROUP BY reconciler_id`,
    );
    expect(ends).toHaveLength(hosts * reconcilers);
    for (const end of ends) expect(end).toEqual({ first: minute(0), has_final: true });
  });
});
