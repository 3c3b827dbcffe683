// AzureResourceGraph resources → Resource Graph poll loops, one per resource, stopped with the
// watcher (after its last batch, so that no batch starts a loop after the stop).
import { GraphReconciler } from './graph-reconciler.ts';
import type { KindSetup, WatchedKind } from './kind-setup.ts';
import { AZURE_RESOURCE_GRAPHS } from './kube-objects.ts';

const GRAPHS: WatchedKind = { name: 'graph', type: AZURE_RESOURCE_GRAPHS, required: true };

export const azureResourceGraphKind: KindSetup = (context) => {
  const reconciler = new GraphReconciler(context.pollers, context.status, (key) => context.get(GRAPHS.name, key), context.log);
  return { for: GRAPHS, reconciler, stop: () => reconciler.stopAll() };
};
