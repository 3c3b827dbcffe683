import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { deliveryReport } from '../../store/reports/delivery-report.ts';
import { ApiError } from '../api-error.ts';
import { type ApiV1Deps, reportContext } from './api-deps.ts';
import { durationParamMs, errorResponses, jsonResponse, NameParam, sliceParams, TextParam, TimeParam, Timestamp } from './schemas.ts';
import { serialized } from './serialize.ts';

const DEFAULT_WINDOW_MS = 30 * 86_400_000;
const DEFAULT_FIX_WINDOW = '1h';
const MAX_FIX_WINDOW_MS = 30 * 86_400_000;

const Seconds = z.number().nullable();

const DurationSummarySchema = z
  .object({
    count: z.number().int().openapi({ description: 'Rollouts that have this duration' }),
    medianSeconds: Seconds,
    p90Seconds: Seconds.openapi({ description: '90th percentile, interpolated' }),
  })
  .openapi('DurationSummary');

const DeliveryRolloutSchema = z
  .object({
    environment: z.string(),
    workspace: z.string(),
    application: z.string(),
    workload: z.string(),
    deploymentTarget: z.string(),
    manifestsEndpoint: z.string().openapi({ description: 'Where its subscribers pull from: with commit, what the rollout gate asks about' }),
    version: z.string(),
    commit: z.string(),
    buildTime: Timestamp.nullable(),
    assignedAt: Timestamp,
    supersededAt: Timestamp.nullable(),
    status: z.enum(['succeeded', 'failed', 'superseded', 'in_progress', 'no_subscribers']).openapi({
      description:
        'A current rollout as the rollout gate judges its commit now — succeeded: every subscriber succeeded on a commit of the rollout; failed: a subscriber fails; ' +
        'in_progress: otherwise (in progress, stale, or on an older commit). A superseded one by its history — succeeded: converged; failed: a subscriber reported failure ' +
        'and it never converged; superseded: replaced before it converged',
    }),
    current: z.boolean().openapi({ description: 'Not superseded: status and subscriber counts are as of now' }),
    regressedOn: z
      .array(z.string())
      .openapi({ description: 'A current rollout that had converged: the hosts where it no longer succeeds (failing, stale, or moved to another version)' }),
    changeFailure: z.boolean(),
    subscribers: z.number().int(),
    succeeded: z.number().int(),
    failed: z.number().int(),
    leadTimeFirstHostSeconds: Seconds,
    leadTimeLastHostSeconds: Seconds,
    convergence50Seconds: Seconds,
    convergence90Seconds: Seconds,
    convergence100Seconds: Seconds,
    restoreSeconds: Seconds,
    laggingHosts: z.array(z.string()),
  })
  .openapi('DeliveryRollout');

const DeliveryReportSchema = z
  .object({
    window: z.object({ since: Timestamp, until: Timestamp, days: z.number() }),
    fixWindowSeconds: z.number(),
    rollouts: z.object({
      total: z.number().int().openapi({ description: 'Rollouts with at least one subscriber' }),
      succeeded: z.number().int(),
      failed: z.number().int(),
      superseded: z.number().int(),
      inProgress: z.number().int(),
      withoutSubscribers: z.number().int().openapi({ description: 'Assignments no reconciler pulls; not counted anywhere else' }),
    }),
    deploymentFrequency: z.object({ successfulRollouts: z.number().int(), perDay: z.number() }),
    leadTime: z.object({
      firstHost: DurationSummarySchema.openapi({ description: 'Build time → first subscriber succeeded' }),
      lastHost: DurationSummarySchema.openapi({ description: 'Build time → last subscriber succeeded' }),
      withoutBuildTime: z.number().int(),
    }),
    convergence: z.object({ to50Percent: DurationSummarySchema, to90Percent: DurationSummarySchema, to100Percent: DurationSummarySchema }),
    changeFailureRate: z.object({
      judged: z.number().int().openapi({ description: 'Rollouts that ended: converged, failed or superseded' }),
      failures: z.number().int(),
      withFailureReports: z.number().int(),
      supersededWithinFixWindow: z.number().int(),
      rate: z.number().nullable(),
    }),
    timeToRestore: DurationSummarySchema.extend({ failures: z.number().int(), notRestored: z.number().int() }),
    laggingHosts: z.array(
      z.object({
        host: z.string(),
        lagged: z.number().int(),
        notConverged: z.number().int(),
        medianBehindSeconds: Seconds,
        maxBehindSeconds: Seconds,
      }),
    ),
    trend: z.array(
      z.object({
        day: z.string().openapi({ description: 'UTC day the rollouts were assigned', example: '2026-11-20' }),
        rollouts: z.number().int(),
        successful: z.number().int(),
        judged: z.number().int(),
        changeFailures: z.number().int(),
        changeFailureRate: z.number().nullable(),
        leadTimeMedianSeconds: Seconds,
        convergenceMedianSeconds: Seconds,
      }),
    ),
    recentRollouts: z.array(DeliveryRolloutSchema),
  })
  .openapi('DeliveryReport');

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
    const since = query.since === undefined ? new Date(until.getTime() - DEFAULT_WINDOW_MS) : new Date(query.since);
    if (since >= until) throw new ApiError(400, 'invalid_parameter', 'since: must be before until');
    const fixWindowMs = durationParamMs('fixWindow', query.fixWindow ?? DEFAULT_FIX_WINDOW, MAX_FIX_WINDOW_MS, '1h or 30m');
    const report = await deliveryReport(deps.db, reportContext(deps), { ...query, since, until, fixWindowSeconds: fixWindowMs / 1_000 });
    return c.json(serialized(report), 200);
  });
}
