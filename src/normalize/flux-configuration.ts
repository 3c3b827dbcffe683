// Azure Resource Graph rows of Flux configurations (`microsoft.kubernetesconfiguration/
// fluxconfigurations`, on Arc-enabled and AKS clusters) → real state. Everything comes from the
// row itself and its cluster's liveness (azure-clusters.ts, from the same poll): no per-cluster ARM
// call. Pure; the one lookup it cannot do — which deployment target an application Kustomization
// belongs to — is handed back as a reference for the caller to resolve.
//
// Times: a state is observed from when it began (the Kustomization's Ready transition, else the
// configuration's statusUpdatedAt) — that is its history's time; a cluster Azure hears from confirms
// it again at the moment it is known alive, so a steady cluster does not turn stale.
import type { DeploymentStatus, RealStateRecord } from '../model/deployment-records.ts';
import type { ClusterLiveness } from './azure-clusters.ts';
import { FIELD_LIMITS, FieldReader } from './field-reader.ts';
import type { Normalized } from './normalize-result.ts';
import { type Field, normalizeRealState } from './real-state.ts';

export interface TargetReference {
  readonly environment: string;
  readonly workspace: string | undefined;
  readonly application: string | undefined;
  readonly workload: string;
  readonly deploymentTarget: string;
}

export interface FluxConfigurationMapping {
  readonly records: RealStateRecord[];
  /** Kustomizations whose endpoint is their deployment target's: complete them once it is known. */
  readonly pending: { readonly target: TargetReference; readonly complete: (endpoint: string) => RealStateRecord[] }[];
  /** Parts of the row the hub does not map, and why (HelmReleases, non-Git sources, …). */
  readonly ignored: string[];
  /** Why the row could not be mapped at all, if it could not. */
  readonly rejected: string | undefined;
}

const COMPLIANCE: Readonly<Record<string, DeploymentStatus>> = {
  compliant: 'success',
  'non-compliant': 'failure',
  noncompliant: 'failure',
  pending: 'in_progress',
  suspended: 'in_progress',
  unknown: 'in_progress',
};
const SHA1 = /sha1:([0-9a-f]{40})/i;

interface ObjectStatus {
  name?: unknown;
  namespace?: unknown;
  kind?: unknown;
  complianceState?: unknown;
  statusConditions?: unknown;
}

