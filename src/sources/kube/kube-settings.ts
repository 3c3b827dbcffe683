// The CRD watcher's settings (whether it runs, which namespaces, how often it resyncs, its
// leader-election Lease), the numbers that shape it, and its options made from both.
import { nameList, oneOf, optionalText, text, duration } from '../../config/setting-parsers.ts';
import type { ConfigOf, Setting } from '../../config/setting.ts';
import type { STATE_SETTINGS } from '../../store/state-settings.ts';
import { ownNamespace } from './kube-config.ts';
import type { KubeSourceOptions } from './kube-source.ts';

export const KUBE_SETTINGS = {
  kube: {
    flag: 'kube',
    group: 'sources',
    env: ['KALYPSO_KUBE'],
    default: 'auto',
    description:
      'Kubernetes CRD watcher: `auto` starts it when a kubeconfig (KUBECONFIG, ~/.kube/config) or an in-cluster service account is found.',
    parse: oneOf(['auto', 'on', 'off'] as const),
  } satisfies Setting<'auto' | 'on' | 'off'>,
  kubeNamespaces: {
    flag: 'kube-namespaces',
    group: 'sources',
    env: ['KALYPSO_KUBE_NAMESPACES'],
    default: [],
    description: 'Namespaces to watch, comma-separated (Flux Kustomizations are read from the same ones). Empty: all.',
    parse: nameList,
    shownDefault: '(all)',
  } satisfies Setting<readonly string[]>,
  kubeResync: {
    flag: 'kube-resync',
    group: 'sources',
    env: ['KALYPSO_KUBE_RESYNC'],
    default: 10 * 60_000,
    description:
      'How often the CRD watcher re-processes every watched resource (and, when shorter than a third of `--stale-after`, confirms Reconcilers without a heartbeat).',
    parse: duration,
    shownDefault: '10m',
  } satisfies Setting<number>,
  argocd: {
    flag: 'argocd',
    group: 'sources',
    env: ['KALYPSO_ARGOCD'],
    default: 'auto',
    description:
      'Argo CD `Application`s read by the CRD watcher (read-only, never written): `auto` watches them when the API server serves applications.argoproj.io (a 404 on list means Argo CD is not installed; asked again every `--kube-resync`), `on` always (warning while it cannot), `off` never.',
    parse: oneOf(['auto', 'on', 'off'] as const),
  } satisfies Setting<ArgoCdMode>,
  kubeClusterName: {
    flag: 'kube-cluster-name',
    group: 'sources',
    env: ['KALYPSO_KUBE_CLUSTER_NAME'],
    default: undefined,
    description:
      'The name of the cluster the CRD watcher watches, as hosts are named: the host of Argo CD Applications whose destination is `in-cluster` (or https://kubernetes.default.svc). Default: the kubeconfig context’s cluster.',
    parse: optionalText,
    shownDefault: '(context’s cluster)',
  } satisfies Setting<string | undefined>,
  leaderElectionNamespace: {
    flag: 'leader-election-namespace',
    group: 'sources',
    env: ['KALYPSO_LEADER_ELECTION_NAMESPACE'],
    default: undefined,
    description: 'Namespace of the leader-election Lease. Default: the hub’s own namespace in a cluster, else `default`.',
    parse: optionalText,
    shownDefault: '(own)',
  } satisfies Setting<string | undefined>,
  leaderElectionLease: {
    flag: 'leader-election-lease',
    group: 'sources',
    env: ['KALYPSO_LEADER_ELECTION_LEASE'],
    default: 'kalypso-hub',
    description: 'Name of the Lease the hub replicas elect their leader with.',
    parse: text,
  } satisfies Setting<string>,
} as const;

export type ArgoCdMode = 'auto' | 'on' | 'off';

/** The watcher's settings its kinds read (kind-setup.ts KindContext). */
export interface KindSettings {
  readonly argocd: ArgoCdMode;
  /** The watched cluster's name: where in-cluster destinations are. */
  readonly clusterName: string;
}

/**
 * The name client-node gives the cluster of an in-cluster service account's configuration: no
 * name anyone knows the cluster by, so the hub warns when it would use it.
 */
export const IN_CLUSTER_CONFIG_NAME = 'inCluster';

export const KUBE_TUNING = {
  /** How long a leader's Lease holds without renewal. */
  leaseDurationMs: 15_000,
  /** How often replicas try to take or renew the Lease. */
  leaseRetryMs: 2_000,
  /** Changed objects processed in one batch: their records stored in one transaction. */
  queueBatchSize: 500,
  /** How long the queue gathers changes before a batch goes, so that a burst is one transaction. */
  queueBatchDelayMs: 50,
} as const;

/** What tests change of the watcher's timing and identity. */
export interface KubeOverrides {
  readonly leaseDurationMs?: number;
  readonly leaseRetryPeriodMs?: number;
  readonly identity?: string;
}

export type KubeWatcherConfig = ConfigOf<typeof KUBE_SETTINGS & Pick<typeof STATE_SETTINGS, 'staleAfter'>>;

/** The watcher's options from the hub's settings; `contextCluster`: the kubeconfig context's cluster. */
export function kubeOptionsFrom(config: KubeWatcherConfig, clock: () => Date, overrides: KubeOverrides = {}, contextCluster?: string): KubeSourceOptions {
  return {
    namespaces: config.kubeNamespaces,
    kinds: { argocd: config.argocd, clusterName: config.kubeClusterName ?? contextCluster ?? IN_CLUSTER_CONFIG_NAME },
    resyncMs: config.kubeResync,
    // A third of stale-after: two confirmations may fail before a held resource turns stale.
    confirmEveryMs: Math.min(config.kubeResync, config.staleAfter / 3),
    clock,
    leaseNamespace: config.leaderElectionNamespace ?? ownNamespace() ?? 'default',
    leaseName: config.leaderElectionLease,
    leaseDurationMs: overrides.leaseDurationMs ?? KUBE_TUNING.leaseDurationMs,
    retryPeriodMs: overrides.leaseRetryPeriodMs ?? KUBE_TUNING.leaseRetryMs,
    ...(overrides.identity === undefined ? {} : { identity: overrides.identity }),
  };
}
