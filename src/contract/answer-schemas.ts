// The API's answers, in zod: the single definition of each shape. The routes validate and document
// them (OpenAPI); answer-types.ts derives the TypeScript types the web UI and clients read. This
// module imports nothing of the server (zod and the model's lists only), so the UI's type-check can
// follow it.
import { z } from '@hono/zod-openapi';
import { DEPLOYMENT_STATUSES, EFFECTIVE_STATUSES } from '../model/deployment-records.ts';

// Errors

export const ErrorSchema = z
  .object({ error: z.object({ code: z.string(), message: z.string() }) })
  .openapi('Error', { example: { error: { code: 'invalid_parameter', message: 'limit: must be at most 1000' } } });

// Counts, statuses, times

export const StatusCountsSchema = z
  .object({
    total: z.number().int(),
    succeeded: z.number().int(),
    failed: z.number().int(),
    inProgress: z.number().int(),
    stale: z.number().int().openapi({ description: 'Silent longer than the stale-after setting; never counted as success.' }),
  })
  .openapi('StatusCounts');

export const EffectiveStatusSchema = z.enum(EFFECTIVE_STATUSES).openapi('EffectiveStatus');
export const ReportedStatusSchema = z.enum(DEPLOYMENT_STATUSES).openapi('ReportedStatus');

export const ReconcilerTypeSchema = z.string().openapi({
  description: 'Which kind of reconciler: flux, argocd, arc, wo or custom',
  example: 'argocd',
});

export const Timestamp = z.string().openapi({ format: 'date-time', example: '2026-11-20T09:14:02.000Z' });

// Versions

export const DesiredVersionSchema = z
  .object({ version: z.string(), build: z.string(), commit: z.string(), assignedAt: Timestamp })
  .openapi('DesiredVersion');

export const DeployedVersionSchema = z
  .object({
    version: z.string().nullable().openapi({
      description:
        'The version that runs at the applied commit: assigned with it, or carried from the assignment it came after (a merge that did not change this target); null when the hub cannot tell',
    }),
    commit: z.string(),
    onDesired: z.boolean().openapi({ description: 'The commit belongs to the desired rollout: the desired commit, or one running the desired version' }),
    reconcilers: StatusCountsSchema,
  })
  .openapi('DeployedVersion');

// GET /environments, /environments/{environment}/state

export const EnvironmentSchema = z
  .object({
    name: z.string(),
    promotionRank: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'Its 1-based position in the configured promotion order (--environment-order); null when not listed there.' }),
    deploymentTargets: z.number().int(),
    hosts: z.number().int(),
    reconcilers: StatusCountsSchema,
    latestAssignment: z
      .object({ commit: z.string(), assignedAt: Timestamp })
      .nullable()
      .openapi({ description: 'The newest of its targets’ desired assignments: the last merge that changed what runs there, the commit a promotion check asks about' }),
  })
  .openapi('Environment');

export const TargetStateSchema = z
  .object({
    workspace: z.string(),
    application: z.string(),
    workload: z.string(),
    deploymentTarget: z.string(),
    environment: z.string(),
    manifestsEndpoint: z.string(),
    desired: DesiredVersionSchema.nullable(),
    deployed: z.array(DeployedVersionSchema),
    reconcilers: StatusCountsSchema,
  })
  .openapi('TargetState');

export const EnvironmentsAnswer = z.object({ items: z.array(EnvironmentSchema) });

export const EnvironmentStateAnswer = z.object({
  environment: z.string(),
  items: z.array(TargetStateSchema),
  nextCursor: z.string().nullable(),
  totals: z
    .object({ deploymentTargets: z.number().int(), reconcilers: StatusCountsSchema })
    .openapi({ description: 'The whole environment, over every page' }),
});

// GET /compare

const CellSchema = z
  .object({
    manifestsEndpoint: z.string(),
    desired: DesiredVersionSchema.nullable(),
    deployed: z.array(DeployedVersionSchema),
    reconcilers: StatusCountsSchema,
  })
  .nullable()
  .openapi('ComparedCell', { description: 'null where the workload has no such deployment target in that environment' });

