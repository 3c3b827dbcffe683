import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { decodeCursor, historyReport } from '../../store/reports/history-report.ts';
import type { ApiV1Deps } from './api-deps.ts';
import { HistoryPage } from '../../answers/answer-schemas.ts';
import { cursorParam, errorResponses, jsonResponse, NameParam, sliceParams, TextParam, TimeParam } from './schemas.ts';
import { serialized } from './serialize.ts';


const history = createRoute({
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

export function historyRoutes(app: OpenAPIHono, deps: ApiV1Deps): void {
  app.openapi(history, async (c) => {
    const query = c.req.valid('query');
    const cursor = cursorParam(query.cursor, decodeCursor);
    const page = await historyReport(deps.db, {
      ...query,
      since: query.since === undefined ? undefined : new Date(query.since),
      until: query.until === undefined ? undefined : new Date(query.until),
      cursor,
    });
    return c.json(serialized(page), 200);
  });
}
