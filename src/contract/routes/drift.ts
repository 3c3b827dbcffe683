// The drift route: reconcilers not where they should be.
import { createRoute, z } from '@hono/zod-openapi';
import { DriftPage } from '../answer-schemas.ts';
import { TextParam, NameParam, PageLimitParam, errorResponses, notFoundResponse, jsonResponse } from '../request-params.ts';

export const drift = createRoute({
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
