// The API's answers as TypeScript types, derived from their zod schemas (answer-schemas.ts): the
// store's reports return them, the routes serve them, the web UI reads them — no shape is written
// twice. Times are ISO 8601 strings, as they travel.
import type { z } from '@hono/zod-openapi';
import type * as answers from './answer-schemas.ts';

export type ApiErrorBody = z.infer<typeof answers.ErrorSchema>;

export type EffectiveStatus = z.infer<typeof answers.EffectiveStatusSchema>;
export type ReportedStatus = z.infer<typeof answers.ReportedStatusSchema>;
export type StatusCounts = z.infer<typeof answers.StatusCountsSchema>;
export type DesiredVersion = z.infer<typeof answers.DesiredVersionSchema>;
export type DeployedVersion = z.infer<typeof answers.DeployedVersionSchema>;

export type Environment = z.infer<typeof answers.EnvironmentSchema>;
export type TargetState = z.infer<typeof answers.TargetStateSchema>;
export type EnvironmentState = z.infer<typeof answers.EnvironmentStateAnswer>;
/** A deployment target named as people know it, and where its reconcilers pull from. */
export type TargetNames = Pick<TargetState, 'environment' | 'workspace' | 'application' | 'workload' | 'deploymentTarget' | 'manifestsEndpoint'>;

export type CompareRow = z.infer<typeof answers.ComparedSchema>;
/** One environment's cell of a compare row; null where the workload has no such target there. */
export type CompareCell = NonNullable<CompareRow['environments'][string]>;
export type CompareAnswer = z.infer<typeof answers.CompareAnswer>;

export type Drift = z.infer<typeof answers.DriftSchema>;
export type DriftTotals = z.infer<typeof answers.DriftTotalsSchema>;
export type DriftPage = z.infer<typeof answers.DriftPage>;

export type HistoryItem = z.infer<typeof answers.HistoryItemSchema>;
export type HistoryPage = z.infer<typeof answers.HistoryPage>;

export type DurationSummary = z.infer<typeof answers.DurationSummarySchema>;
export type DeliveryRollout = z.infer<typeof answers.DeliveryRolloutSchema>;
export type DeliveryRolloutStatus = DeliveryRollout['status'];
export type DeliveryReport = z.infer<typeof answers.DeliveryReportSchema>;
export type LaggingHost = DeliveryReport['laggingHosts'][number];
export type DeliveryTrendDay = DeliveryReport['trend'][number];

export type GateTarget = z.infer<typeof answers.GateTargetSchema>;
export type Subscriber = z.infer<typeof answers.SubscriberSchema>;
/** The gate asked about one manifests endpoint. */
export type EndpointRolloutState = z.infer<typeof answers.RolloutSchema>;
/** The gate asked about every deployment target of an environment. */
export type EnvironmentRolloutState = z.infer<typeof answers.EnvironmentRolloutSchema>;
export type EnvironmentSubscriber = EnvironmentRolloutState['subscribers'][number];
export type RolloutState = z.infer<typeof answers.GateAnswer>;

export type Host = z.infer<typeof answers.HostSchema>;
export type HostTotals = z.infer<typeof answers.HostTotalsSchema>;
export type HostsPage = z.infer<typeof answers.HostsPage>;
export type HostReconciler = z.infer<typeof answers.HostReconcilerSchema>;
export type ArgoCdDetails = z.infer<typeof answers.ArgoCdDetailsSchema>;
export type HostReconcilerTarget = HostReconciler['deploymentTargets'][number];
export type HostState = z.infer<typeof answers.HostStateAnswer>;

export type NotificationChannel = z.infer<typeof answers.ChannelSchema>;
export type UndeliveredNotification = z.infer<typeof answers.UndeliveredSchema>;
export type Notifications = z.infer<typeof answers.NotificationsAnswer>;
