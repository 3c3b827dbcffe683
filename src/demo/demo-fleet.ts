// A realistic demo fleet: three workspaces, seven workloads, four environments in promotion order,
// Kubernetes clusters and edge devices — with a rollout in progress, a failing host, an offline
// host and drift. Deterministic (the same fleet every time), expressed as the OTLP log records an
// edge agent and a CD pipeline would send.
import { createHash } from 'node:crypto';
import type { ResourceLogsToSend } from './otlp-http-sender.ts';

export const DEMO_ENVIRONMENTS = ['dev', 'qa', 'staging', 'prod'] as const;
type Environment = (typeof DEMO_ENVIRONMENTS)[number];

export interface DemoWorkload {
  readonly workspace: string;
  readonly application: string;
  readonly workload: string;
  readonly target: string;
  /** Oldest first. */
  readonly versions: readonly string[];
  /** Runs on the edge devices of prod rather than on clusters. */
  readonly edge?: boolean;
}

export const DEMO_WORKLOADS: readonly DemoWorkload[] = [
  { workspace: 'kaizentm', application: 'greeting-service', workload: 'hello-world', target: 'functional-test', versions: ['0.9.0', '1.0.0', '1.1.0', '1.2.0'] },
  { workspace: 'kaizentm', application: 'greeting-service', workload: 'greeter-api', target: 'main', versions: ['2.3.1', '2.4.0', '2.5.0', '2.6.0'] },
  { workspace: 'kaizentm', application: 'payments', workload: 'ledger', target: 'main', versions: ['5.0.2', '5.1.0', '5.2.0', '5.2.1'] },
  { workspace: 'kaizentm', application: 'payments', workload: 'checkout', target: 'main', versions: ['3.7.0', '3.8.0', '3.9.0', '4.0.0'] },
  { workspace: 'contoso-retail', application: 'storefront', workload: 'catalog', target: 'web', versions: ['1.12.0', '1.13.0', '1.14.0', '1.15.0'] },
  { workspace: 'contoso-retail', application: 'storefront', workload: 'cart', target: 'web', versions: ['0.21.0', '0.22.0', '0.23.0', '0.23.1'] },
  { workspace: 'contoso-retail', application: 'edge-pos', workload: 'pos-terminal', target: 'stores', versions: ['7.1.0', '7.2.0', '7.3.0', '7.4.0'], edge: true },
];

/** How far behind the newest version each environment's desired state is. */
const LAG: Record<Environment, number> = { dev: 0, qa: 1, staging: 1, prod: 2 };

const CITIES = ['berlin', 'paris', 'madrid', 'rome', 'vienna', 'oslo', 'lisbon', 'prague', 'dublin', 'warsaw'];

export interface DemoScenario {
  /**
   * The staging merge of `catalog` rolling out: the reconcilers of its branch that have not applied
   * it yet — catalog's own, and the other workloads' of the branch (Flux applies a branch's new
   * head on every path of it, changed or not).
   */
  readonly rolloutPending: { readonly host: string; readonly reconciler: string; readonly endpoint: string; readonly commit: string; readonly revision: string }[];
  readonly rolloutEndpoint: string;
  readonly rolloutCommit: string;
  readonly failingHost: string;
  readonly offlineHost: string;
  readonly driftingHost: string;
}

export interface DemoFleet {
  /** Descriptors, one request per environment, in promotion order (that order is the matrix's). */
  readonly descriptors: ResourceLogsToSend[][];
  readonly states: ResourceLogsToSend[];
  readonly scenario: DemoScenario;
  /** Every live reconciler's latest report, for heartbeats. */
  readonly latest: Map<string, { resource: ResourceLogsToSend['resource']; log: ResourceLogsToSend['logs'][number] }>;
}

export function commitOf(...parts: string[]): string {
  return createHash('sha1').update(parts.join('/')).digest('hex');
}

export function endpointOf(workload: DemoWorkload, environment: string): string {
  return `https://github.com/contoso/${workload.workspace}-gitops/${environment}/${workload.workload}-${workload.target}`;
}

interface Host {
  readonly name: string;
  readonly environment: Environment;
  readonly edge: boolean;
}

function hostsOf(count: number): Host[] {
  const hosts: Host[] = [];
  const share: [Environment, number][] = [
    ['dev', 0.15],
    ['qa', 0.15],
    ['staging', 0.2],
  ];
  for (const [environment, fraction] of share) {
    const n = Math.max(2, Math.round(count * fraction));
    for (let i = 1; i <= n; i += 1) hosts.push({ name: `aks-${environment}-${String(i).padStart(2, '0')}`, environment, edge: false });
  }
  const prod = Math.max(4, count - hosts.length);
  const clusters = Math.ceil(prod / 2);
  for (let i = 1; i <= clusters; i += 1) hosts.push({ name: `aks-prod-${String(i).padStart(2, '0')}`, environment: 'prod', edge: false });
  for (let i = 1; i <= prod - clusters; i += 1) {
    hosts.push({ name: `store-${CITIES[(i - 1) % CITIES.length]}-${String(Math.ceil(i / CITIES.length)).padStart(2, '0')}`, environment: 'prod', edge: true });
  }
  return hosts;
}