export const ComparedSchema = z
  .object({
    workspace: z.string(),
    application: z.string(),
    workload: z.string(),
    deploymentTarget: z.string(),
    environments: z.record(z.string(), CellSchema),
    desiredDiffers: z.boolean(),
    deployedDiffers: z.boolean(),
  })
  .openapi('ComparedTarget');

export const CompareAnswer = z.object({ environments: z.array(z.string()), items: z.array(ComparedSchema), nextCursor: z.string().nullable() });

// GET /drift

export const DriftSchema = z
  .object({
    environment: z.string(),
    workspace: z.string(),
    application: z.string(),
    workload: z.string(),
    deploymentTarget: z.string(),
    host: z.string(),
    reconciler: z.string(),
    reconcilerType: ReconcilerTypeSchema,
    desiredVersion: z.string().nullable(),
    desiredCommit: z.string().nullable(),
    appliedCommit: z.string(),
    appliedVersion: z.string().nullable(),
    status: EffectiveStatusSchema,
    statusMessage: z.string(),
    reasons: z.array(z.enum(['not_on_desired_commit', 'failing', 'stale'])),
    driftingSince: Timestamp,
    driftingForSeconds: z.number().int(),
  })
  .openapi('Drift');

export const DriftTotalsSchema = z
  .object({
    drifting: z.number().int(),
    notOnDesiredCommit: z.number().int(),
    failing: z.number().int(),
    stale: z.number().int(),
  })
  .openapi('DriftTotals', { description: 'Every drifting reconciler (× target) of the environment or fleet, by reason — not only the page’s' });

export const DriftPage = z.object({ items: z.array(DriftSchema), nextCursor: z.string().nullable(), totals: DriftTotalsSchema });

// GET /history

export const HistoryItemSchema = z
  .object({
    observedAt: Timestamp,
    receivedAt: Timestamp,
    host: z.string(),
    reconciler: z.string(),
    reconcilerType: ReconcilerTypeSchema,
    manifestsEndpoint: z.string(),
    commit: z.string(),
    status: ReportedStatusSchema,
    statusMessage: z.string(),
    environment: z.string().nullable(),
    workspace: z.string().nullable(),
    application: z.string().nullable(),
    workload: z.string().nullable(),
    deploymentTarget: z.string().nullable(),
    version: z.string().nullable(),
  })
  .openapi('HistoryItem');

export const HistoryPage = z.object({ items: z.array(HistoryItemSchema), nextCursor: z.string().nullable() });

// GET /metrics/delivery

const Seconds = z.number().nullable();

export const DurationSummarySchema = z
  .object({
    count: z.number().int().openapi({ description: 'Rollouts that have this duration' }),
    medianSeconds: Seconds,
    p90Seconds: Seconds.openapi({ description: '90th percentile, interpolated' }),
  })
  .openapi('DurationSummary');

export const DeliveryRolloutSchema = z
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

export const DeliveryReportSchema = z
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

// GET /deployment-state (the rollout gates)

export const SubscriberSchema = z.object({
  host: z.string(),
  reconciler: z.string(),
  reconcilerType: ReconcilerTypeSchema,
  status: EffectiveStatusSchema,
  statusMessage: z.string(),
  appliedCommit: z.string(),
  observedAt: Timestamp,
  lastSeenAt: Timestamp,
  supersededBy: z.string().nullable().openapi({ description: 'The commit it applied, when that commit came after the one asked about' }),
});

const settledField = z.boolean().openapi({ description: 'At least one subscriber, and every subscriber succeeded or failed.' });

export const GateTargetSchema = StatusCountsSchema.extend({
  environment: z.string(),
  workspace: z.string(),
  application: z.string(),
  workload: z.string(),
  deploymentTarget: z.string(),
  manifestsEndpoint: z.string(),
  version: z.string().nullable().openapi({ description: 'The version the asked commit runs on this target (assigned with it, or carried from an earlier commit), if known' }),
  desiredVersion: z.string().nullable().openapi({ description: 'The target’s desired version now' }),
  desiredCommit: z.string().nullable(),
}).openapi('GateTarget');

