// The projector's lag under a bench's ingest (--append-first, issue 40): how long the oldest
// acknowledged report not yet projected has waited, sampled while the clients send, and how long
// after the last acknowledgement nothing is pending. Against a checkout without pending_report (the
// design before issue 40) both are 0: every report is projected before it is acknowledged.
import pg from 'pg';

const SAMPLE_MS = 100;

/** The age of the oldest pending report in ms (0: none), or undefined when the table does not exist. */
async function oldestPendingMs(client: pg.Client): Promise<number | undefined> {
  try {
    const { rows } = await client.query<{ lag_ms: number }>(
      `SELECT (extract(epoch FROM clock_timestamp() - received_at) * 1000)::float8 AS lag_ms FROM pending_report ORDER BY id LIMIT 1`,
    );
    return rows[0]?.lag_ms ?? 0;
  } catch (error) {
    if ((error as { code?: string }).code === '42P01') return undefined;
    throw error;
  }
}

/** Samples the lag every 100 ms until stopped; then waits until nothing is pending. */
export async function sampleProjectionLag(databaseUrl: string): Promise<{ stop(): Promise<{ p99Ms: number; maxMs: number; caughtUpMs: number }> }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const samples: number[] = [];
  let stopped = false;
  const sampling = (async () => {
    while (!stopped) {
      const lag = await oldestPendingMs(client);
      if (lag === undefined) return;
      samples.push(lag);
      await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
    }
  })();
  return {
    async stop() {
      const lastAck = performance.now();
      stopped = true;
      await sampling;
      let caughtUpMs = 0;
      for (;;) {
        const lag = await oldestPendingMs(client);
        if (lag === undefined || lag === 0) break;
        samples.push(lag);
        caughtUpMs = performance.now() - lastAck;
        await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS / 4));
      }
      await client.end();
      const sorted = [...samples].sort((a, b) => a - b);
      const p99Ms = sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))]!;
      return { p99Ms: Math.round(p99Ms), maxMs: Math.round(sorted.at(-1) ?? 0), caughtUpMs: Math.round(caughtUpMs) };
    },
  };
}
