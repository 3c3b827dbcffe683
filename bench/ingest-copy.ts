// The database's own limit, measured in the same run as the hub and the way an operator would
// measure it: the history rows the hub wrote for one workload, exported as psql's `\copy … TO`
// writes them (text format), loaded with `\copy … FROM` (COPY FROM STDIN, text) into a fresh clone
// of the history table — same columns, defaults and indexes — in one stream, three times (each into
// a fresh clone): the median is the baseline, since one load of a second or two moves with this
// shared machine by up to a half. The hub does strictly more per record (it also keeps the
// reconciler's current state, the hosts and the summaries), so hub/COPY is a ceiling the hub can
// approach but not reach.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { progress } from './bench-report.ts';

/** Loads of the same rows; the median rate is the baseline. */
const LOADS = 3;

export interface CopyResult {
  readonly rows: number;
  /** The median of the loads. */
  readonly rowsPerSecond: number;
  /** Each load's rate. */
  readonly loads: readonly number[];
  /** Indexes on the clone (the history table's, so that COPY maintains as many as the hub does). */
  readonly indexes: number;
}

const COLUMNS = 'reconciler_id, manifests_endpoint_id, gitops_commit_id, status, status_message, observed_at, received_at';

/** `hostPrefix`: the run's hosts (the workload names them `bench-<run>-host-<n>`). */
export async function benchCopyBaseline(databaseUrl: string, hostPrefix: string): Promise<CopyResult> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const ofRun = `reconciler_id IN (SELECT r.id FROM reconciler r JOIN host ON host.id = r.host_id WHERE host.name LIKE '${hostPrefix}%')`;
    const chunks: Buffer[] = [];
    const out = client.query(copyTo(`COPY (SELECT ${COLUMNS} FROM deployment_state_history WHERE ${ofRun}) TO STDOUT`));
    for await (const chunk of out) chunks.push(chunk as Buffer);
    const loads: number[] = [];
    let rows = 0;
    let indexes = 0;
    for (let load = 1; load <= LOADS; load += 1) {
      await client.query('DROP TABLE IF EXISTS bench_history_clone');
      // A plain table (not partitioned: the rows of one run fall into one month's partition anyway).
      await client.query('CREATE TABLE bench_history_clone (LIKE deployment_state_history INCLUDING ALL)');
      indexes = (await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_indexes WHERE tablename = 'bench_history_clone'`)).rows[0]!.n;
      await client.query('CHECKPOINT');
      progress(`COPY baseline, load ${load}/${LOADS}: ${chunks.reduce((sum, chunk) => sum + chunk.length, 0)} bytes of text rows into a clone`);
      const began = performance.now();
      const copied = client.query(copyFrom(`COPY bench_history_clone (${COLUMNS}) FROM STDIN`));
      await pipeline(Readable.from(chunks), copied);
      loads.push(Math.round(copied.rowCount / ((performance.now() - began) / 1_000)));
      rows = copied.rowCount;
      await client.query('DROP TABLE bench_history_clone');
    }
    const median = [...loads].sort((a, b) => a - b)[Math.floor(LOADS / 2)]!;
    return { rows, rowsPerSecond: median, loads, indexes };
  } finally {
    await client.end();
  }
}

/** Every record sent is stored exactly once: the run's history rows, counted. */
export async function storedRows(databaseUrl: string, hostPrefix: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM deployment_state_history
        WHERE reconciler_id IN (SELECT r.id FROM reconciler r JOIN host ON host.id = r.host_id WHERE host.name LIKE $1)`,
      [`${hostPrefix}%`],
    );
    return rows[0]!.n;
  } finally {
    await client.end();
  }
}
