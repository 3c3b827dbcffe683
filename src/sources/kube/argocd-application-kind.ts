// Argo CD Applications → real state, read-only (CONTRACT 4): on a management cluster where Argo CD
// deploys to many destinations, each application's reconcilers land on the hosts its destination
// names, the watched cluster's own for in-cluster ones (--kube-cluster-name). --argocd off leaves
// the kind out; auto watches it only while the API server serves it.
import { ArgoApplicationReconciler } from './argocd-application-reconciler.ts';
import type { KindSetup } from './kind-setup.ts';
import { ARGOCD_APPLICATIONS } from './kube-objects.ts';

export const argoApplicationKind: KindSetup = (context) => {
  const { argocd, clusterName } = context.settings;
  if (argocd === 'off') return undefined;
  const reconciler = new ArgoApplicationReconciler(clusterName, context.log);
  return {
    for: { name: 'argocd-application', type: ARGOCD_APPLICATIONS, required: false, whenServed: argocd === 'auto' },
    reconciler,
    changed: (key, object, previous) => reconciler.changed(key, object, previous),
  };
};
