import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { driftReport } from '../../store/reports/drift-report.ts';
import { environmentExists } from '../../store/reports/environments-report.ts';
import { ApiError } from '../api-error.ts';
import { type ApiV1Deps, reportContext } from './api-deps.ts';
import { EffectiveStatusSchema, errorResponses, jsonResponse, NameParam, notFoundResponse, Timestamp } from './schemas.ts';
import { serialized } from './serialize.ts';

const DriftSchema = z
  .object({
    environment: z.string(),
    workspace: z.string(),
    application: z.string(),
    workload: z.string(),
    deploymentTarget: z.string(),
    host: z.string(),
    reconciler: z.string(),
    desiredVersion: z.string().nullable(),
    desiredCommit: z.string().nullable(),
    appliedCommit: z.string(),
    appliedVersion: z.string().nullable(),
    status: EffectiveStatusSchema,
    statusMessage: z.string(),
    reasons: z.array(z.enum(['not_on_desired_commit', 'failing', 'stale'])),
    driftingSince: Timestamp,
    driftingForSeconds: z.number().int(),
  })
  .openapi('Drift');

const drift = createRoute({
  method: 'get',
  path: '/drift',
  summary: 'Reconcilers not on their target’s desired commit, failing, or stale — longest first',
  request: {
    query: z.object({ environment: NameParam('environment', 'query', 'Only this environment').optional() }),
  },
  responses: {
    ...jsonResponse(z.object({ items: z.array(DriftSchema) }), 'Drifting reconcilers'),
    ...errorResponses,
    ...notFoundResponse,
  },
});

export function driftRoutes(app: OpenAPIHono, deps: ApiV1Deps): void {
  app.openapi(drift, async (c) => {
    const { environment } = c.req.valid('query');
    if (environment !== undefined && !(await environmentExists(deps.db, environment))) {
      throw new ApiError(404, 'not_found', `environment ${JSON.stringify(environment)} not found`);
    }
    const items = await driftReport(deps.db, reportContext(deps), environment);
    return c.json({ items: serialized(items) }, 200);
  });
}
