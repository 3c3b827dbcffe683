// The hub's HTTP application on port 8080: health, metrics, the /api/v1 query API and its docs,
// and the web UI.
import { Hono } from 'hono';
import type { Logger } from '../log/logger.ts';
import type { HubMetrics } from '../metrics/hub-metrics.ts';
import { bearerAuth } from '../security/bearer-auth.ts';
import { projectionCurrent } from '../store/projector.ts';
import { RETRY_LATER_SECONDS } from '../store/retry-policy.ts';
import { errorBody, handleApiError } from './api-error.ts';
import { apiDocsRoutes } from './api-docs.ts';
import { type HealthDeps, healthRoutes } from './health-routes.ts';
import type { ApiV1Deps } from './v1/api-deps.ts';
import { createApiV1 } from './v1/api-v1.ts';
import { uiNotFound, uiRoutes } from '../ui/ui-routes.ts';

export type ApiDeps = HealthDeps &
  ApiV1Deps & {
    readonly log: Logger;
    readonly metrics: HubMetrics;
    /** When set, /api/v1 answers only requests bearing one of these tokens. */
    readonly apiTokens: readonly string[] | undefined;
  };

// Describes the API, holds no data: the browsable reference must load it without a token.
const OPEN_API_DOCUMENT = '/api/v1/openapi.json';

export function createApiApp(deps: ApiDeps): Hono {
  // Not strict: `/api/docs/` and `/api/docs` are the same page.
  const app = new Hono({ strict: false });
  app.use(async (c, next) => {
    const stop = deps.metrics.httpRequestSeconds.startTimer({ method: c.req.method });
    await next();
    // The route pattern, not the path: label values stay few.
    stop({ route: c.req.routePath, status: String(c.res.status) });
  });
  app.route('/', healthRoutes(deps));
  const tokens = deps.apiTokens;
  if (tokens !== undefined) {
    app.use(
      '/api/v1/*',
      bearerAuth({
        tokens,
        exempt: (c) => c.req.path === OPEN_API_DOCUMENT,
        refuse: (c) => {
          c.header('www-authenticate', 'Bearer realm="kalypso-hub"');
          return c.json(errorBody('unauthorized', 'missing or wrong bearer token: send authorization: Bearer <token>'), 401);
        },
      }),
    );
  }
  // Until the schema is migrated the reports have no tables to read: say why, as a retryable 503.
  app.use('/api/v1/*', async (c, next) => {
    if (!deps.database.migrated) {
      c.header('retry-after', String(RETRY_LATER_SECONDS));
      return c.json(errorBody('not_ready', deps.database.notReadyMessage()), 503);
    }
    // Reports acknowledged but not yet projected (--append-first) are folded in before any answer:
    // whoever reported and then asks gets their own writes. One index probe when none are pending.
    await projectionCurrent(deps.db);
    await next();
    return undefined;
  });
  app.route('/api/v1', createApiV1(deps));
  app.route('/api/docs', apiDocsRoutes());
  app.route('/', uiRoutes());
  app.notFound((c) => uiNotFound(c) ?? c.json(errorBody('not_found', `no route for ${c.req.method} ${c.req.path}`), 404));
  app.onError(handleApiError(deps.log, deps.database));
  return app;
}
