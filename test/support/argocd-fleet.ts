// Argo CD clusters in the promotion flow (promotion-flow.ts): one Application per workload, pulling
// the environment's branch of the GitOps repository at the workload's path — spelled as people
// write an Application (`.git`, `./path`), which the hub puts in the descriptors' normal form. Two
// ways in: an edge cluster whose collector sends its Applications over OTLP (k8sobjects, watch
// mode, in-cluster destinations), and a management cluster's Argo CD deploying to the cluster by
// name, its Applications read by the hub's CRD watcher from the Kubernetes stand-in.
import { ARGOCD_APPLICATIONS } from '../../src/sources/kube/kube-objects.ts';
import { type AppMoment, type AppShape, applicationObject, applicationRecord, moments } from './argocd-applications.ts';
import { buildLogRecords, createExporter, ExportResultCode, exportLogs } from './otlp-client.ts';
import type { FlowContext, FlowWorkload } from './promotion-flow.ts';

export type ArgoCdChannel = 'k8sobjects' | 'watcher';

export class ArgoCdCluster {
  readonly name: string;
  readonly environment: string;
  readonly channel: ArgoCdChannel;
  /** Workloads whose sync fails at the next apply (once). */
  readonly failing = new Set<string>();
  /** The commit each application was last synced to. */
  readonly #synced = new Map<string, string>();
  readonly #context: FlowContext;

  constructor(name: string, environment: string, channel: ArgoCdChannel, context: FlowContext) {
    this.name = name;
    this.environment = environment;
    this.channel = channel;
    this.#context = context;
  }

  /** The application of a workload: reconciler `argocd/<name>` on this cluster. */
  application(workload: FlowWorkload): AppShape {
    return {
      name: `${workload.name}-${this.name}`,
      destination: this.channel === 'watcher' ? { name: this.name } : { name: 'in-cluster' },
      sources: [{ repoURL: `${this.#context.repo.url}.git`, targetRevision: this.environment, path: `./${workload.name}` }],
    };
  }

  /** A refresh sees the branch's new head: every application OutOfSync on it. */
  async compare(commit: string): Promise<void> {
    await this.#write((workload, at) => moments.outOfSync([commit], [this.#synced.get(workload.name) ?? commit], at));
  }

  /** The automated sync of `commit`: running, then succeeded (or failed, for the workloads set to fail). */
  async sync(commit: string): Promise<void> {
    await this.#write((_, at) => moments.syncing([commit], at));
    this.#context.clock.advance(2_000);
    await this.#write((workload, at) => {
      if (this.failing.delete(workload.name)) return moments.failed([commit], at, `one or more objects failed to apply, reason: Deployment.apps "${workload.name}" is invalid (retried 5 times).`);
      this.#synced.set(workload.name, commit);
      return moments.synced([commit], at);
    });
  }

  async apply(commit: string): Promise<void> {
    await this.compare(commit);
    this.#context.clock.advance(1_000);
    await this.sync(commit);
  }

  async #write(momentOf: (workload: FlowWorkload, at: Date) => AppMoment): Promise<void> {
    const { clock, workloads, api } = this.#context;
    const objects = workloads.map((workload) => applicationObject(this.application(workload), momentOf(workload, clock.now())));
    if (this.channel === 'watcher') {
      for (const { metadata, ...object } of objects) {
        api.apply(ARGOCD_APPLICATIONS, { ...object, metadata: { name: metadata.name, namespace: metadata.namespace } }, 'argocd-application-controller');
      }
      return;
    }
    const exporter = createExporter('grpc', this.#context.ports, { gzip: true });
    try {
      const records = await buildLogRecords(objects.map((object) => applicationRecord(this.name, object, 'MODIFIED', clock.now())));
      const result = await exportLogs(exporter, records);
      if (result.code !== ExportResultCode.SUCCESS) throw new Error(`${this.name}: export failed: ${String(result.error)}`);
    } finally {
      await exporter.shutdown();
    }
  }
}
