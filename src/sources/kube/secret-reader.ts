import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { SecretReader } from '../resource-graph/resource-graph-pollers.ts';

/** Reads Secrets through the Kubernetes API (for AzureResourceGraph secretRefs). */
export function kubeSecretReader(kubeConfig: KubeConfig): SecretReader {
  const api = kubeConfig.makeApiClient(CoreV1Api);
  return async (namespace, name) => {
    const secret = await api.readNamespacedSecret({ name, namespace });
    return Object.fromEntries(Object.entries(secret.data ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64').toString('utf8')]));
  };
}
