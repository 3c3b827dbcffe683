// The Kubernetes CRD watcher as a Source. Every replica campaigns for a Lease; the leader alone
// watches the hub's resources, writes their statuses and runs the Resource Graph pollers, so
// several replicas never write the same status twice. All replicas serve OTLP and the API.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { CoordinationV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../../log/logger.ts';
import type { ResourceGraphPollers } from '../resource-graph/resource-graph-pollers.ts';
import type { Source } from '../source.ts';
import type { RecordSink } from '../../model/record-sink.ts';
import { KubeController } from './kube-controller.ts';
import type { KindSettings } from './kube-settings.ts';
import type { KubeMetrics } from './kube-metrics.ts';
import { LeaderElection } from './leader-election.ts';

export interface KubeSourceOptions {
  readonly namespaces: readonly string[];
  readonly kinds: KindSettings;
  readonly resyncMs: number;
  /** See KubeControllerOptions. */
  readonly confirmEveryMs: number;
  readonly clock: () => Date;
  readonly leaseNamespace: string;
  readonly leaseName: string;
  readonly leaseDurationMs: number;
  readonly retryPeriodMs: number;
  /** This replica's name in the lease (default: host name, process id and a random suffix). */
  readonly identity?: string;
  readonly metrics?: KubeMetrics;
}

export class KubeSource implements Source {
  readonly name = 'kube';
  readonly #kubeConfig: KubeConfig;
  readonly #options: KubeSourceOptions;
  readonly #pollers: ResourceGraphPollers;
  readonly #log: Logger;
  readonly #stop = new AbortController();
  #election: LeaderElection | undefined;
  #campaign: Promise<void> | undefined;
  #controller: KubeController | undefined;
  #controllerStarted: Promise<void> | undefined;

  constructor(kubeConfig: KubeConfig, options: KubeSourceOptions, pollers: ResourceGraphPollers, log: Logger) {
    this.#kubeConfig = kubeConfig;
    this.#options = options;
    this.#pollers = pollers;
    this.#log = log.child({ source: 'kube' });
  }

  get isLeader(): boolean {
    return this.#election?.isLeader ?? false;
  }

  /** The running controller, while this replica leads (tests wait on it). */
  get controller(): KubeController | undefined {
    return this.#controller;
  }

  start(sink: RecordSink, signal: AbortSignal): Promise<void> {
    const identity = this.#options.identity ?? `${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
    const api = this.#kubeConfig.makeApiClient(CustomObjectsApi);
    this.#election = new LeaderElection(
      this.#kubeConfig.makeApiClient(CoordinationV1Api),
      {
        namespace: this.#options.leaseNamespace,
        leaseName: this.#options.leaseName,
        identity,
        leaseDurationMs: this.#options.leaseDurationMs,
        retryPeriodMs: this.#options.retryPeriodMs,
      },
      {
        onStartedLeading: () => {
          const controller = new KubeController(
            this.#kubeConfig,
            api,
            sink,
            this.#pollers,
            {
              namespaces: this.#options.namespaces,
              kinds: this.#options.kinds,
              resyncMs: this.#options.resyncMs,
              confirmEveryMs: this.#options.confirmEveryMs,
              clock: this.#options.clock,
              ...(this.#options.metrics === undefined ? {} : { metrics: this.#options.metrics }),
            },
            this.#log,
          );
          this.#controller = controller;
          // Listing thousands of resources can outlast a lease period: the campaign loop must
          // keep renewing meanwhile, so the controller starts in the background.
          this.#controllerStarted = controller.start().catch((error: unknown) => {
            this.#log.error({ err: error }, 'CRD watcher failed to start');
          });
          return Promise.resolve();
        },
        onStoppedLeading: async () => {
          const controller = this.#controller;
          this.#controller = undefined;
          this.#controllerStarted = undefined;
          await controller?.stop();
        },
      },
      this.#log,
    );
    signal.addEventListener('abort', () => this.#stop.abort(), { once: true });
    this.#campaign = this.#election.run(this.#stop.signal).catch((error: unknown) => {
      this.#log.error({ err: error }, 'leader election stopped');
    });
    this.#log.info({ identity, namespaces: this.#options.namespaces.length === 0 ? 'all' : this.#options.namespaces }, 'CRD watcher campaigning for leadership');
    return Promise.resolve();
  }

  /** Resolves once this replica leads and its informers have listed the hub's resources. */
  async synced(): Promise<void> {
    while (this.#controllerStarted === undefined && !this.#stop.signal.aborted) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await this.#controllerStarted;
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#campaign;
  }
}
