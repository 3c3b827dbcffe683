// Prometheus metrics of one hub process, served at /metrics. One registry per hub (not the
// global default), so several hubs in one test process do not mix their counters.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type pg from 'pg';

export interface HubMetrics {
  readonly registry: Registry;
  /** Log records by kind and outcome (accepted, rejected, ignored). */
  readonly ingestRecords: Counter<'transport' | 'outcome'>;
  /** Export requests by transport and outcome (ok, partial, unavailable, invalid, unauthorized). */
  readonly ingestRequests: Counter<'transport' | 'outcome'>;
  /** Time from decoded request to committed transaction. */
  readonly writeSeconds: Histogram<'source'>;
  readonly inFlightWrites: Gauge;
  readonly ingestGroupExports: Histogram;
  /** HTTP API latency by method, route pattern and status. */
  readonly httpRequestSeconds: Histogram<'method' | 'route' | 'status'>;
  /** Periodic refreshes of the rollout table behind the delivery metrics. */
  readonly rolloutRefreshSeconds: Histogram;
  readonly rolloutsRefreshed: Counter;
  readonly summaryRefreshSeconds: Histogram;
  readonly summaryKeysRefreshed: Counter;
  /**
   * When this replica last finished a periodic refresh (idle ones too: nothing queued is not
   * lagging). Ticks skipped because another replica holds the refresh do not count, so the
   * fleet's newest value (max over replicas) ages only when nobody refreshes.
   */
  readonly rolloutRefreshLastRun: Gauge;
  readonly summaryRefreshLastRun: Gauge;
  /** --append-first: how long the oldest acknowledged report has waited to be projected (0: none waits). */
  readonly projectionLagSeconds: Gauge;
  /** --append-first: acknowledged reports not yet projected. */
  readonly projectionRowsBehind: Gauge;
  readonly projectedReports: Counter;
}

export function createHubMetrics(options: { processMetrics: boolean }): HubMetrics {
  const registry = new Registry();
  if (options.processMetrics) collectDefaultMetrics({ register: registry, prefix: 'kalypso_' });
  // Registered in this order, and so listed in this order at /metrics.
  return {
    registry,
    ...ingestMetrics(registry),
    ...storeWriteMetrics(registry),
    httpRequestSeconds: httpRequestMetric(registry),
    ...refreshMetrics(registry),
    ...projectionMetrics(registry),
  };
}

/** What the OTLP receivers take in. */
function ingestMetrics(registry: Registry): Pick<HubMetrics, 'ingestRecords' | 'ingestRequests'> {
  return {
    ingestRecords: new Counter({
      name: 'kalypso_ingest_records_total',
      help: 'OTLP log records received, by outcome: accepted (stored), rejected (invalid), ignored (not a Kalypso record).',
      labelNames: ['transport', 'outcome'],
      registers: [registry],
    }),
    ingestRequests: new Counter({
      name: 'kalypso_ingest_requests_total',
      help: 'OTLP export requests, by transport and outcome.',
      labelNames: ['transport', 'outcome'],
      registers: [registry],
    }),
  };
}

