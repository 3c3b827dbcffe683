// Reconciler resources → real state. Deletions are remembered until processed (to take the state
// out), and resources without a heartbeat are confirmed on a timer while they exist.
import type { KindSetup, WatchedKind } from './kind-setup.ts';
import { RECONCILERS } from './kube-objects.ts';
import { ReconcilerResources } from './reconciler-resources.ts';

const RECONCILER_RESOURCES: WatchedKind = { name: 'reconciler', type: RECONCILERS, required: true };

export const reconcilerKind: KindSetup = (context) => {
  const reconciler = new ReconcilerResources(
    {
      list: () => context.list(RECONCILERS),
      requeue: (key) => context.requeue(RECONCILER_RESOURCES.name, key),
      confirmEveryMs: context.confirmEveryMs,
      clock: context.clock,
    },
    context.log,
  );
  return {
    for: RECONCILER_RESOURCES,
    reconciler,
    changed: (key, object, previous) => reconciler.changed(key, object, previous),
    start: () => reconciler.start(),
    stop: () => reconciler.stop(),
  };
};
