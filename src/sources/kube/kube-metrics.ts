// The CRD watcher's metrics. A watch that keeps failing (RBAC withdrawn, API server unreachable, a
// CRD deleted) is retried with backoff for ever and only logged: the counter lets an alert say so.
// Registered on every hub (a hub without a cluster shows it at zero), so that rules over /metrics
// name a metric that always exists. No Kubernetes client here: hub.ts loads this without one.
import { Counter, type Registry } from 'prom-client';

export interface KubeMetrics {
  /** Failed lists and broken watches, by resource (plural), each followed by a restart with backoff. */
  readonly watchErrors: Counter<'resource'>;
}

export function createKubeMetrics(registry: Registry): KubeMetrics {
  return {
    watchErrors: new Counter({
      name: 'kalypso_kube_watch_errors_total',
      help: 'CRD watcher lists that failed and watches that broke, by resource; each is retried with backoff.',
      labelNames: ['resource'],
      registers: [registry],
    }),
  };
}
