// The hub's HTTP application on port 8080: health, metrics, and (as the API grows) /api/v1.
import { Hono } from 'hono';
import type { Logger } from '../log/logger.ts';
import { errorBody, handleApiError } from './api-error.ts';
import { type HealthDeps, healthRoutes } from './health-routes.ts';

export type ApiDeps = HealthDeps & { readonly log: Logger };

export function createApiApp(deps: ApiDeps): Hono {
  const app = new Hono();
  app.route('/', healthRoutes(deps));
  app.notFound((c) => c.json(errorBody('not_found', `no route for ${c.req.method} ${c.req.path}`), 404));
  app.onError(handleApiError(deps.log));
  return app;
}