const subscribersField = <T extends z.ZodType>(subscriber: T) =>
  z.array(subscriber).openapi({
    description:
      'The subscribers, those holding the rollout up first: failing, in progress, stale, then succeeded; by host and reconciler within each. ' +
      'Every one of them up to `limit` (default 1,000); beyond it a page, and `nextCursor` asks for the next. The counts are always every subscriber’s.',
  });

const nextCursorField = z
  .string()
  .nullable()
  .openapi({ description: 'Pass as `cursor` for the next page of subscribers; null on the last page' });

export const RolloutSchema = StatusCountsSchema.extend({
  manifestsEndpoint: z.string(),
  commit: z.string().openapi({ description: 'The full commit id (a short commit asked about, resolved)' }),
  settled: settledField,
  subscribers: subscribersField(SubscriberSchema),
  nextCursor: nextCursorField,
  targets: z.array(GateTargetSchema).openapi({ description: 'The deployment targets on the endpoint; counts are the endpoint’s' }),
}).openapi('RolloutState');

export const EnvironmentRolloutSchema = StatusCountsSchema.extend({
  environment: z.string(),
  commit: z.string().openapi({ description: 'The full commit id (a short commit asked about, resolved)' }),
  settled: settledField,
  subscribers: subscribersField(SubscriberSchema.extend({ manifestsEndpoint: z.string() })),
  nextCursor: nextCursorField,
  targets: z.array(GateTargetSchema).openapi({
    description:
      'The targets judged, those holding the rollout up first: with a failing subscriber, in progress, stale, without subscribers, ' +
      'then succeeded; by workspace, application, workload and name within each. Every one up to `limit`, beyond it a page ' +
      '(`nextTargetsCursor`). Counts are their endpoint’s subscribers',
  }),
  targetsTotal: z.number().int().openapi({ description: 'The targets judged, over every page' }),
  nextTargetsCursor: z.string().nullable().openapi({ description: 'Pass as `targetsCursor` for the next page of targets; null on the last page' }),
}).openapi('EnvironmentRolloutState');

/** The gate's answer: per manifests endpoint, or per environment. */
export const GateAnswer = z.union([RolloutSchema, EnvironmentRolloutSchema]);

// GET /hosts, /hosts/{host}/state

export const HostSchema = z
  .object({
    name: z.string(),
    type: z.string(),
    firstSeenAt: Timestamp,
    lastSeenAt: Timestamp,
    stale: z.boolean().openapi({ description: 'No report within the stale-after window: the host looks offline.' }),
    environments: z.array(z.string()).openapi({ description: 'The environments of its reconcilers’ targets, in promotion order.' }),
    reconcilerTypes: z.array(ReconcilerTypeSchema).openapi({ description: 'The kinds of reconciler it runs (flux, argocd, arc, wo, custom), in that order.' }),
    reconcilers: StatusCountsSchema,
    drifting: z.number().int().openapi({
      description:
        'How many of its reconcilers are not on their target’s desired rollout (neither the desired commit nor a commit running the desired version): `not_on_desired_commit` of /drift and the kalypso_drift view. Failing and silent reconcilers are counted in `reconcilers`.',
    }),
  })
  .openapi('Host');

export const HostTotalsSchema = z
  .object({
    hosts: z.number().int(),
    offline: z.number().int().openapi({ description: 'Hosts with no report within the stale-after window (`stale`)' }),
    failing: z.number().int().openapi({ description: 'Hosts with at least one reconciler whose status is `failure` (and not stale)' }),
    drifting: z.number().int().openapi({ description: 'Hosts with at least one reconciler off its target’s desired rollout (`drifting` > 0)' }),
  })
  .openapi('HostTotals', { description: 'Hosts counted over every page: `totals` those matching the filters, `fleet` every host' });

