// The compare route: environments side by side.
import { createRoute, z } from '@hono/zod-openapi';
import { CompareAnswer } from '../answer-schemas.ts';
import { TextParam, NameParam, errorResponses, notFoundResponse, jsonResponse } from '../request-params.ts';

/** Environments one compare request may name. */
export const MAX_COMPARE_ENVIRONMENTS = 50;

export const compare = createRoute({
  method: 'get',
  path: '/compare',
  summary: 'Environment discrepancies: desired and deployed versions side by side, for any environments',
  request: {
    query: z.object({
      environments: TextParam()
        .min(1)
        .max(MAX_COMPARE_ENVIRONMENTS * 254)
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
