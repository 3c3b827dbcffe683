// Before migrations have run, the API answers a retryable 503 instead of failing on missing tables.
import { describe, expect, it } from 'vitest';
import { createApiApp } from '../../src/api/app.ts';
import { createLogger } from '../../src/log/logger.ts';
import { createHubMetrics } from '../../src/metrics/hub-metrics.ts';
import { connectDatabase } from '../../src/store/connect.ts';
import { DatabaseStatus } from '../../src/store/database-status.ts';
import { StateChanges } from '../../src/store/state-changes.ts';

describe('API before migrations', () => {
  it('answers 503 with Retry-After and the error shape, and /healthz still answers', async () => {
    const log = createLogger('silent');
    // Never connected to: the middleware answers before any query.
    const database = connectDatabase({ url: 'postgres://nobody@127.0.0.1:1/none', poolSize: 1, connectTimeoutMs: 100, applicationName: 'test' }, log);
    const app = createApiApp({
      db: database.db,
      log,
      metrics: createHubMetrics({ processMetrics: false }),
      database: new DatabaseStatus('postgres://nobody@127.0.0.1:1/none'),
      staleAfterMs: 900_000,
      notifications: { publicUrl: undefined, channels: [] },
      maxWaitMs: 60_000,
      stateChanges: new StateChanges(),
      shutdown: new AbortController().signal,
      clock: () => new Date(),
      apiTokens: undefined,
      tls: false,
    });
    const response = await app.request('/api/v1/environments');
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('5');
    expect(await response.json()).toEqual({ error: { code: 'not_ready', message: 'the database schema is being migrated; retry later' } });
    expect((await app.request('/healthz')).status).toBe(200);
    expect((await app.request('/readyz')).status).toBe(503);
    // The same, as the gauges the PrometheusRule alerts on.
    const metrics = await (await app.request('/metrics')).text();
    expect(metrics).toMatch(/^kalypso_ready 0$/m);
    expect(metrics).toMatch(/^kalypso_database_up 0$/m);
    await database.close();
  });
});
