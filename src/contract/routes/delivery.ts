// The delivery route: DORA metrics and fleet convergence over a window and a slice.
import { createRoute, z } from '@hono/zod-openapi';
import { DeliveryReportSchema } from '../answer-schemas.ts';
import { TextParam, NameParam, TimeParam, sliceParams, errorResponses, jsonResponse } from '../request-params.ts';

export const DEFAULT_FIX_WINDOW = '1h';

export const delivery = createRoute({
  method: 'get',
  path: '/metrics/delivery',
  summary: 'Delivery metrics (DORA and fleet convergence) of the rollouts assigned in a window, for any slice',
  description:
    'A rollout is one deployment assignment: a commit (version) assigned to a deployment target, followed by the ' +
    'reconcilers pulling its manifests endpoint until the next assignment of the target. Rollouts belong to the window ' +
    'in which they were assigned. Definitions and SQL: docs/delivery-analytics.md.',
  request: {
    query: z.object({
      since: TimeParam('since', 'Rollouts assigned at or after this time (default: 30 days before until)', '2026-11-01T00:00:00Z'),
      until: TimeParam('until', 'Rollouts assigned before this time (default: now)', '2026-11-01T00:00:00Z'),
      ...sliceParams,
      host: NameParam('host', 'query', 'Host: the rollouts of the endpoints its reconcilers pull').optional(),
      fixWindow: TextParam()
        .max(32)
        .optional()
        .openapi({ description: `A rollout superseded within this duration of its assignment counts as a change failure (default ${DEFAULT_FIX_WINDOW}; 0 disables)`, example: '1h' }),
      limit: z.coerce.number().int().min(0).max(500).default(50).openapi({ description: 'How many of the newest rollouts to list' }),
    }),
  },
  responses: {
    ...jsonResponse(DeliveryReportSchema, 'Delivery metrics'),
    ...errorResponses,
  },
});
