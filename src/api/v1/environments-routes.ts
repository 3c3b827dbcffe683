import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { environmentExists, environmentsReport } from '../../store/reports/environments-report.ts';
import { environmentStateReport } from '../../store/reports/environment-state-report.ts';
import { decodeTargetCursor, encodeTargetCursor } from '../../store/reports/target-deployments.ts';
import { ApiError } from '../api-error.ts';
import { type ApiV1Deps, reportContext } from './api-deps.ts';
import { EnvironmentsAnswer, EnvironmentStateAnswer } from '../../answers/answer-schemas.ts';
import { cursorParam, errorResponses, jsonResponse, NameParam, notFoundResponse, PageLimitParam, TextParam } from './schemas.ts';
import { serialized } from './serialize.ts';



const listEnvironments = createRoute({
  method: 'get',
  path: '/environments',
  summary: 'Environments in promotion order, with targets, hosts and reconcilers by status',
  description:
    'Promotion order: the environments named by --environment-order first, in that order; the others after them, in the order the hub first saw them.',
  responses: { ...jsonResponse(EnvironmentsAnswer, 'Environments'), ...errorResponses },
});

const environmentState = createRoute({
  method: 'get',
  path: '/environments/{environment}/state',
  summary: 'Environment state: per deployment target, desired and deployed versions',
  request: {
    params: z.object({ environment: NameParam('environment', 'path', 'Environment name') }),
    query: z.object({
      limit: PageLimitParam(),
      cursor: TextParam().max(2_000).optional().openapi({ description: 'nextCursor of the previous page (opaque)' }),
    }),
  },
  responses: {
    ...jsonResponse(EnvironmentStateAnswer, 'A page of the deployment targets of the environment (by workspace, application, workload, target)'),
    ...errorResponses,
    ...notFoundResponse,
  },
});

export function environmentsRoutes(app: OpenAPIHono, deps: ApiV1Deps): void {
  app.openapi(listEnvironments, async (c) => {
    const items = await environmentsReport(deps.db, reportContext(deps));
    return c.json({ items }, 200);
  });

  app.openapi(environmentState, async (c) => {
    const { environment } = c.req.valid('param');
    const { limit, cursor } = c.req.valid('query');
    const after = cursorParam(cursor, decodeTargetCursor);
    if (!(await environmentExists(deps.db, environment))) {
      throw new ApiError(404, 'not_found', `environment ${JSON.stringify(environment)} not found`);
    }
    const page = await environmentStateReport(deps.db, reportContext(deps), environment, { limit, after });
    return c.json(
      { environment, items: serialized(page.items), nextCursor: page.next === null ? null : encodeTargetCursor(page.next), totals: page.totals },
      200,
    );
  });
}
