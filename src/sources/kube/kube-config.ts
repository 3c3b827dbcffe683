// Whether and how to reach a Kubernetes API server: --kube=auto starts the CRD watcher when a
// kubeconfig (KUBECONFIG, ~/.kube/config) or an in-cluster service account is found.
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';

export type KubeMode = 'auto' | 'on' | 'off';

const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/**
 * The client configuration to use, or undefined when the watcher stays off. The Kubernetes client
 * is loaded only when there is a cluster to talk to: a hub without one does not carry it in memory.
 */
export async function loadKubeConfig(mode: KubeMode, env: NodeJS.ProcessEnv): Promise<KubeConfig | undefined> {
  if (mode === 'off') return undefined;
  const files = (env.KUBECONFIG ?? '').split(path.delimiter).filter((file) => file !== '');
  const home = path.join(os.homedir(), '.kube', 'config');
  const available = files.length > 0 || existsSync(home) || env.KUBERNETES_SERVICE_HOST !== undefined;
  if (!available) {
    if (mode === 'on') {
      throw new Error('--kube=on, but no kubeconfig (KUBECONFIG, ~/.kube/config) and no in-cluster service account was found');
    }
    return undefined;
  }
  const { KubeConfig } = await import('@kubernetes/client-node');
  const config = new KubeConfig();
  if (files.length > 0) {
    // Several files merge as kubectl merges them: the first one names the current context.
    config.loadFromFile(files[0]!);
    for (const file of files.slice(1)) {
      const other = new KubeConfig();
      other.loadFromFile(file);
      config.mergeConfig(other, true);
    }
  } else if (existsSync(home)) {
    config.loadFromFile(home);
  } else {
    config.loadFromCluster();
  }
  return config;
}

/** The namespace the hub runs in (in a cluster), for its leader-election lease. */
export function ownNamespace(): string | undefined {
  try {
    return readFileSync(SERVICE_ACCOUNT_NAMESPACE, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}
