// The history route: state transitions, filtered and paged.
import { createRoute, z } from '@hono/zod-openapi';
import { HistoryPage } from '../answer-schemas.ts';
import { TextParam, NameParam, TimeParam, sliceParams, errorResponses, jsonResponse } from '../request-params.ts';

export const history = createRoute({
  method: 'get',
  path: '/history',
  summary: 'State transitions, newest first, filtered and paged',
  request: {
    query: z.object({
      ...sliceParams,
      reconciler: NameParam('reconciler', 'query', 'Reconciler').optional(),
      since: TimeParam('since', 'Only transitions observed at or after this time', '2026-11-20T00:00:00Z'),
      until: TimeParam('until', 'Only transitions observed before this time', '2026-11-20T00:00:00Z'),
      limit: z.coerce.number().int().min(1).max(1_000).default(100).openapi({ description: 'Transitions per page (a transition of an endpoint shared by several targets is one item per target)' }),
      cursor: TextParam().max(200).optional().openapi({ description: 'nextCursor of the previous page' }),
    }),
  },
  responses: {
    ...jsonResponse(HistoryPage, 'A page of transitions'),
    ...errorResponses,
  },
});
