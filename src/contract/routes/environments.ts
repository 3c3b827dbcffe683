// The environments routes: the list in promotion order, and one environment's state.
import { createRoute, z } from '@hono/zod-openapi';
import { EnvironmentStateAnswer, EnvironmentsAnswer } from '../answer-schemas.ts';
import { TextParam, NameParam, PageLimitParam, errorResponses, notFoundResponse, jsonResponse } from '../request-params.ts';

export const listEnvironments = createRoute({
  method: 'get',
  path: '/environments',
  summary: 'Environments in promotion order, with targets, hosts and reconcilers by status',
  description:
    'Promotion order: the environments named by --environment-order first, in that order; the others after them, in the order the hub first saw them.',
  responses: { ...jsonResponse(EnvironmentsAnswer, 'Environments'), ...errorResponses },
});

export const environmentState = createRoute({
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
