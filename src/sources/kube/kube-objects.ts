// The Kubernetes resources the hub watches, and where each lives in the API. (The objects
// themselves, as they arrive: wire/kube-object.ts.)
import { APPLICATION_KIND, APPLICATIONS, ARGOCD_GROUP, ARGOCD_VERSION } from '../../wire/argocd-application.ts';
import type { KubeObject } from '../../wire/kube-object.ts';

export interface ResourceType {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
}

export const HUB_GROUP = 'hub.kalypso.io';
export const HUB_VERSION = 'v1alpha1';

export const DEPLOYMENT_DESCRIPTORS: ResourceType = {
  group: HUB_GROUP,
  version: HUB_VERSION,
  plural: 'deploymentdescriptors',
  kind: 'DeploymentDescriptor',
};
export const RECONCILERS: ResourceType = { group: HUB_GROUP, version: HUB_VERSION, plural: 'reconcilers', kind: 'Reconciler' };
export const AZURE_RESOURCE_GRAPHS: ResourceType = {
  group: HUB_GROUP,
  version: HUB_VERSION,
  plural: 'azureresourcegraphs',
  kind: 'AzureResourceGraph',
};
export const FLUX_KUSTOMIZATIONS: ResourceType = {
  group: 'kustomize.toolkit.fluxcd.io',
  version: 'v1',
  plural: 'kustomizations',
  kind: 'Kustomization',
};

/** Argo CD's Applications: read, never written. */
export const ARGOCD_APPLICATIONS: ResourceType = { group: ARGOCD_GROUP, version: ARGOCD_VERSION, plural: APPLICATIONS, kind: APPLICATION_KIND };

/** The API path of a resource type's collection, in one namespace or in all. */
export function collectionPath(type: ResourceType, namespace: string | undefined): string {
  const prefix = type.group === '' ? `/api/${type.version}` : `/apis/${type.group}/${type.version}`;
  return namespace === undefined ? `${prefix}/${type.plural}` : `${prefix}/namespaces/${namespace}/${type.plural}`;
}

/** `namespace/name`, the key of a namespaced object. */
export function objectKey(object: KubeObject): string {
  return `${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`;
}
