// Wires the hub together — the only module that knows every part:
// sources (OTLP) → normalizer → store (PostgreSQL) ← API.
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import type { HubConfig } from './config/config.ts';
import { SETTINGS } from './config/settings.ts';
import { createApiApp } from './api/app.ts';
import { type HttpListener, listenHttp } from './http/listen.ts';
import type { Logger } from './log/logger.ts';
import { createHubMetrics, registerPoolMetrics } from './metrics/hub-metrics.ts';
import { loadKubeConfig, ownNamespace } from './sources/kube/kube-config.ts';
import type { KubeSource } from './sources/kube/kube-source.ts';
import { OtlpSource } from './sources/otlp/otlp-source.ts';
import { loadArgConfig } from './config/arg-config.ts';
import type { ResourceGraphSourceSpec } from './normalize/kube-resources.ts';
import { TlsFiles } from './security/tls-files.ts';
import { credentialFor } from './sources/resource-graph/credentials.ts';
import { createResourceGraphMetrics } from './sources/resource-graph/resource-graph-metrics.ts';
import { ResourceGraphPollerPool } from './sources/resource-graph/resource-graph-poller-pool.ts';
import { createResourceGraphQuery, type ResourceGraphQuery } from './sources/resource-graph/resource-graph-query.ts';
import type { SecretReader } from './sources/resource-graph/resource-graph-pollers.ts';
import type { RecordSink } from './sources/source.ts';
import { connectDatabase, type Database } from './store/connect.ts';
import { DatabaseStatus } from './store/database-status.ts';
import { DataDirLock } from './store/embedded/data-dir-lock.ts';
import { type EmbeddedPostgres, embeddedPostgresFor } from './store/embedded/embedded-postgres.ts';
import { createSupervisorMetrics, PostgresSupervisor } from './store/embedded/postgres-supervisor.ts';
import { scheduleHistoryMaintenance } from './store/history-partitions.ts';
import { scheduleRolloutRefresh } from './store/rollout-refresh.ts';
import { scheduleSummaryRefresh } from './store/summary-refresh.ts';
import { publishHubSettings } from './store/hub-settings.ts';
import { migrateToLatest } from './store/migrate.ts';
import { RecordWriter } from './store/record-writer.ts';
import { StateChanges } from './store/state-changes.ts';
import { isDatabaseUnavailable, StoreUnavailableError } from './store/store-errors.ts';

/** How often the rollout table behind the delivery metrics catches up with the writes. */
const ROLLOUT_REFRESH_MS = 2_000;
/**
 * How often the report summaries catch up with the writes and with reconcilers turning stale: what
 * Grafana reads is at most this old (the API folds the queue in before it reads).
 */
const SUMMARY_REFRESH_MS = 1_000;

export interface RunningHub {
  readonly ports: { readonly http: number; readonly otlpGrpc: number; readonly otlpHttp: number };
  readonly databaseUrl: string;
  /** Set when the hub started its own embedded PostgreSQL. */
  readonly embeddedPostgres: EmbeddedPostgres | undefined;
  /** The psql command for the embedded PostgreSQL as shown to operators (a chosen password hidden). */
  readonly psql: string | undefined;
  readonly database: Database;
  /** The CRD watcher, when the hub found a Kubernetes API server to watch. */
  readonly kube: KubeSource | undefined;
  /** The running Azure Resource Graph poll loops (from resources or --arg-config). */
  readonly resourceGraph: ResourceGraphPollerPool;
  /** Resolves once the database is migrated and every source runs; rejects if the hub could not start. */
  readonly ready: Promise<void>;
  /** Graceful stop: sources drain, the API closes, then the database (and embedded server) stop. */
  stop(): Promise<void>;
}

