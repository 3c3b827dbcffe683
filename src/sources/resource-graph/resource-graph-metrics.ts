import { Counter, Gauge, type Registry } from 'prom-client';

/** Per-source metrics of the Resource Graph pollers. */
export interface ResourceGraphMetrics {
  readonly lastSuccess: Gauge<'source'>;
  readonly rows: Gauge<'source'>;
  readonly upserted: Counter<'source'>;
  readonly removed: Counter<'source'>;
  readonly requests: Counter<'source'>;
  readonly throttled: Counter<'source'>;
  readonly errors: Counter<'source'>;
  readonly ambiguous: Gauge<'source'>;
}

export function createResourceGraphMetrics(registry: Registry): ResourceGraphMetrics {
  const registers = [registry];
  const labelNames = ['source'] as const;
  return {
    lastSuccess: new Gauge({ name: 'kalypso_arg_last_success_timestamp_seconds', help: 'When a source last polled successfully.', labelNames, registers }),
    rows: new Gauge({ name: 'kalypso_arg_rows', help: 'Flux configuration rows seen by the last successful poll.', labelNames, registers }),
    upserted: new Counter({ name: 'kalypso_arg_reconcilers_upserted_total', help: 'Reconciler states written by polls.', labelNames, registers }),
    removed: new Counter({ name: 'kalypso_arg_reconcilers_removed_total', help: 'Reconcilers removed because they vanished from Resource Graph.', labelNames, registers }),
    requests: new Counter({ name: 'kalypso_arg_requests_total', help: 'Resource Graph query requests (pages and retries).', labelNames, registers }),
    throttled: new Counter({ name: 'kalypso_arg_throttled_total', help: 'Resource Graph requests answered 429.', labelNames, registers }),
    errors: new Counter({ name: 'kalypso_arg_poll_errors_total', help: 'Polls that failed.', labelNames, registers }),
    ambiguous: new Gauge({
      name: 'kalypso_arg_ambiguous_kustomizations',
      help: 'Application Kustomizations of the last poll named env.workload.target that several deployment targets match (not recorded).',
      labelNames,
      registers,
    }),
  };
}
