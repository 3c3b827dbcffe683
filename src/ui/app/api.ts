// The web UI reads the public /api/v1 only; these are the shapes it uses.
import { askForApiToken, storedApiToken } from './sign-in.ts';

export type EffectiveStatus = 'success' | 'failure' | 'in_progress' | 'stale';

export interface StatusCounts {
  total: number;
  succeeded: number;
  failed: number;
  inProgress: number;
  stale: number;
}

export interface Environment {
  name: string;
  deploymentTargets: number;
  hosts: number;
  reconcilers: StatusCounts;
  /** The last merge that changed what runs there: the commit a promotion check asks about. */
  latestAssignment: { commit: string; assignedAt: string } | null;
}

export interface DeployedVersion {
  /** The version that runs at the commit (assigned with it, or carried across merges that kept it). */
  version: string | null;
  commit: string;
  /** On the desired rollout: the desired commit, or another commit that runs the desired version. */
  onDesired: boolean;
  reconcilers: StatusCounts;
}

export interface CompareCell {
  manifestsEndpoint: string;
  desired: { version: string; commit: string; assignedAt: string } | null;
  deployed: DeployedVersion[];
  reconcilers: StatusCounts;
}

export interface CompareRow {
  workspace: string;
  application: string;
  workload: string;
  deploymentTarget: string;
  environments: Record<string, CompareCell | null>;
}

export interface Host {
  name: string;
  type: string;
  lastSeenAt: string;
  stale: boolean;
  environments: string[];
  reconcilers: StatusCounts;
  /** Its reconcilers off their target's desired rollout. */
  drifting: number;
}

/** Hosts counted over every page. */
export interface HostTotals {
  hosts: number;
  offline: number;
  failing: number;
  drifting: number;
}

/** GET /hosts: a page, the totals of the hosts matching the filters, and of the whole fleet. */
export interface HostsPage {
  items: Host[];
  nextCursor: string | null;
  totals: HostTotals;
  fleet: HostTotals;
  /** Matching hosts before this page. */
  offset: number;
}

export interface HostReconciler {
  reconciler: string;
  type: string;
  manifestsEndpoint: string;
  commit: string;
  status: EffectiveStatus;
  statusMessage: string;
  deployedAt: string;
  lastSeenAt: string;
  deploymentTargets: {
    workspace: string;
    application: string;
    workload: string;
    deploymentTarget: string;
    environment: string;
    deployedVersion: string | null;
    desiredVersion: string | null;
    desiredCommit: string | null;
  }[];
}

export interface HistoryItem {
  observedAt: string;
  host: string;
  reconciler: string;
  commit: string;
  status: 'success' | 'failure' | 'in_progress';
  statusMessage: string;
  environment: string | null;
  workload: string | null;
  deploymentTarget: string | null;
  version: string | null;
}

export interface Drift {
  environment: string;
  workspace: string;
  application: string;
  workload: string;
  deploymentTarget: string;
  host: string;
  reconciler: string;
  desiredVersion: string | null;
  appliedVersion: string | null;
  appliedCommit: string;
  desiredCommit: string | null;
  status: EffectiveStatus;
  statusMessage: string;
  reasons: ('not_on_desired_commit' | 'failing' | 'stale')[];
  driftingSince: string;
  driftingForSeconds: number;
}

/** GET /drift's totals: every drifting reconciler (× target) of the slice, by reason. */
export interface DriftTotals {
  drifting: number;
  notOnDesiredCommit: number;
  failing: number;
  stale: number;
}

export interface RolloutState extends StatusCounts {
  /** The gate asked: one manifests endpoint, or every deployment target of an environment. */
  manifestsEndpoint?: string;
  environment?: string;
  /** Always the full commit, also when a prefix was asked about. */
  commit: string;
  settled: boolean;
  subscribers: {
    host: string;
    reconciler: string;
    status: EffectiveStatus;
    statusMessage: string;
    appliedCommit: string;
    observedAt: string;
    supersededBy: string | null;
    manifestsEndpoint?: string;
  }[];
  /** The targets judged: those on the endpoint, or the environment's. */
  targets: (StatusCounts & {
    environment: string;
    workspace: string;
    application: string;
    workload: string;
    deploymentTarget: string;
    manifestsEndpoint: string;
    /** The version the commit runs on the target. */
    version: string | null;
    desiredVersion: string | null;
    desiredCommit: string | null;
  })[];
}

/** GET /metrics/delivery (src/api/v1/delivery-routes.ts); durations in seconds, null when none. */
export interface DurationSummary {
  count: number;
  medianSeconds: number | null;
  p90Seconds: number | null;
}

export type DeliveryRolloutStatus = 'succeeded' | 'failed' | 'superseded' | 'in_progress' | 'no_subscribers';

export interface DeliveryRollout {
  environment: string;
  workspace: string;
  application: string;
  workload: string;
  deploymentTarget: string;
  manifestsEndpoint: string;
  version: string;
  commit: string;
  buildTime: string | null;
  assignedAt: string;
  supersededAt: string | null;
  status: DeliveryRolloutStatus;
  /** Not superseded: status and counts are as of now, as the rollout gate has them. */
  current: boolean;
  /** A current rollout that had converged: where it no longer succeeds. */
  regressedOn: string[];
  changeFailure: boolean;
  subscribers: number;
  succeeded: number;
  failed: number;
  leadTimeFirstHostSeconds: number | null;
  leadTimeLastHostSeconds: number | null;
  convergence50Seconds: number | null;
  convergence90Seconds: number | null;
  convergence100Seconds: number | null;
  restoreSeconds: number | null;
  laggingHosts: string[];
}

export interface LaggingHost {
  host: string;
  lagged: number;
  notConverged: number;
  medianBehindSeconds: number | null;
  maxBehindSeconds: number | null;
}

export interface DeliveryTrendDay {
  day: string;
  rollouts: number;
  successful: number;
  judged: number;
  changeFailures: number;
  changeFailureRate: number | null;
  leadTimeMedianSeconds: number | null;
  convergenceMedianSeconds: number | null;
}

export interface DeliveryReport {
  window: { since: string; until: string; days: number };
  fixWindowSeconds: number;
  rollouts: { total: number; succeeded: number; failed: number; superseded: number; inProgress: number; withoutSubscribers: number };
  deploymentFrequency: { successfulRollouts: number; perDay: number };
  leadTime: { firstHost: DurationSummary; lastHost: DurationSummary; withoutBuildTime: number };
  convergence: { to50Percent: DurationSummary; to90Percent: DurationSummary; to100Percent: DurationSummary };
  changeFailureRate: { judged: number; failures: number; withFailureReports: number; supersededWithinFixWindow: number; rate: number | null };
  timeToRestore: DurationSummary & { failures: number; notRestored: number };
  laggingHosts: LaggingHost[];
  trend: DeliveryTrendDay[];
  recentRollouts: DeliveryRollout[];
}

export class ApiFailure extends Error {
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export async function getJson<T>(path: string, params: Record<string, string | undefined> = {}, signal?: AbortSignal): Promise<T> {
  const query = new URLSearchParams(Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''));
  const token = storedApiToken();
  const response = await fetch(`/api/v1${path}${query.size > 0 ? `?${query.toString()}` : ''}`, {
    signal: signal ?? null,
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
  });
  if (response.status === 401) askForApiToken(token !== null);
  const body = (await response.json()) as T | { error?: { message?: string } };
  if (!response.ok) throw new ApiFailure(response.status, (body as { error?: { message?: string } }).error?.message ?? response.statusText);
  return body as T;
}