export interface HubOverrides {
  /** Leader-election timing (tests shorten it). */
  readonly leaseDurationMs?: number;
  readonly leaseRetryPeriodMs?: number;
  /** This replica's name in the leader-election lease. */
  readonly identity?: string;
  /** A Kubernetes client configuration to use instead of discovering one (tests). */
  readonly kubeConfig?: KubeConfig;
  /** Resource Graph query clients to use instead of the Azure SDK's (benchmarks). */
  readonly resourceGraphQuery?: (source: ResourceGraphSourceSpec) => ResourceGraphQuery;
  /** Include Node process metrics (off in tests that start several hubs). */
  readonly processMetrics?: boolean;
  /** Memory the OTLP receivers may decode into at once (tests shrink it; default half the heap). */
  readonly decodeMemoryBytes?: number;
  /** How often the TLS files are looked at for a renewed certificate (tests shorten it). */
  readonly tlsRefreshMs?: number;
  /** The clock reports judge staleness by (tests pin it). */
  readonly clock?: () => Date;
}

export async function startHub(config: HubConfig, log: Logger, overrides: HubOverrides = {}): Promise<RunningHub> {
  const hub = await startListening(config, log, overrides);
  // In-process callers (tests, benchmarks) want a hub that stores what it is sent.
  await hub.ready;
  return hub;
}

/**
 * Starts the hub and resolves as soon as it listens: the API, the UI and the OTLP receivers
 * answer at once, "retry later" (503 / UNAVAILABLE) with the reason until the database is
 * reachable and migrated. `ready` resolves then, once every source runs; it rejects when the hub
 * cannot start (a failing migration), and the hub is then stopped.
 */
