import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { compareReport } from '../../store/reports/compare-report.ts';
import { environmentExists } from '../../store/reports/environments-report.ts';
import { ApiError } from '../api-error.ts';
import { type ApiV1Deps, reportContext } from './api-deps.ts';
import { decodeTargetCursor, encodeTargetCursor } from '../../store/reports/target-deployments.ts';
import { CompareAnswer } from '../../answers/answer-schemas.ts';
import { cursorParam, errorResponses, jsonResponse, NameParam, notFoundResponse, TextParam } from './schemas.ts';
import { serialized } from './serialize.ts';
import { API_TUNING } from '../api-settings.ts';

const compare = createRoute({
  method: 'get',
  path: '/compare',
  summary: 'Environment discrepancies: desired and deployed versions side by side, for any environments',
  request: {
    query: z.object({
      environments: TextParam()
        .min(1)
        .max(API_TUNING.maxCompareEnvironments * 254)
        .openapi({ description: 'Comma-separated environment names, e.g. dev,qa,prod', example: 'dev,qa,prod' }),
      workspace: NameParam('workspace', 'query', 'Only this workspace').optional(),
      application: NameParam('application', 'query', 'Only this application').optional(),
      limit: z.coerce.number().int().min(1).max(1_000).default(200).openapi({ description: 'Rows per page' }),
      cursor: TextParam().max(2_000).optional().openapi({ description: 'nextCursor of the previous page' }),
    }),
  },
  responses: {
    ...jsonResponse(
      CompareAnswer,
      'One row per workload and target name, by workspace, application, workload and target',
    ),
    ...errorResponses,
    ...notFoundResponse,
  },
});

export function compareRoutes(app: OpenAPIHono, deps: ApiV1Deps): void {
  app.openapi(compare, async (c) => {
    const query = c.req.valid('query');
    const names = [...new Set(query.environments.split(',').map((name) => name.trim()))].filter((name) => name !== '');
    if (names.length < 2) throw new ApiError(400, 'invalid_parameter', 'environments: name at least two environments, comma-separated');
    if (names.length > API_TUNING.maxCompareEnvironments) {
      throw new ApiError(400, 'invalid_parameter', `environments: at most ${API_TUNING.maxCompareEnvironments} environments`);
    }
    for (const name of names) {
      if (!(await environmentExists(deps.db, name))) throw new ApiError(404, 'not_found', `environment ${JSON.stringify(name)} not found`);
    }
    const after = cursorParam(query.cursor, decodeTargetCursor);
    const page = await compareReport(deps.db, reportContext(deps), names, {
      limit: query.limit,
      after,
      workspace: query.workspace,
      application: query.application,
    });
    return c.json(
      {
        environments: names,
        items: serialized(page.items),
        nextCursor: page.next === null ? null : encodeTargetCursor(page.next),
      },
      200,
    );
  });
}
