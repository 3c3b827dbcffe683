// The database's own limit, measured in the same run as the hub: the history rows the hub wrote
// for one workload are read out, deleted (and vacuumed away), and written back with COPY into the
// same table, with the same indexes, in one stream. The hub does strictly more per record (it
// also updates the reconciler's current state), so hub/COPY is a ceiling the hub can approach
// but not reach.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { progress } from './bench-report.ts';

export interface CopyResult {
  readonly rows: number;
  readonly rowsPerSecond: number;
}

const COLUMNS = 'reconciler_id, manifests_endpoint_id, gitops_commit_id, status, status_message, observed_at, received_at';

export async function benchCopyBaseline(databaseUrl: string, runId: number): Promise<CopyResult> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const ofRun = `reconciler_id IN (SELECT r.id FROM reconciler r JOIN host ON host.id = r.host_id WHERE host.name LIKE 'bench-${runId}-host-%')`;
    const chunks: Buffer[] = [];
    const out = client.query(copyTo(`COPY (SELECT ${COLUMNS} FROM deployment_state_history WHERE ${ofRun}) TO STDOUT (FORMAT binary)`));
    for await (const chunk of out) chunks.push(chunk as Buffer);
    const { rowCount } = await client.query(`DELETE FROM deployment_state_history WHERE ${ofRun}`);
    await client.query('VACUUM ANALYZE deployment_state_history');
    progress(`COPY baseline: ${rowCount ?? 0} history rows read out, writing them back`);

    const began = performance.now();
    const copied = client.query(copyFrom(`COPY deployment_state_history (${COLUMNS}) FROM STDIN (FORMAT binary)`));
    await pipeline(Readable.from(chunks), copied);
    const seconds = (performance.now() - began) / 1_000;
    if (copied.rowCount !== rowCount) throw new Error(`COPY wrote ${copied.rowCount} rows, expected ${rowCount ?? 0}`);
    return { rows: copied.rowCount, rowsPerSecond: Math.round(copied.rowCount / seconds) };
  } finally {
    await client.end();
  }
}