export async function startListening(config: HubConfig, log: Logger, overrides: HubOverrides = {}): Promise<RunningHub> {
  const cleanup: (() => Promise<void>)[] = [];
  const abort = new AbortController();
  const clock = overrides.clock ?? (() => new Date());
  // Every step of a shutdown shares one deadline (--shutdown-timeout), however many steps wait.
  let shutdownDeadline = Infinity;
  let starting: Promise<unknown> = Promise.resolve();
  const stopAll = async (): Promise<void> => {
    shutdownDeadline = Date.now() + config.shutdownTimeout;
    abort.abort();
    // The sources still starting stop waiting for the database, and add their own steps first.
    await starting.catch(() => undefined);
    for (const step of cleanup.reverse().splice(0)) {
      await step().catch((error: unknown) => log.error({ err: error }, 'error during shutdown'));
    }
  };
  try {
    // One hub per data directory: a second one refuses before it touches anything.
    let lock: DataDirLock | undefined;
    if (config.databaseUrl === undefined) {
      lock = await DataDirLock.acquire(config.dataDir, (previous) =>
        log.warn({ previous }, 'taking over the data directory from a hub that is gone'),
      );
      const held = lock;
      cleanup.push(() => held.release());
    }
    const tls =
      config.tlsCertFile === undefined || config.tlsKeyFile === undefined
        ? undefined
        : await TlsFiles.load({ certFile: config.tlsCertFile, keyFile: config.tlsKeyFile }, overrides.tlsRefreshMs ?? 60_000, log);
    if (tls !== undefined) cleanup.push(() => Promise.resolve(tls.close()));
    const metrics = createHubMetrics({ processMetrics: overrides.processMetrics ?? true });
    let embedded: EmbeddedPostgres | undefined;
    let supervisor: PostgresSupervisor | undefined;
    let databaseUrl = config.databaseUrl;
    let psql: string | undefined;
    if (databaseUrl === undefined) {
      embedded = embeddedPostgresFor(config, log);
      supervisor = new PostgresSupervisor(
        embedded,
        { restartTimeoutMs: config.embeddedPgRestartTimeout, ...createSupervisorMetrics(metrics.registry) },
        log,
      );
      await supervisor.start();
      const running = supervisor;
      cleanup.push(() => running.stop());
      databaseUrl = embedded.url;
      psql = `psql ${shownEmbeddedUrl(embedded.url, config.embeddedPgPassword)}`;
      log.info({ psql }, 'embedded PostgreSQL: connect with this connection string');
    }

    const database = connectDatabase(
      { url: databaseUrl, poolSize: config.dbPoolSize, connectTimeoutMs: 5_000, applicationName: 'kalypso-hub' },
      log,
    );
    cleanup.push(() => closeDatabaseBy(database, shutdownDeadline, log));
    registerPoolMetrics(metrics, database.pool);
    const status = new DatabaseStatus(databaseUrl);

    const stateChanges = new StateChanges();
    const api: HttpListener = await listenHttp(
      createApiApp({
        db: database.db,
        metrics,
        log,
        database: status,
        unhealthy: () => supervisor?.unhealthy(),
        staleAfterMs: config.staleAfter,
        maxWaitMs: config.maxWait,
        stateChanges,
        shutdown: abort.signal,
        clock,
        apiTokens: config.apiToken,
      }),
      config.listenHost,
      config.httpPort,
      tls,
    );
    cleanup.push(() => api.close(config.shutdownTimeout));
    log.info({ port: api.port, tls: tls !== undefined, apiToken: config.apiToken !== undefined, ingestToken: config.ingestToken !== undefined }, 'HTTP API listening');

    const writer = new RecordWriter(database.db, log, { retryAfterSeconds: 5, stateChanges });
    // Collectors queue and retry on "unavailable"; a closed port would look like a dead hub.
    const gated: RecordSink = {
      write: (records) => (status.migrated ? writer.write(records) : Promise.reject(new StoreUnavailableError(status.notReadyMessage(), 5))),
    };
    const otlp = new OtlpSource(
      {
        host: config.listenHost,
        grpcPort: config.otlpGrpcPort,
        httpPort: config.otlpHttpPort,
        maxRequestBytes: config.maxRequestSize,
        limits: {
          maxRecordsPerRequest: config.maxRecordsPerRequest,
          maxAttributes: config.maxAttributes,
          maxAttributeValueLength: config.maxAttributeValueLength,
        },
        tokens: config.ingestToken,
        tls,
        decodeMemoryBytes: overrides.decodeMemoryBytes,
        maxConcurrentWrites: Math.max(1, config.dbPoolSize - 2),
        maxQueuedWrites: 64,
        shutdownDeadlineMs: config.shutdownTimeout,
      },
      metrics,
      log,
    );
    await otlp.start(gated, abort.signal);
    cleanup.push(() => otlp.stop());
    const ports = { http: api.port, otlpGrpc: otlp.ports.grpc, otlpHttp: otlp.ports.http };
    await lock?.describe(ports);

    // Set once the database is migrated (below); the pollers read Secrets through the watcher's client.
    let readSecret: SecretReader | undefined;
    let kube: KubeSource | undefined;
    const pollers = new ResourceGraphPollerPool({
      sink: writer,
      db: database.db,
      connect: async (source) =>
        overrides.resourceGraphQuery?.(source) ??
        (await createResourceGraphQuery(await credentialFor(source, process.env, readSecret), config.armEndpoint, log)),
      metrics: createResourceGraphMetrics(metrics.registry),
      log,
      clock,
    });
    cleanup.push(() => pollers.stopAll());

    // The rest needs the schema: it waits for the database, however long that takes.
    const ready = (async (): Promise<void> => {
      await migrateWithRetry(database, status, log, abort.signal);
      await publishHubSettings(database.db, { staleAfterMs: config.staleAfter, environmentOrder: config.environmentOrder }, clock());
      status.markMigrated();
      const historyMaintenance = scheduleHistoryMaintenance(
        database.db,
        { retentionMs: config.historyRetention, clock },
        log,
      );
      cleanup.push(() => historyMaintenance.stop());
      const rolloutRefresh = scheduleRolloutRefresh(database.db, ROLLOUT_REFRESH_MS, metrics, log);
      cleanup.push(() => rolloutRefresh.stop());
      const summaryRefresh = scheduleSummaryRefresh(database.db, SUMMARY_REFRESH_MS, clock, metrics, log);
      cleanup.push(() => summaryRefresh.stop());

      const kubeConfig = overrides.kubeConfig ?? (await loadKubeConfig(config.kube, process.env));
      // The Kubernetes client is loaded only when there is a cluster to watch.
      const kubeModules =
        kubeConfig === undefined
          ? undefined
          : await Promise.all([import('./sources/kube/kube-source.ts'), import('./sources/kube/secret-reader.ts')]);
      readSecret = kubeConfig === undefined || kubeModules === undefined ? undefined : kubeModules[1].kubeSecretReader(kubeConfig);
      kube =
        kubeConfig === undefined || kubeModules === undefined
          ? undefined
          : new kubeModules[0].KubeSource(
              kubeConfig,
              {
                namespaces: config.kubeNamespaces,
                resyncMs: config.kubeResync,
                // A third of stale-after: two confirmations may fail before a held resource turns stale.
                confirmEveryMs: Math.min(config.kubeResync, config.staleAfter / 3),
                clock,
                leaseNamespace: config.leaderElectionNamespace ?? ownNamespace() ?? 'default',
                leaseName: config.leaderElectionLease,
                leaseDurationMs: overrides.leaseDurationMs ?? 15_000,
                retryPeriodMs: overrides.leaseRetryPeriodMs ?? 2_000,
                ...(overrides.identity === undefined ? {} : { identity: overrides.identity }),
              },
              pollers,
              log,
            );
      if (kube !== undefined) {
        const source = kube;
        await source.start(writer, abort.signal);
        cleanup.push(() => source.stop());
      } else {
        log.info({ kube: config.kube }, 'CRD watcher off: no kubeconfig or in-cluster service account');
      }
      // Sources from --arg-config poll on every replica that has the file (no leader election).
      for (const source of config.argConfig === undefined ? [] : await loadArgConfig(config.argConfig)) {
        pollers.upsert(source, (pollStatus) =>
          (pollStatus.ready ? log.info.bind(log) : log.warn.bind(log))({ source: source.name, ...pollStatus }, 'Resource Graph poll'),
        );
      }
    })();
    starting = ready;
    // A hub that cannot start its sources stops, rather than listen without storing anything.
    const readyOrStopped = ready.catch(async (error: unknown) => {
      if (!abort.signal.aborted) await stopAll();
      throw error;
    });
    readyOrStopped.catch(() => undefined);

    return {
      ports,
      get kube() {
        return kube;
      },
      resourceGraph: pollers,
      databaseUrl,
      embeddedPostgres: embedded,
      psql,
      database,
      ready: readyOrStopped,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/**
 * The embedded server's connection string for the start-up message. The demo's well-known default
 * password is shown, so psql and Grafana connect by copy and paste; a password the operator chose
 * is a secret and never logged.
 */
function shownEmbeddedUrl(url: string, password: string): string {
  if (password === SETTINGS.embeddedPgPassword.default) return url;
  const shown = new URL(url);
  shown.password = '****';
  return shown.toString();
}

/**
 * Closing the pool waits for every checked-out connection; a write stuck behind a lock would hold
 * the shutdown past its deadline (and Kubernetes would SIGKILL the hub anyway). Past the deadline
 * the write is abandoned: its connection closes when the process exits, so its transaction rolls
 * back, and its client, whose connection was cut, sends it again.
 */
async function closeDatabaseBy(database: Database, deadline: number, log: Logger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    timer = setTimeout(() => resolve('expired'), Math.max(0, deadline - Date.now()));
  });
  const closed = database.close().then(() => 'closed' as const);
  try {
    if ((await Promise.race([closed, expired])) === 'expired') {
      log.warn({ inUse: database.pool.totalCount - database.pool.idleCount }, 'shutdown deadline passed: abandoning unfinished database work');
    }
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Migrations wait for an unreachable database (it may still be starting, or be down for a while)
 * instead of failing; meanwhile the hub answers with the reason. Capped at 5 s between attempts,
 * so that the hub is ready soon after the database is.
 */
async function migrateWithRetry(database: Database, status: DatabaseStatus, log: Logger, signal: AbortSignal): Promise<void> {
  for (let delay = 500; ; delay = Math.min(delay * 2, 5_000)) {
    const { applied, error } = await migrateToLatest(database.db);
    if (error === undefined) {
      log.info({ applied }, applied.length > 0 ? 'database migrated' : 'database schema up to date');
      return;
    }
    if (signal.aborted) throw new Error('the hub stopped before the database was migrated', { cause: error });
    if (!isDatabaseUnavailable(error)) throw error;
    status.markUnreachable(error);
    log.warn({ database: status.address, err: status.notReadyMessage(), retryInMs: delay }, 'database unreachable; will retry migrations');
    await sleep(delay, undefined, { signal }).catch(() => undefined);
  }
}
