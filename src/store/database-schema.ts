// Kysely table types. The schema itself lives only in the numbered migrations under schema/.
import type { ColumnType, Generated, GeneratedAlways } from 'kysely';
import type { DeploymentStatus } from '../model/deployment-records.ts';

type Id = Generated<number>;
type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type Timestamp = ColumnType<Date, Date | string, Date | string>;
type DefaultedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface WorkspaceTable {
  id: Id;
  name: string;
  created_at: CreatedAt;
}

export interface ApplicationTable {
  id: Id;
  workspace_id: number;
  name: string;
  created_at: CreatedAt;
}

export interface WorkloadTable {
  id: Id;
  application_id: number;
  name: string;
  source_repo: string | null;
  source_branch: string | null;
  source_path: string | null;
  created_at: CreatedAt;
}

export interface EnvironmentTable {
  id: Id;
  name: string;
  /** Among the environments its creating write named: by earliest record time, then position (schema/0009). */
  first_seen_rank: Generated<number>;
  created_at: CreatedAt;
}

export interface ManifestsEndpointTable {
  id: Id;
  endpoint: string;
  storage_type: Generated<string>;
  /** `repo/branch`, when a source named them apart (schema/0010). */
  branch: string | null;
  /** The repository, when a source named it apart: where commit statuses go (schema/0024). */
  repo: string | null;
  created_at: CreatedAt;
}

export interface DeploymentTargetTable {
  id: Id;
  workload_id: number;
  environment_id: number;
  name: string;
  manifests_endpoint_id: number;
  current_assignment_id: number | null;
  created_at: CreatedAt;
  updated_at: DefaultedTimestamp;
}

export interface WorkloadVersionTable {
  id: Id;
  workload_id: number;
  version: string;
  build: Generated<string>;
  build_commit: string | null;
  build_time: Date | null;
  created_at: CreatedAt;
}

export interface DeploymentAssignmentTable {
  id: Id;
  deployment_target_id: number;
  workload_version_id: number;
  gitops_commit_id: string;
  assigned_at: Timestamp;
  received_at: DefaultedTimestamp;
  /** The first assignment of its rollout: consecutive assignments of one version (schema/0010). */
  rollout_id: number | null;
}

export interface EndpointCommitTable {
  manifests_endpoint_id: number;
  gitops_commit_id: string;
  first_seen_at: Timestamp;
}

export interface CommitSuccessionTable {
  manifests_endpoint_id: number;
  from_commit: string;
  to_commit: string;
  first_seen_at: Timestamp;
}

export interface TargetCommitTable {
  deployment_target_id: number;
  gitops_commit_id: string;
  /** The assignment whose version runs at the commit: the target's own, or carried from an earlier one. */
  assignment_id: number;
  carried: boolean;
}

export interface HostTable {
  id: Id;
  name: string;
  type: Generated<string>;
  first_seen_at: DefaultedTimestamp;
  last_seen_at: DefaultedTimestamp;
  /** The name in natural order (aks-dev-2 before aks-dev-10), computed by PostgreSQL (schema/0011). */
  name_sort_key: GeneratedAlways<string>;
}

export interface ReconcilerTable {
  id: Id;
  host_id: number;
  name: string;
  type: string;
  manifests_endpoint_id: number;
  first_seen_at: DefaultedTimestamp;
  removed_at: Date | null;
  reported_by: string | null;
}

export interface DeploymentStateTable {
  reconciler_id: number;
  host_id: number;
  manifests_endpoint_id: number;
  gitops_commit_id: string;
  status: DeploymentStatus;
  status_message: Generated<string>;
  observed_at: Timestamp;
  last_observed_at: Timestamp;
  last_received_at: DefaultedTimestamp;
  last_seen_at: ColumnType<Date, never, never>;
  /** ReconcilerDetails (model/deployment-records.ts) of the newest report, or null (schema/0025). */
  details: unknown;
}

export interface DeploymentStateHistoryTable {
  id: Id;
  reconciler_id: number;
  manifests_endpoint_id: number;
  gitops_commit_id: string;
  status: DeploymentStatus;
  status_message: Generated<string>;
  observed_at: Timestamp;
  received_at: DefaultedTimestamp;
}

export interface FluxObjectTable {
  cluster: string;
  kind: 'Kustomization' | 'GitRepository';
  namespace: string;
  name: string;
  /** null: a tombstone (the object was deleted). */
  facts: unknown;
  observed_at: Timestamp;
}

export interface HubDatabase {
  workspace: WorkspaceTable;
  application: ApplicationTable;
  workload: WorkloadTable;
  environment: EnvironmentTable;
  manifests_endpoint: ManifestsEndpointTable;
  deployment_target: DeploymentTargetTable;
  workload_version: WorkloadVersionTable;
  deployment_assignment: DeploymentAssignmentTable;
  endpoint_commit: EndpointCommitTable;
  commit_succession: CommitSuccessionTable;
  target_commit: TargetCommitTable;
  host: HostTable;
  reconciler: ReconcilerTable;
  deployment_state: DeploymentStateTable;
  deployment_state_history: DeploymentStateHistoryTable;
  flux_object: FluxObjectTable;
}

/**
 * Tables read and written only by hand-written SQL (summaries, queues, settings kept up by the
 * database's own functions): test/store/database-schema.test.ts holds every other table to its type.
 */
export const TABLES_WITHOUT_TYPES: readonly string[] = [
  // Kysely's own.
  'kysely_migration',
  'kysely_migration_lock',
  // Read by the reporting views and written by the database's functions (schema/0004, 0008, 0012).
  'drift_item',
  'endpoint_status_count',
  'host_summary',
  'hub_settings',
  'rollout',
  'rollout_laggard',
  'rollout_refresh_queue',
  // Counts of now per current rollout, kept by both refreshes, read by kalypso_current_rollouts (schema/0033).
  'current_rollout_count',
  'current_rollout_count_queue',
  'summary_queue',
  'summary_reconciler',
  // Counts per deployment target, queued by triggers and kept by the summary refresh, read by kalypso_environment_state (schema/0036).
  'target_state_count',
  'target_state_count_queue',
  // Counts per environment, kept by triggers and the summary refresh, read by the environments report (schema/0050).
  'environment_summary',
  'environment_summary_queue',
  // State transitions per minute, kept by a trigger and the summary refresh, read by Grafana (schema/0028).
  'transition_count',
  'transition_count_queue',
  // The notifications' subjects, outbox and watches, read and written by src/store/notify/ (schema/0024).
  'notify_baseline',
  'notify_channel_pause',
  'notify_dirty_endpoint',
  'notify_drift',
  'notify_host_offline',
  'notify_notifier',
  'notify_outbox',
  'notify_subject',
];