/** How the store keeps up with what is received. */
function storeWriteMetrics(registry: Registry): Pick<HubMetrics, 'writeSeconds' | 'ingestGroupExports' | 'inFlightWrites'> {
  return {
    writeSeconds: new Histogram({
      name: 'kalypso_store_write_seconds',
      help: 'Time to commit one batch of normalized records.',
      labelNames: ['source'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    ingestGroupExports: new Histogram({
      name: 'kalypso_ingest_group_exports',
      help: 'OTLP exports written together in one transaction (group commit): 1 when the store keeps up.',
      buckets: [1, 2, 4, 8, 16, 32, 64],
      registers: [registry],
    }),
    inFlightWrites: new Gauge({
      name: 'kalypso_store_writes_in_flight',
      help: 'Batches being written or waiting for a database connection.',
      registers: [registry],
    }),
  };
}

/** The projector of --append-first (src/store/projector.ts): every hub reports the shared backlog. */
function projectionMetrics(registry: Registry): Pick<HubMetrics, 'projectionLagSeconds' | 'projectionRowsBehind' | 'projectedReports'> {
  return {
    projectionLagSeconds: new Gauge({
      name: 'kalypso_projection_lag_seconds',
      help: 'How long the oldest acknowledged report not yet folded into current state, history and summaries has waited (0: none waits).',
      registers: [registry],
    }),
    projectionRowsBehind: new Gauge({
      name: 'kalypso_projection_rows_behind',
      help: 'Acknowledged reports not yet folded into current state, history and summaries (at most; rolled-back writes leave gaps).',
      registers: [registry],
    }),
    projectedReports: new Counter({
      name: 'kalypso_projected_reports_total',
      help: 'Acknowledged reports this hub folded into current state, history and summaries.',
      registers: [registry],
    }),
  };
}

function httpRequestMetric(registry: Registry): HubMetrics['httpRequestSeconds'] {
  return new Histogram({
    name: 'kalypso_http_request_seconds',
    help: 'HTTP API request latency.',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60, 300],
    registers: [registry],
  });
}

/** The periodic refreshes behind the reports: the rollout table and the summaries. */
function refreshMetrics(
  registry: Registry,
): Pick<HubMetrics, 'rolloutRefreshSeconds' | 'rolloutsRefreshed' | 'summaryRefreshSeconds' | 'summaryKeysRefreshed' | 'rolloutRefreshLastRun' | 'summaryRefreshLastRun'> {
  return {
    rolloutRefreshSeconds: new Histogram({
      name: 'kalypso_rollout_refresh_seconds',
      help: 'Time of one periodic refresh of the rollouts behind the delivery metrics (ticks with nothing queued, or while another replica refreshes, are not counted).',
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    rolloutsRefreshed: new Counter({
      name: 'kalypso_rollouts_refreshed_total',
      help: 'Rollouts whose delivery numbers a periodic refresh changed.',
      registers: [registry],
    }),
    summaryRefreshSeconds: new Histogram({
      name: 'kalypso_summary_refresh_seconds',
      help: 'Time of one periodic refresh of the report summaries (status counts, drift, hosts); idle ticks are not counted.',
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    summaryKeysRefreshed: new Counter({
      name: 'kalypso_summary_keys_refreshed_total',
      help: 'Reconcilers and hosts a periodic refresh of the report summaries folded in.',
      labelNames: ['kind'],
      registers: [registry],
    }),
    rolloutRefreshLastRun: new Gauge({
      name: 'kalypso_rollout_refresh_last_run_timestamp_seconds',
      help: 'When this replica last finished a periodic rollout refresh, idle or not (0: never). Ticks another replica did are not counted.',
      registers: [registry],
    }),
    summaryRefreshLastRun: new Gauge({
      name: 'kalypso_summary_refresh_last_run_timestamp_seconds',
      help: 'When this replica last finished a periodic summary refresh, idle or not (0: never). Ticks another replica did are not counted.',
      registers: [registry],
    }),
  };
}

/** A gauge read at scrape time. */
function scrapedGauge(metrics: HubMetrics, name: string, help: string, read: () => number): void {
  new Gauge({
    name,
    help,
    registers: [metrics.registry],
    collect() {
      this.set(read());
    },
  });
}

/** Pool gauges read at scrape time. */
export function registerPoolMetrics(metrics: HubMetrics, pool: pg.Pool): void {
  const gauge = (name: string, help: string, read: () => number): void => scrapedGauge(metrics, name, help, read);
  gauge('kalypso_db_pool_connections', 'Open database connections.', () => pool.totalCount);
  gauge('kalypso_db_pool_idle_connections', 'Idle database connections.', () => pool.idleCount);
  gauge('kalypso_db_pool_waiting_requests', 'Queries waiting for a database connection.', () => pool.waitingCount);
}

/**
 * Readiness as gauges, probed once per scrape (both gauges share the probe): `kalypso_ready` is 1
 * when /readyz would answer ready, `kalypso_database_up` when the database answers at all (it may
 * answer while migrations still run). A Kubernetes probe that fails takes a pod out of its Service
 * and tells nobody; these let an alert say which of the two is wrong.
 */
export function registerReadinessMetrics(metrics: HubMetrics, probe: () => Promise<{ readonly ready: boolean; readonly databaseUp: boolean }>): void {
  let current: Promise<{ readonly ready: boolean; readonly databaseUp: boolean }> | undefined;
  const probeOnce = (): Promise<{ readonly ready: boolean; readonly databaseUp: boolean }> => {
    if (current === undefined) {
      current = probe();
      // The collectors of one scrape run together: the next scrape probes again.
      const forget = (): void => void setImmediate(() => (current = undefined));
      current.then(forget, forget);
    }
    return current;
  };
  new Gauge({
    name: 'kalypso_ready',
    help: '1 when the hub is ready to serve (/readyz): migrations applied and the database answering; 0 otherwise.',
    registers: [metrics.registry],
    async collect() {
      this.set((await probeOnce()).ready ? 1 : 0);
    },
  });
  new Gauge({
    name: 'kalypso_database_up',
    help: '1 when the database answers a trivial query within the readiness timeout; 0 otherwise.',
    registers: [metrics.registry],
    async collect() {
      this.set((await probeOnce()).databaseUp ? 1 : 0);
    },
  });
}

/** The OTLP receivers' decode memory: its budget and what requests in flight hold of it. */
export function registerDecodeMemoryMetrics(metrics: HubMetrics, memory: { readonly capacityBytes: number; readonly reservedBytes: number }): void {
  scrapedGauge(metrics, 'kalypso_ingest_decode_memory_budget_bytes', 'Memory OTLP requests may decode into at once (half the heap).', () => memory.capacityBytes);
  scrapedGauge(metrics, 'kalypso_ingest_decode_memory_reserved_bytes', 'Decode memory held by OTLP requests in flight.', () => memory.reservedBytes);
}