const minutesBefore = (now: Date, minutes: number) => new Date(now.getTime() - minutes * 60_000);

export function buildDemoFleet(options: { hosts: number; now: Date }): DemoFleet {
  const { now } = options;
  const descriptors: ResourceLogsToSend[][] = DEMO_ENVIRONMENTS.map((environment) => [
    {
      resource: { 'service.name': 'cd-pipeline', 'deployment.environment': environment },
      logs: DEMO_WORKLOADS.flatMap((workload) => descriptorLogs(workload, environment, now)),
    },
  ]);
  const hosts = hostsOf(options.hosts);
  const rolloutVersion = catalogRolloutVersion();
  const context: StateContext = {
    now,
    scenario: scenarioOf(hosts, rolloutVersion),
    rolloutVersion,
    stagingHosts: hosts.filter((host) => host.environment === 'staging'),
    latest: new Map(),
  };
  const states: ResourceLogsToSend[] = hosts.map((host, hostIndex) => hostStates(host, hostIndex, context));
  return { descriptors, states, scenario: context.scenario, latest: context.latest };
}

type Log = ResourceLogsToSend['logs'][number];

/**
 * When a version was merged to an environment's branch: a day apart each, the workloads of a day a
 * few minutes apart (so that each branch has one newest merge), the staging catalog ten minutes ago.
 */
function minutesSinceMerge(workload: DemoWorkload, environment: Environment, index: number): number {
  const desired = workload.versions.length - 1 - LAG[environment];
  if (workload.workload === 'catalog' && environment === 'staging' && index === desired) return 10;
  return (desired - index + 1) * 1_440 - DEMO_WORKLOADS.indexOf(workload) * 5;
}

/**
 * The head of a workspace's GitOps branch of an environment: the commit of its newest merge. A
 * reconciler of any path of the branch that is up to date has applied this commit.
 */
function branchHead(workspace: string, environment: Environment): string {
  const newest = DEMO_WORKLOADS.filter((workload) => workload.workspace === workspace)
    .map((workload) => ({ workload, desired: workload.versions.length - 1 - LAG[environment] }))
    .sort((a, b) => minutesSinceMerge(a.workload, environment, a.desired) - minutesSinceMerge(b.workload, environment, b.desired))[0]!;
  return commitOf(newest.workload.workload, environment, newest.workload.versions[newest.desired]!);
}

/** The CD pipeline's descriptors of a workload in an environment: every version up to the one desired there. */
function descriptorLogs(workload: DemoWorkload, environment: Environment, now: Date): Log[] {
  const desired = workload.versions.length - 1 - LAG[environment];
  return workload.versions.slice(0, desired + 1).map((version, index) => ({
    eventName: 'kalypso.deployment.descriptor',
    time: minutesBefore(now, minutesSinceMerge(workload, environment, index)),
    attributes: { 'vcs.ref.head.revision': `${environment}@sha1:${commitOf(workload.workload, environment, version)}` },
    body: {
      workload: {
        name: workload.workload,
        source: { repo: `https://github.com/contoso/${workload.workload}`, branch: 'main', path: '.' },
        application: { name: workload.application, workspace: { name: workload.workspace } },
      },
      deploymentTarget: {
        name: workload.target,
        environment,
        manifests: { repo: `https://github.com/contoso/${workload.workspace}-gitops`, branch: environment, path: `${workload.workload}-${workload.target}` },
      },
      workloadVersion: { version, build: `build-${version}`, commit: commitOf('source', workload.workload, version), buildTime: minutesBefore(now, (desired - index + 2) * 1_440).toISOString() },
    },
  }));
}

function catalogWorkload(): DemoWorkload {
  return DEMO_WORKLOADS.find((workload) => workload.workload === 'catalog')!;
}

/** The version of `catalog` rolling out to staging: the one staging desires. */
function catalogRolloutVersion(): string {
  const catalog = catalogWorkload();
  return catalog.versions[catalog.versions.length - 1 - LAG.staging]!;
}

/** Which hosts play which part; the rollout's pending reconcilers are added as their reports are made. */
function scenarioOf(hosts: readonly Host[], rolloutVersion: string): DemoScenario {
  return {
    rolloutPending: [],
    rolloutEndpoint: endpointOf(catalogWorkload(), 'staging'),
    rolloutCommit: commitOf('catalog', 'staging', rolloutVersion),
    failingHost: hosts.filter((host) => host.environment === 'prod' && !host.edge)[2]?.name ?? 'aks-prod-03',
    offlineHost: hosts.find((host) => host.edge)?.name ?? 'store-berlin-01',
    driftingHost: hosts.filter((host) => host.environment === 'qa')[1]?.name ?? 'aks-qa-02',
  };
}

