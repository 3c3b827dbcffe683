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
}

export interface DeployedVersion {
  version: string | null;
  commit: string;
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

export interface RolloutState extends StatusCounts {
  manifestsEndpoint: string;
  commit: string;
  settled: boolean;
  subscribers: { host: string; reconciler: string; status: EffectiveStatus; statusMessage: string; appliedCommit: string; observedAt: string }[];
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
