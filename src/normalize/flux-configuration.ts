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
  const configuration = readGitConfiguration(where, cluster, name, properties, polledAt);
  const applied = configurationRecord(configuration);
  if (!applied.ok) return { ...mapping, rejected: applied.reason };
  mapping.records.push(applied.value);
  for (const status of configuration.statuses) mapObjectStatus(configuration, status, liveness?.aliveAt, mapping);
  return { ...mapping, records: confirmedAt(mapping.records, liveness?.aliveAt) };
}

/** A configuration row with a Git source, read once: what each of its records is made of. */
interface GitConfiguration {
  /** How the row is named in messages. */
  readonly where: string;
  readonly cluster: string;
  readonly name: string;
  readonly complianceState: unknown;
  readonly repo: unknown;
  readonly branch: unknown;
  readonly kustomizations: readonly [string, unknown][];
  /** The paths of the configuration's own Kustomizations, by the name Flux gives them (`<configuration>-<key>`). */
  readonly ownPaths: ReadonlyMap<string, unknown>;
  readonly statuses: readonly ObjectStatus[];
  readonly commit: unknown;
  readonly updatedAt: Date;
}

type GitEndpoint = { repo: Field; branch: Field; path: Field };

interface RecordFields {
  reconciler: string;
  type: 'arc' | 'flux';
  endpoint: GitEndpoint | Field;
  commit: Field;
  compliance: unknown;
  message: string;
  since: Date;
}

function readGitConfiguration(where: string, cluster: string, name: string, properties: Record<string, unknown>, polledAt: Date): GitConfiguration {
  const repository = map(properties['gitRepository']);
  const kustomizations = Object.entries(map(properties['kustomizations']));
  return {
    where,
    cluster,
    name,
    complianceState: properties['complianceState'],
    repo: repository['url'],
    branch: map(repository['repositoryRef'])['branch'],
    kustomizations,
    ownPaths: new Map(kustomizations.map(([key, value]) => [`${name}-${key}`, map(value)['path']])),
    // Entries that are not maps carry nothing: read as empty statuses.
    statuses: Array.from(Array.isArray(properties['statuses']) ? (properties['statuses'] as unknown[]) : [], (status) => map(status) as ObjectStatus),
    commit: properties['sourceSyncedCommitId'],
    updatedAt: time(properties['statusUpdatedAt']) ?? polledAt,
  };
}

/** A field of the row's properties, named in messages by its path. */
function propertyField(configuration: GitConfiguration, fieldName: string, value: unknown): Field {
  return { name: `${configuration.where}: properties.${fieldName}`, value };
}

/** The configuration's repository and branch, at `path`. */
function gitEndpoint(configuration: GitConfiguration, pathField: string, path: unknown): GitEndpoint {
  return {
    repo: propertyField(configuration, 'gitRepository.url', configuration.repo),
    branch: propertyField(configuration, 'gitRepository.repositoryRef.branch', configuration.branch),
    path: propertyField(configuration, pathField, path),
  };
}

/** A real-state record of a reconciler on the configuration's cluster. */
function realState(configuration: GitConfiguration, fieldsOf: RecordFields): Normalized<RealStateRecord> {
  const { where, cluster } = configuration;
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
}

/** The configuration itself: an `arc` reconciler applying the repository at its first kustomization's path. */
function configurationRecord(configuration: GitConfiguration): Normalized<RealStateRecord> {
  const [firstKustomization] = configuration.kustomizations;
  return realState(configuration, {
    reconciler: configuration.name,
    type: 'arc',
    endpoint: gitEndpoint(configuration, `kustomizations.${firstKustomization?.[0] ?? '?'}.path`, map(firstKustomization?.[1])['path'] ?? ''),
    commit: propertyField(configuration, 'sourceSyncedCommitId', configuration.commit),
    compliance: configuration.complianceState,
    message: new FieldReader().message(nonCompliantObjects(configuration.statuses).join('; ')),
    since: configuration.updatedAt,
  });
}

/** The objects the configuration reports non-compliant, each with its conditions' messages. */
function nonCompliantObjects(statuses: readonly ObjectStatus[]): string[] {
  return statuses
    .filter((status) => text(status.complianceState)?.toLowerCase() === 'non-compliant')
    .map((status) => `${text(status.kind) ?? 'object'} ${text(status.name) ?? '?'}: ${conditionMessages(status) || 'non-compliant'}`);
}

/** Every Kustomization the configuration reports on is a `flux` reconciler; other objects are noted as ignored. */
function mapObjectStatus(configuration: GitConfiguration, status: ObjectStatus, aliveAt: Date | undefined, mapping: FluxConfigurationMapping): void {
  const kind = text(status.kind);
  const statusName = text(status.name) ?? '?';
  if (kind === 'Kustomization') mapKustomization(configuration, status, statusName, aliveAt, mapping);
  else if (kind !== 'GitRepository') mapping.ignored.push(`${configuration.where}: ${kind ?? 'object'} ${statusName} is not a Kustomization`);
}

/**
 * One of the configuration's own Kustomizations is recorded now, from the row; an application
 * Kustomization waits for its deployment target's endpoint.
 */
function mapKustomization(
  configuration: GitConfiguration,
  status: ObjectStatus,
  statusName: string,
  aliveAt: Date | undefined,
  mapping: FluxConfigurationMapping,
): void {
  const build = kustomizationRecord(configuration, status, statusName);
  if (configuration.ownPaths.has(statusName)) {
    const built = build(gitEndpoint(configuration, `kustomizations path of ${statusName}`, configuration.ownPaths.get(statusName) ?? ''));
    if (built.ok) mapping.records.push(built.value);
    else mapping.ignored.push(built.reason);
    return;
  }
  const target = targetOfKustomization(statusName);
  if (target === undefined) {
    mapping.ignored.push(`${configuration.where}: cannot tell the deployment target of Kustomization ${statusName} from its name`);
    return;
  }
  mapping.pending.push({
    target,
    complete: (endpoint) => {
      const built = build({ name: 'deployment target endpoint', value: endpoint });
      return built.ok ? confirmedAt([built.value], aliveAt) : [];
    },
  });
}

/** A Kustomization's record at a given endpoint: the commit its conditions name, since it became (not) ready. */
function kustomizationRecord(
  configuration: GitConfiguration,
  status: ObjectStatus,
  statusName: string,
): (endpoint: GitEndpoint | Field) => Normalized<RealStateRecord> {
  const message = conditionMessages(status);
  const commit = SHA1.exec(message)?.[1] ?? configuration.commit;
  const since = readySince(status) ?? configuration.updatedAt;
  return (endpoint) =>
    realState(configuration, {
      reconciler: statusName,
      type: 'flux',
      endpoint,
      commit: propertyField(configuration, 'sourceSyncedCommitId', commit),
      compliance: status.complianceState,
      message,
      since,
    });
}

/** When a status's Ready condition last changed: when its present state began. */
function readySince(status: ObjectStatus): Date | undefined {
  const conditions = Array.isArray(status.statusConditions) ? (status.statusConditions as unknown[]) : [];
  // (Array.from: a hole, kept by map, is given to find as undefined.)
  const ready = Array.from(conditions).map(map).find((condition) => condition['type'] === 'Ready');
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