function map(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** The cluster a Flux configuration belongs to: the 9th segment of its resource id, lower-cased. */
export function clusterOf(id: string): string | undefined {
  return text(id.split('/')[8])?.toLowerCase();
}

/** `env.workspace.application.workload.target` or `env.workload.target`, as Kalypso names them. */
export function targetOfKustomization(name: string): TargetReference | undefined {
  const parts = name.split('.');
  if (parts.some((part) => part === '')) return undefined;
  if (parts.length === 5) {
    const [environment, workspace, application, workload, deploymentTarget] = parts as [string, string, string, string, string];
    return { environment, workspace, application, workload, deploymentTarget };
  }
  if (parts.length === 3) {
    const [environment, workload, deploymentTarget] = parts as [string, string, string];
    return { environment, workspace: undefined, application: undefined, workload, deploymentTarget };
  }
  return undefined;
}

/** The records, each followed by its confirmation at `aliveAt` when the cluster was alive after it began. */
function confirmedAt(records: readonly RealStateRecord[], aliveAt: Date | undefined): RealStateRecord[] {
  return records.flatMap((record) => (aliveAt !== undefined && aliveAt > record.observedAt ? [record, { ...record, observedAt: aliveAt }] : [record]));
}

export function mapFluxConfiguration(row: unknown, polledAt: Date, liveness?: ClusterLiveness): FluxConfigurationMapping {
  const mapping: FluxConfigurationMapping = { records: [], pending: [], ignored: [], rejected: undefined };
  const fields = map(row);
  const id = text(fields['id']) ?? '';
  const name = text(fields['name']);
  const properties = map(fields['properties']);
  const cluster = clusterOf(id);
  const where = `flux configuration ${JSON.stringify(id || name || '?')}`;
  if (cluster === undefined || name === undefined) {
    return { ...mapping, rejected: `${where}: id is not a flux configuration id (no cluster segment) or name is missing` };
  }
  const sourceKind = text(properties['sourceKind']) ?? 'GitRepository';
  if (sourceKind !== 'GitRepository') {
    return { ...mapping, ignored: [`${where}: source kind ${sourceKind} has no Git manifests endpoint`] };
  }
  const repository = map(properties['gitRepository']);
  const repo = repository['url'];
  const branch = map(repository['repositoryRef'])['branch'];
  const kustomizations = Object.entries(map(properties['kustomizations']));
  const updatedAt = time(properties['statusUpdatedAt']) ?? polledAt;
  const aliveAt = liveness?.aliveAt;
  // Entries that are not maps carry nothing: read as empty statuses.
  const statuses = Array.from(Array.isArray(properties['statuses']) ? (properties['statuses'] as unknown[]) : [], (status) => map(status) as ObjectStatus);
  const configCommit = properties['sourceSyncedCommitId'];
  const field = (fieldName: string, value: unknown): Field => ({ name: `${where}: properties.${fieldName}`, value });
  const record = (fieldsOf: {
    reconciler: string;
    type: 'arc' | 'flux';
    endpoint: { repo: Field; branch: Field; path: Field } | Field;
    commit: Field;
    compliance: unknown;
    message: string;
    since: Date;
  }): Normalized<RealStateRecord> => {
    const compliance = typeof fieldsOf.compliance === 'string' ? fieldsOf.compliance.trim().toLowerCase() : undefined;
    return normalizeRealState({
      host: { name: `${where}: id`, value: cluster },
      hostType: { name: 'host type', value: 'k8s-cluster' },
      reconcilerName: { name: `${where}: reconciler name`, value: fieldsOf.reconciler },
      reconcilerType: { name: 'reconciler type', value: fieldsOf.type },
      endpoint: fieldsOf.endpoint,
      storageType: { name: 'storage type', value: 'git' },
      commit: fieldsOf.commit,
      status: { name: `${where}: complianceState`, value: compliance === undefined ? undefined : (COMPLIANCE[compliance] ?? compliance) },
      message: fieldsOf.message,
      observedAt: fieldsOf.since,
    });
  };

  // The configuration itself: an `arc` reconciler applying the repository at its first kustomization's path.
  const [firstKustomization] = kustomizations;
  const problems = statuses
    .filter((status) => text(status.complianceState)?.toLowerCase() === 'non-compliant')
    .map((status) => `${text(status.kind) ?? 'object'} ${text(status.name) ?? '?'}: ${conditionMessages(status) || 'non-compliant'}`);
  const configuration = record({
    reconciler: name,
    type: 'arc',
    endpoint: {
      repo: field('gitRepository.url', repo),
      branch: field('gitRepository.repositoryRef.branch', branch),
      path: field(`kustomizations.${firstKustomization?.[0] ?? '?'}.path`, map(firstKustomization?.[1])['path'] ?? ''),
    },
    commit: field('sourceSyncedCommitId', configCommit),
    compliance: properties['complianceState'],
    message: new FieldReader().message(problems.join('; ')),
    since: updatedAt,
  });
  if (!configuration.ok) return { ...mapping, rejected: configuration.reason };
  mapping.records.push(configuration.value);

  // Every Kustomization the configuration reports on: a `flux` reconciler.
  const ownPaths = new Map(kustomizations.map(([key, value]) => [`${name}-${key}`, map(value)['path']]));
  for (const status of statuses) {
    const kind = text(status.kind);
    const statusName = text(status.name) ?? '?';
    if (kind !== 'Kustomization') {
      if (kind !== 'GitRepository') mapping.ignored.push(`${where}: ${kind ?? 'object'} ${statusName} is not a Kustomization`);
      continue;
    }
    const message = conditionMessages(status);
    const commit = SHA1.exec(message)?.[1] ?? configCommit;
    const since = readySince(status) ?? updatedAt;
    const build = (endpoint: Field | { repo: Field; branch: Field; path: Field }) =>
      record({ reconciler: statusName, type: 'flux', endpoint, commit: field('sourceSyncedCommitId', commit), compliance: status.complianceState, message, since });
    if (ownPaths.has(statusName)) {
      const built = build({
        repo: field('gitRepository.url', repo),
        branch: field('gitRepository.repositoryRef.branch', branch),
        path: field(`kustomizations path of ${statusName}`, ownPaths.get(statusName) ?? ''),
      });
      if (built.ok) mapping.records.push(built.value);
      else mapping.ignored.push(built.reason);
      continue;
    }
    const target = targetOfKustomization(statusName);
    if (target === undefined) {
      mapping.ignored.push(`${where}: cannot tell the deployment target of Kustomization ${statusName} from its name`);
      continue;
    }
    mapping.pending.push({
      target,
      complete: (endpoint) => {
        const built = build({ name: 'deployment target endpoint', value: endpoint });
        return built.ok ? confirmedAt([built.value], aliveAt) : [];
      },
    });
  }
  return { ...mapping, records: confirmedAt(mapping.records, aliveAt) };
}

/** When a status's Ready condition last changed: when its present state began. */
function readySince(status: ObjectStatus): Date | undefined {
  const conditions = Array.isArray(status.statusConditions) ? (status.statusConditions as unknown[]) : [];
  const ready = conditions.map(map).find((condition) => condition['type'] === 'Ready');
  return time(ready?.['lastTransitionTime']);
}

function conditionMessages(status: ObjectStatus): string {
  const conditions = Array.isArray(status.statusConditions) ? (status.statusConditions as unknown[]) : [];
  return conditions
    .map((condition) => text(map(condition)['message']))
    .filter((message): message is string => message !== undefined)
    .join('; ')
    .slice(0, FIELD_LIMITS.message);
}

function time(value: unknown): Date | undefined {
  if (typeof value !== 'string') return undefined;
  const parsed = new Date(value);
  return Number.isNaN(parsed.getTime()) ? undefined : parsed;
}