/** What every host's reports are made from, and where the latest ones are kept. */
interface StateContext {
  readonly now: Date;
  readonly scenario: DemoScenario;
  readonly rolloutVersion: string;
  readonly stagingHosts: readonly Host[];
  readonly latest: DemoFleet['latest'];
}

/** One host's state reports: a reconciler per workload that runs on its kind of host. */
function hostStates(host: Host, hostIndex: number, context: StateContext): ResourceLogsToSend {
  const resource = { 'k8s.cluster.name': host.name, 'kalypso.host.type': host.edge ? 'edge-device' : 'k8s-cluster' };
  const offline = host.name === context.scenario.offlineHost;
  // Live hosts last reported within the past two minutes; the offline one two hours ago.
  const lastReport = offline ? minutesBefore(context.now, 120) : new Date(context.now.getTime() - ((hostIndex * 7_919) % 120_000));
  const logs = DEMO_WORKLOADS.filter((workload) => (workload.edge === true) === host.edge).flatMap((workload) => {
    const { history, last } = workloadReports(host, workload, lastReport, context);
    if (!offline) context.latest.set(`${host.name}/${reconcilerOf(workload)}`, { resource, log: last });
    return [...history, last];
  });
  return { resource, logs };
}

function reconcilerOf(workload: DemoWorkload): string {
  return `flux-system/${workload.workload}`;
}

/** A state report of the workload's reconciler on the host, at the commit of that version's merge or at `commit`. */
function stateReport(host: Host, workload: DemoWorkload, version: string, status: string, message: string, time: Date, commit?: string): Log {
  return {
    eventName: 'kalypso.deployment.state',
    time,
    attributes: {
      'kalypso.reconciler.name': reconcilerOf(workload),
      'kalypso.reconciler.type': 'flux',
      'kalypso.manifests.endpoint': endpointOf(workload, host.environment),
      'vcs.ref.head.revision': `${host.environment}@sha1:${commit ?? commitOf(workload.workload, host.environment, version)}`,
      'kalypso.deployment.status': status,
    },
    body: message,
  };
}

/**
 * A reconciler's reports: the last versions it applied, then its latest report — at its branch's
 * head when up to date; the drifting host one version behind, the staging branch mid-rollout, the
 * failing host's checkout failing.
 */
function workloadReports(host: Host, workload: DemoWorkload, lastReport: Date, context: StateContext): { history: Log[]; last: Log } {
  const { scenario, rolloutVersion } = context;
  const desired = workload.versions.length - 1 - LAG[host.environment];
  const applied = host.name === scenario.driftingHost && workload.workload === 'hello-world' ? desired - 1 : desired;
  const inRollout = workload.workload === 'catalog' && host.environment === 'staging';
  const history = workload.versions.slice(Math.max(0, applied - 2), applied + 1).flatMap((version, index, list) => {
    // A version a day apart each; the staging catalog rollout started ten minutes ago.
    const minutes = inRollout && version === rolloutVersion ? 8 : (list.length - index) * 1_440;
    return [
      stateReport(host, workload, version, 'in_progress', 'Reconciliation in progress', minutesBefore(lastReport, minutes)),
      stateReport(host, workload, version, 'success', `Applied revision: ${version}`, minutesBefore(lastReport, minutes - 3)),
    ];
  });
  const version = workload.versions[applied]!;
  // Up to date means at the branch's head, whichever workload's merge moved it last.
  const head = applied === desired ? branchHead(workload.workspace, host.environment) : undefined;
  let last = stateReport(host, workload, version, 'success', `Applied revision: ${version}`, lastReport, head);
  // The staging merge of the new catalog: the first 60 % of staging clusters have applied it; the
  // rest are applying catalog's change, and their other reconcilers of the branch are still at the
  // head before it.
  const branchInRollout = host.environment === 'staging' && workload.workspace === catalogWorkload().workspace;
  if (branchInRollout && context.stagingHosts.indexOf(host) >= Math.ceil(context.stagingHosts.length * 0.6)) {
    if (inRollout) {
      last = stateReport(host, workload, rolloutVersion, 'in_progress', 'Reconciliation in progress: waiting for Deployment/catalog to become ready', lastReport);
      history.pop();
    } else {
      last = stateReport(host, workload, version, 'success', `Applied revision: ${version}`, lastReport);
    }
    const revision = `${host.environment}@sha1:${scenario.rolloutCommit}`;
    scenario.rolloutPending.push({ host: host.name, reconciler: reconcilerOf(workload), endpoint: endpointOf(workload, host.environment), commit: scenario.rolloutCommit, revision });
  }
  if (host.name === scenario.failingHost && workload.workload === 'checkout') {
    last = stateReport(host, workload, version, 'failure', "Health check failed after 5m0s: timeout waiting for: [Deployment/checkout status: 'InProgress']", lastReport, head);
  }
  return { history, last };
}
