import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { decodeDriftCursor, driftReport } from '../../store/reports/drift-report.ts';
import { environmentExists } from '../../store/reports/environments-report.ts';
import { ApiError } from '../api-error.ts';
import { type ApiV1Deps, reportContext } from './api-deps.ts';
import { DriftPage } from '../../answers/answer-schemas.ts';
import { cursorParam, errorResponses, jsonResponse, NameParam, notFoundResponse, PageLimitParam, TextParam } from './schemas.ts';
import { serialized } from './serialize.ts';


const drift = createRoute({
  method: 'get',
  path: '/drift',
  summary: 'Reconcilers not on their target’s desired rollout, failing, or stale — longest first, a page at a time',
  request: {
    query: z.object({
      environment: NameParam('environment', 'query', 'Only this environment').optional(),
      limit: PageLimitParam(),
      cursor: TextParam().max(512).optional().openapi({ description: 'nextCursor of the previous page (opaque)' }),
    }),
  },
  responses: {
    ...jsonResponse(DriftPage, 'A page of drifting reconcilers'),
    ...errorResponses,
    ...notFoundResponse,
  },
});

export function driftRoutes(app: OpenAPIHono, deps: ApiV1Deps): void {
  app.openapi(drift, async (c) => {
    const { environment, limit, cursor } = c.req.valid('query');
    const after = cursorParam(cursor, decodeDriftCursor);
    if (environment !== undefined && !(await environmentExists(deps.db, environment))) {
      throw new ApiError(404, 'not_found', `environment ${JSON.stringify(environment)} not found`);
    }
    const page = await driftReport(deps.db, reportContext(deps), { environment, limit, after });
    return c.json(serialized(page), 200);
  });
}