export const HostsPage = z.object({
  items: z.array(HostSchema),
  nextCursor: z.string().nullable(),
  totals: HostTotalsSchema,
  fleet: HostTotalsSchema,
  offset: z.number().int().openapi({ description: 'How many matching hosts come before this page' }),
});

export const ArgoCdDetailsSchema = z
  .object({
    sync: z.string().openapi({ description: 'status.sync.status: Synced, OutOfSync or Unknown', example: 'Synced' }),
    health: z.string().openapi({ description: 'status.health.status: Healthy, Progressing, Degraded, Suspended, Missing or Unknown', example: 'Healthy' }),
    operation: z
      .string()
      .nullable()
      .openapi({ description: 'The phase of the last operation (Running, Succeeded, Failed, Error, Terminating); null before the first', example: 'Succeeded' }),
  })
  .openapi('ArgoCdDetails', { description: 'An Argo CD Application’s own words, as of its newest report' });

export const HostReconcilerSchema = z
  .object({
    reconciler: z.string(),
    type: ReconcilerTypeSchema,
    manifestsEndpoint: z.string(),
    commit: z.string(),
    status: EffectiveStatusSchema,
    reportedStatus: ReportedStatusSchema,
    statusMessage: z.string(),
    deployedAt: Timestamp.openapi({ description: 'When the reconciler entered its current state.' }),
    lastSeenAt: Timestamp,
    argocd: ArgoCdDetailsSchema.nullable().openapi({ description: 'For an Argo CD Application (type argocd): its sync and health status; null for other kinds' }),
    deploymentTargets: z.array(
      z.object({
        workspace: z.string(),
        application: z.string(),
        workload: z.string(),
        deploymentTarget: z.string(),
        environment: z.string(),
        deployedVersion: z.string().nullable(),
        desiredVersion: z.string().nullable(),
        desiredCommit: z.string().nullable(),
      }),
    ),
  })
  .openapi('HostReconciler');

export const HostStateAnswer = z.object({
  name: z.string(),
  type: z.string(),
  firstSeenAt: Timestamp,
  lastSeenAt: Timestamp,
  stale: z.boolean(),
  reconcilers: z.array(HostReconcilerSchema),
});

// GET /notifications

export const ChannelSchema = z
  .object({
    name: z.string().openapi({ description: 'The entry’s name in the notifications file' }),
    kind: z.enum(['commit-status', 'webhook']),
    type: z.enum(['github', 'gitlab', 'azuredevops', 'webhook']),
    queued: z.number().int().openapi({ description: 'Messages waiting to be delivered or retried' }),
    failed: z.number().int().openapi({ description: 'Messages refused for good and kept (a 4xx other than a rate limit)' }),
    sentLastDay: z.number().int(),
    oldestQueuedAt: Timestamp.nullable(),
    pausedUntil: Timestamp.nullable().openapi({ description: 'A rate limit holds the channel until then' }),
    pauseReason: z.string().nullable(),
  })
  .openapi('NotificationChannel');

export const UndeliveredSchema = z
  .object({
    channel: z.string(),
    kind: z.enum(['status', 'event']),
    summary: z.string().openapi({ description: 'What it says: the context, state and description of a status; the type and id of an event' }),
    state: z.enum(['waiting', 'retrying', 'sending', 'failed']),
    attempts: z.number().int(),
    lastError: z.string().nullable().openapi({ description: 'The receiver’s answer to the last attempt' }),
    createdAt: Timestamp,
    notBefore: Timestamp,
    failedAt: Timestamp.nullable(),
  })
  .openapi('UndeliveredNotification');

export const NotificationsAnswer = z.object({
  publicUrl: z.string().nullable().openapi({ description: 'Where the links the hub sends out point (--public-url)' }),
  channels: z.array(ChannelSchema),
  items: z.array(UndeliveredSchema).openapi({ description: 'Undelivered messages, those refused for good first, then the newest' }),
});
