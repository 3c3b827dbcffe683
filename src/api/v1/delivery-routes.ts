import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { deliveryReport } from '../../store/reports/delivery-report.ts';
import { ApiError } from '../api-error.ts';
import { type ApiV1Deps, reportContext } from './api-deps.ts';
import { DeliveryReportSchema } from '../../answers/answer-schemas.ts';
import { durationParamMs, errorResponses, jsonResponse, NameParam, sliceParams, TextParam, TimeParam } from './schemas.ts';
import { serialized } from './serialize.ts';
import { API_TUNING } from '../api-settings.ts';

const DEFAULT_FIX_WINDOW = '1h';

const delivery = createRoute({
  method: 'get',
  path: '/metrics/delivery',
  summary: 'Delivery metrics (DORA and fleet convergence) of the rollouts assigned in a window, for any slice',
  description:
    'A rollout is one deployment assignment: a commit (version) assigned to a deployment target, followed by the ' +
    'reconcilers pulling its manifests endpoint until the next assignment of the target. Rollouts belong to the window ' +
    'in which they were assigned. Definitions and SQL: README "Delivery analytics".',
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

export function deliveryRoutes(app: OpenAPIHono, deps: ApiV1Deps): void {
  app.openapi(delivery, async (c) => {
    const query = c.req.valid('query');
    const until = query.until === undefined ? deps.clock() : new Date(query.until);
    const since = query.since === undefined ? new Date(until.getTime() - API_TUNING.deliveryWindowMs) : new Date(query.since);
    if (since >= until) throw new ApiError(400, 'invalid_parameter', 'since: must be before until');
    const fixWindowMs = durationParamMs('fixWindow', query.fixWindow ?? DEFAULT_FIX_WINDOW, API_TUNING.maxFixWindowMs, '1h or 30m');
    const report = await deliveryReport(deps.db, reportContext(deps), { ...query, since, until, fixWindowSeconds: fixWindowMs / 1_000 });
    return c.json(serialized(report), 200);
  });
}
