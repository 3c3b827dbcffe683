// The Kalypso promotion flow as the field runs it (../shared/seeds/003: CD writes an environment
// branch, a PR to the GitOps repository is merged, Check Promote waits until every GitOps
// configuration of the environment complies, then promotes), played against the hub through its
// real inputs: a Kubernetes API server (the stand-in) where Flux applies DeploymentDescriptors and
// reports its Kustomizations, and clusters whose reconcilers report over OTLP (the official SDK
// exporters) or as Reconciler resources. Every commit id is a random 40-hex string.
//
// The shapes follow Flux (docs/research/flux-kustomization-status.md): a merge moves the branch head;
// the Kustomization goes Ready=Unknown while it reconciles, applies the descriptors (their
// managedFields change only when their content does), then sets lastAppliedRevision
// `<branch>@sha1:<commit>` and Ready=True "Applied revision: …" in one status write, with times to
// the second.
import { DEPLOYMENT_DESCRIPTORS, FLUX_KUSTOMIZATIONS, RECONCILERS } from '../../src/sources/kube/kube-objects.ts';
import type { FakeKubeApiServer } from './kube-apiserver.ts';
import { buildLogRecords, createExporter, ExportResultCode, type ExporterKind, exportLogs, type HubPorts, type LogSpec } from './otlp-client.ts';
import { randomCommit, randomName } from './random-ids.ts';

/**
 * A clock the scenario moves by hand; the stand-in API server and the hub's reports read it. It
 * never passes the real clock: the hub caps a report's time at its receipt.
 */
export class SimulatedClock {
  #ms: number;

  constructor(start: Date) {
    this.#ms = start.getTime();
  }

  now(): Date {
    return new Date(this.#ms);
  }

  advance(ms: number): Date {
    if (this.#ms + ms > Date.now()) throw new Error(`the scenario's clock would pass the real one by ${this.#ms + ms - Date.now()} ms`);
    this.#ms += ms;
    return this.now();
  }
}

export interface FlowWorkload {
  readonly workspace: string;
  readonly application: string;
  readonly name: string;
}

const HUB_NAMESPACE = 'kalypso';
const FLUX_NAMESPACE = 'flux-system';
/** Flux writes condition times to the second. */
const flux = (time: Date): string => `${new Date(Math.floor(time.getTime() / 1_000) * 1_000).toISOString().slice(0, 19)}Z`;

/** The GitOps repository: one branch per environment, one folder per workload's deployment target. */
export class GitOpsRepository {
  readonly url = `https://github.com/${randomName('org')}/platform-gitops`;
  readonly #heads = new Map<string, string>();
  readonly #versions = new Map<string, string>();
  /** Every commit of each branch, oldest first. */
  readonly history = new Map<string, string[]>();

  endpoint(environment: string, workload: FlowWorkload): string {
    return `${this.url}/${environment}/${workload.name}`;
  }

  head(environment: string): string {
    const head = this.#heads.get(environment);
    if (head === undefined) throw new Error(`no commit on ${environment} yet`);
    return head;
  }

  version(environment: string, workload: FlowWorkload): string | undefined {
    return this.#versions.get(`${environment}/${workload.name}`);
  }

  /** Merges a PR into the environment's branch: a new head, with the versions it sets. */
  merge(environment: string, versions: readonly [FlowWorkload, string][] = []): string {
    const commit = randomCommit();
    this.#heads.set(environment, commit);
    this.history.set(environment, [...(this.history.get(environment) ?? []), commit]);
    for (const [workload, version] of versions) this.#versions.set(`${environment}/${workload.name}`, version);
    return commit;
  }
}

/** Flux on the hub's own cluster: applies each environment branch's DeploymentDescriptors. */
export class DescriptorFlux {
  readonly #api: FakeKubeApiServer;
  readonly #clock: SimulatedClock;
  readonly #repo: GitOpsRepository;
  readonly #workloads: readonly FlowWorkload[];

  constructor(api: FakeKubeApiServer, clock: SimulatedClock, repo: GitOpsRepository, workloads: readonly FlowWorkload[]) {
    this.#api = api;
    this.#clock = clock;
    this.#repo = repo;
    this.#workloads = workloads;
  }

  kustomization(environment: string): string {
    return `descriptors-${environment}`;
  }

  descriptorName(environment: string, workload: FlowWorkload): string {
    return `${workload.name}-${environment}`;
  }

  /** Reconciles the branch's head: descriptors whose version changed are rewritten, then the status. */
  reconcile(environment: string): void {
    const name = this.kustomization(environment);
    const revision = `${environment}@sha1:${this.#repo.head(environment)}`;
    if (this.#api.get(FLUX_KUSTOMIZATIONS, FLUX_NAMESPACE, name) === undefined) {
      this.#api.apply(
        FLUX_KUSTOMIZATIONS,
        {
          apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
          kind: 'Kustomization',
          metadata: { name, namespace: FLUX_NAMESPACE },
          spec: { interval: '10m', path: './descriptors', prune: true, sourceRef: { kind: 'GitRepository', name: `platform-${environment}` } },
        },
        'kubectl',
      );
    }
    const previous = this.#api.get(FLUX_KUSTOMIZATIONS, FLUX_NAMESPACE, name)?.status ?? {};
    this.#setStatus(name, { ...previous, conditions: [this.#condition('Unknown', 'Progressing', 'Reconciliation in progress')] });
    this.#clock.advance(1_000);
    for (const workload of this.#workloads) {
      const version = this.#repo.version(environment, workload);
      if (version === undefined) continue;
      const current = this.#api.get(DEPLOYMENT_DESCRIPTORS, HUB_NAMESPACE, this.descriptorName(environment, workload));
      if (current?.spec?.workloadVersion?.version === version) continue;
      this.#api.apply(DEPLOYMENT_DESCRIPTORS, this.#descriptor(environment, workload, version), 'kustomize-controller');
    }
    this.#clock.advance(2_000);
    this.#setStatus(name, {
      observedGeneration: 1,
      lastAppliedRevision: revision,
      lastAttemptedRevision: revision,
      conditions: [this.#condition('True', 'ReconciliationSucceeded', `Applied revision: ${revision}`)],
    });
  }

