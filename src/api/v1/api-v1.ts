// /api/v1: the query API. Every route validates its parameters with the same zod schemas that
// generate the OpenAPI 3.1 document served at /api/v1/openapi.json.
import { OpenAPIHono } from '@hono/zod-openapi';
import { errorBody } from '../api-error.ts';
import type { ApiV1Deps } from './api-deps.ts';
import { compareRoutes } from './compare-routes.ts';
import { deliveryRoutes } from './delivery-routes.ts';
import { deploymentStateRoutes } from './deployment-state-routes.ts';
import { driftRoutes } from './drift-routes.ts';
import { environmentsRoutes } from './environments-routes.ts';
import { historyRoutes } from './history-routes.ts';
import { hostsRoutes } from './hosts-routes.ts';
import { notificationsRoutes } from './notifications-routes.ts';

export function createApiV1(deps: ApiV1Deps): OpenAPIHono {
  const app = new OpenAPIHono({
    // A bad parameter answers 400 with the parameter's name, in the API's one error shape.
    defaultHook: (result, c) => {
      if (result.success) return undefined;
      const issue = result.error.issues[0];
      const name = issue?.path.join('.') || result.target;
      return c.json(errorBody('invalid_parameter', `${name}: ${issue?.message ?? 'invalid'}`), 400);
    },
  });
  environmentsRoutes(app, deps);
  hostsRoutes(app, deps);
  historyRoutes(app, deps);
  compareRoutes(app, deps);
  driftRoutes(app, deps);
  deploymentStateRoutes(app, deps);
  deliveryRoutes(app, deps);
  notificationsRoutes(app, deps);
  app.doc31('/openapi.json', {
    openapi: '3.1.0',
    info: {
      title: 'Kalypso Observability Hub API',
      version: '1',
      description:
        'What is deployed where: desired state (deployment descriptors) and real state (reconciler reports), ' +
        'correlated by manifests endpoint and GitOps commit. Errors are `{error: {code, message}}`: 400 names the bad ' +
        'parameter, 404 an unknown name, 503 an unreachable database. A reconciler is stale when its last report is ' +
        'older than the stale-after setting; stale never counts as success.',
    },
    servers: [{ url: '/api/v1' }],
  });
  return app;
}
