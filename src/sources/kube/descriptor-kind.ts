// DeploymentDescriptors → desired state, with the Flux Kustomizations watched for them: a
// descriptor that takes its commit from a Kustomization is due again when that Kustomization
// changes, found through an index of which descriptors follow which Kustomization.
import { DescriptorReconciler } from './descriptor-reconciler.ts';
import type { KindSetup, WatchedKind } from './kind-setup.ts';
import { DEPLOYMENT_DESCRIPTORS, FLUX_KUSTOMIZATIONS } from './kube-objects.ts';
import { KustomizationIndex } from './kustomization-index.ts';

const DESCRIPTORS: WatchedKind = { name: 'descriptor', type: DEPLOYMENT_DESCRIPTORS, required: true };
const KUSTOMIZATIONS: WatchedKind = { name: 'kustomization', type: FLUX_KUSTOMIZATIONS, required: false };

export const descriptorKind: KindSetup = (context) => {
  const index = new KustomizationIndex();
  return {
    for: DESCRIPTORS,
    reconciler: new DescriptorReconciler((key) => context.get(KUSTOMIZATIONS.name, key)),
    changed: (key, object) => index.update(key, object),
    watches: [{ kind: KUSTOMIZATIONS, due: (key) => index.descriptorsOf(key) }],
  };
};
