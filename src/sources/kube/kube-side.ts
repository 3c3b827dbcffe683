// The hub's Kubernetes side, in one module that the hub imports only when it has a cluster to
// watch (so a hub without one never loads the Kubernetes client): the CRD watcher, and the Secret
// reader that AzureResourceGraph secretRefs need.
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../../log/logger.ts';
import type { ResourceGraphPollers, SecretReader } from '../resource-graph/resource-graph-pollers.ts';
import { IN_CLUSTER_CONFIG_NAME, type KubeOverrides, kubeOptionsFrom, type KubeWatcherConfig } from './kube-settings.ts';
import type { KubeMetrics } from './kube-metrics.ts';
import { KubeSource } from './kube-source.ts';
import { kubeSecretReader } from './secret-reader.ts';

export interface KubeSide {
  readonly source: KubeSource;
  readonly readSecret: SecretReader;
}

export function kubeSideFor(
  kubeConfig: KubeConfig,
  config: KubeWatcherConfig,
  clock: () => Date,
  overrides: KubeOverrides,
  pollers: ResourceGraphPollers,
  log: Logger,
  metrics?: KubeMetrics,
): KubeSide {
  const options = kubeOptionsFrom(config, clock, overrides, kubeConfig.getCurrentCluster()?.name);
  if (options.kinds.argocd !== 'off' && options.kinds.clusterName === IN_CLUSTER_CONFIG_NAME) {
    log.warn(
      { clusterName: IN_CLUSTER_CONFIG_NAME },
      'the watched cluster has no name (an in-cluster service account): Argo CD Applications deployed in-cluster are recorded on a host named inCluster; set --kube-cluster-name',
    );
  }
  return {
    source: new KubeSource(kubeConfig, metrics === undefined ? options : { ...options, metrics }, pollers, log),
    readSecret: kubeSecretReader(kubeConfig),
  };
}
