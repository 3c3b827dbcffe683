// Liveness, readiness and metrics. Readiness means "can serve": migrations applied and the
// database answering now. /metrics says the same as gauges (kalypso_ready, kalypso_database_up), so
// that a PrometheusRule can alert on a replica that is not ready — a probe failing only takes the
// pod out of its Service, and nobody is told.
import { sql } from 'kysely';
import { Hono } from 'hono';
import type { Kysely } from 'kysely';
import { type HubMetrics, registerReadinessMetrics } from '../metrics/hub-metrics.ts';
import type { HubDatabase } from '../store/database-schema.ts';
import type { DatabaseStatus } from '../store/database-status.ts';
import { errorBody } from './api-error.ts';
import { API_TUNING } from './api-settings.ts';

export interface HealthDeps {
  readonly db: Kysely<HubDatabase>;
  readonly metrics: HubMetrics;
  /** Migrated yet, and if not, why not (the database unreachable, or migrating). */
  readonly database: DatabaseStatus;
  /** Why the hub cannot recover by itself and should be restarted, if so (/healthz fails). */
  readonly unhealthy?: () => string | undefined;
}

export function healthRoutes(deps: HealthDeps): Hono {
  const app = new Hono();
  registerReadinessMetrics(deps.metrics, async () => {
    const databaseUp = await databaseAnswers(deps.db);
    return { databaseUp, ready: databaseUp && deps.database.migrated };
  });
  app.get('/healthz', (c) => {
    const unhealthy = deps.unhealthy?.();
    return unhealthy === undefined ? c.json({ status: 'ok' }) : c.json(errorBody('unhealthy', unhealthy), 503);
  });
  app.get('/readyz', async (c) => {
    if (!deps.database.migrated) return c.json(errorBody('not_ready', deps.database.notReadyMessage()), 503);
    try {
      await withTimeout(sql`SELECT 1`.execute(deps.db), API_TUNING.readyQueryTimeoutMs);
      return c.json({ status: 'ready' });
    } catch (error) {
      return c.json(errorBody('database_unavailable', deps.database.unreachableMessage(error)), 503);
    }
  });
  app.get('/metrics', async (c) => {
    c.header('content-type', deps.metrics.registry.contentType);
    return c.body(await deps.metrics.registry.metrics());
  });
  return app;
}

/** Whether the database answers a trivial query within the readiness timeout. */
async function databaseAnswers(db: Kysely<HubDatabase>): Promise<boolean> {
  try {
    await withTimeout(sql`SELECT 1`.execute(db), API_TUNING.readyQueryTimeoutMs);
    return true;
  } catch {
    return false;
  }
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