  #condition(status: string, reason: string, message: string): Record<string, unknown> {
    return { type: 'Ready', status, reason, message, observedGeneration: 1, lastTransitionTime: flux(this.#clock.now()) };
  }

  #setStatus(name: string, status: Record<string, unknown>): void {
    this.#api.setStatus(FLUX_KUSTOMIZATIONS, FLUX_NAMESPACE, name, status, 'gotk-kustomize-controller');
  }

  #descriptor(environment: string, workload: FlowWorkload, version: string): Record<string, unknown> {
    return {
      apiVersion: 'hub.kalypso.io/v1alpha1',
      kind: 'DeploymentDescriptor',
      metadata: {
        name: this.descriptorName(environment, workload),
        namespace: HUB_NAMESPACE,
        labels: { 'kustomize.toolkit.fluxcd.io/name': this.kustomization(environment), 'kustomize.toolkit.fluxcd.io/namespace': FLUX_NAMESPACE },
      },
      spec: {
        workload: {
          name: workload.name,
          source: { repo: `https://github.com/contoso/${workload.name}`, branch: 'main', path: '.' },
          application: { name: workload.application, workspace: { name: workload.workspace } },
        },
        deploymentTarget: { name: 'main', environment, manifests: { repo: this.#repo.url, branch: environment, path: workload.name } },
        workloadVersion: { version, build: `build-${version}`, commit: randomCommit(), buildTime: new Date(this.#clock.now().getTime() - 600_000).toISOString() },
      },
    };
  }
}

export type ClusterChannel = ExporterKind | 'reconciler-resource';

/** A cluster of an environment: one Flux reconciler per workload, pulling the environment's branch. */
export class Cluster {
  readonly name: string;
  readonly environment: string;
  readonly channel: ClusterChannel;
  /** Workloads whose given version this cluster fails to deploy. */
  readonly failing = new Map<string, string>();
  /** What each reconciler reported last: its commit and status. */
  readonly states = new Map<string, { commit: string; status: string; message: string }>();
  silent = false;
  readonly #context: FlowContext;

  constructor(name: string, environment: string, channel: ClusterChannel, context: FlowContext) {
    this.name = name;
    this.environment = environment;
    this.channel = channel;
    this.#context = context;
  }

  /** Applies the branch's head: in progress, then (a few seconds later) success or failure per workload. */
  async apply(commit: string): Promise<void> {
    if (this.silent) return;
    const { clock, repo, workloads } = this.#context;
    await this.#report(workloads.map((workload) => [workload, commit, 'in_progress', 'Reconciliation in progress'] as const));
    clock.advance(2_000);
    await this.#report(
      workloads.map((workload) => {
        const fails = this.failing.get(workload.name) === repo.version(this.environment, workload);
        return fails
          ? ([workload, commit, 'failure', `Health check failed after 5m0s: timeout waiting for: [Deployment/${workload.name} status: 'InProgress']`] as const)
          : ([workload, commit, 'success', `Applied revision: ${this.environment}@sha1:${commit}`] as const);
      }),
    );
  }

  /** Reports the current states again, now (Flux reports each interval). */
  async heartbeat(): Promise<void> {
    if (this.silent) return;
    await this.#report(
      this.#context.workloads.flatMap((workload) => {
        const state = this.states.get(workload.name);
        return state === undefined ? [] : [[workload, state.commit, state.status, state.message] as const];
      }),
    );
  }

  async #report(reports: readonly (readonly [FlowWorkload, string, string, string])[]): Promise<void> {
    const { clock, repo, api, ports } = this.#context;
    const at = clock.now();
    for (const [workload, commit, status, message] of reports) this.states.set(workload.name, { commit, status, message });
    if (this.channel === 'reconciler-resource') {
      for (const [workload, commit, status, message] of reports) {
        api.apply(
          RECONCILERS,
          {
            apiVersion: 'hub.kalypso.io/v1alpha1',
            kind: 'Reconciler',
            metadata: { name: `${this.name}-${workload.name}`, namespace: HUB_NAMESPACE },
            spec: {
              hostName: this.name,
              reconcilerName: `flux-system/${workload.name}`,
              reconcilerType: 'flux',
              manifestsEndpoint: repo.endpoint(this.environment, workload),
              deployment: { gitOpsCommitId: `${this.environment}@sha1:${commit}`, status, statusMessage: message },
            },
          },
          `agent-${this.name}`,
        );
      }
      return;
    }
    const specs: LogSpec[] = reports.map(([workload, commit, status, message]) => ({
      resource: { 'k8s.cluster.name': this.name, 'kalypso.host.type': 'k8s-cluster' },
      eventName: 'kalypso.deployment.state',
      attributes: {
        'kalypso.reconciler.name': `flux-system/${workload.name}`,
        'kalypso.reconciler.type': 'flux',
        'vcs.repository.url.full': repo.url,
        'vcs.ref.head.name': this.environment,
        'kalypso.manifests.path': workload.name,
        'vcs.ref.head.revision': `${this.environment}@sha1:${commit}`,
        'kalypso.deployment.status': status,
      },
      body: message,
      time: at,
    }));
    const exporter = createExporter(this.channel, ports);
    try {
      const result = await exportLogs(exporter, await buildLogRecords(specs));
      if (result.code !== ExportResultCode.SUCCESS) throw new Error(`${this.name}: export failed: ${String(result.error)}`);
    } finally {
      await exporter.shutdown();
    }
  }
}

export interface FlowContext {
  readonly api: FakeKubeApiServer;
  readonly clock: SimulatedClock;
  readonly repo: GitOpsRepository;
  readonly workloads: readonly FlowWorkload[];
  readonly ports: HubPorts;
}
