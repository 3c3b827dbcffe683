// Wires the hub together — the only module that knows every part:
// sources (OTLP) → normalizer → store (PostgreSQL) ← API.
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import type { HubConfig } from './settings.ts';
import { type ApiDeps, createApiApp } from './api/app.ts';
import { type HttpListener, listenHttp } from './http/listen.ts';
import type { Logger } from './log/logger.ts';
import { createHubMetrics, type HubMetrics, registerPoolMetrics } from './metrics/hub-metrics.ts';
import { loadKubeConfig } from './sources/kube/kube-config.ts';
import { createKubeMetrics, type KubeMetrics } from './sources/kube/kube-metrics.ts';
import type { KubeSide } from './sources/kube/kube-side.ts';
import type { KubeSource } from './sources/kube/kube-source.ts';
import { type Identity, type IdentityTuning, loadIdentity } from './security/identity.ts';
import { OtlpSource } from './sources/otlp/otlp-source.ts';
import { otlpOptionsFrom } from './sources/otlp/otlp-settings.ts';
import type { ResourceGraphSourceSpec } from './normalize/kube-resources.ts';
import { TlsFiles } from './security/tls-files.ts';
import { credentialFor } from './sources/resource-graph/credentials.ts';
import { createResourceGraphMetrics } from './sources/resource-graph/resource-graph-metrics.ts';
import { ResourceGraphPollerPool } from './sources/resource-graph/resource-graph-poller-pool.ts';
import { createResourceGraphQuery, type ResourceGraphQuery } from './sources/resource-graph/resource-graph-query.ts';
import type { SecretReader } from './sources/resource-graph/resource-graph-pollers.ts';
import type { RecordSink } from './model/record-sink.ts';
import type { Source } from './sources/source.ts';
import { connectDatabase, type Database } from './store/connect.ts';
import { DATABASE_SETTINGS } from './store/database-settings.ts';
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
import { backoffDelaysMs, RETRY_LATER_SECONDS } from './store/retry-policy.ts';
import { StateChanges } from './store/state-changes.ts';
import { STATE_TUNING } from './store/state-settings.ts';
import { StartedSteps } from './started-steps.ts';
import type { Channel } from './notify/notifications-file.ts';
import { channelSetup, loadChannels, startNotifications } from './notify/notifications.ts';
import { NOTIFY_TUNING, type NotifyTuning } from './notify/notify-settings.ts';
import { isDatabaseUnavailable, StoreUnavailableError } from './store/store-errors.ts';

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
  /** OIDC key caching, the service-token file's polling and the failed-authentication pace (tests shorten them). */
  readonly identityTuning?: IdentityTuning;
  /** The notifications' pace (tests shorten the waits). */
  readonly notifyTuning?: Partial<NotifyTuning>;
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
 *
 * Each step registers how to undo itself; a stop undoes them in reverse order.
 */
export async function startListening(config: HubConfig, log: Logger, overrides: HubOverrides = {}): Promise<RunningHub> {
  const steps = new StartedSteps();
  const abort = new AbortController();
  const clock = overrides.clock ?? (() => new Date());
  const stopAll = async (): Promise<void> => {
    abort.abort();
    await steps.undoAll(config.shutdownTimeout, log);
  };
  try {
    // One hub per data directory: a second one refuses before it touches anything.
    const lock = config.databaseUrl === undefined ? await lockDataDir(config.dataDir, log) : undefined;
    if (lock !== undefined) steps.add(() => lock.release());
    // The notifications file is checked before the hub takes anything: a mistake in it stops the start.
    const channels = await loadChannels(config, process.env);
    const identity = await loadIdentity(config, log, overrides.identityTuning);
    steps.add(() => identity.close());
    const tls = await TlsFiles.fromConfig(config, log, overrides.tlsRefreshMs);
    if (tls !== undefined) steps.add(() => tls.close());
    const metrics = createHubMetrics({ processMetrics: overrides.processMetrics ?? true });
    const server = config.databaseUrl === undefined ? await startEmbeddedServer(config, metrics, log) : undefined;
    if (server !== undefined) steps.add(() => server.supervisor.stop());
    const databaseUrl = config.databaseUrl ?? server!.embedded.url;

    const database = connectDatabase({ url: databaseUrl, poolSize: config.dbPoolSize }, log);
    steps.add(() => closeDatabaseBy(database, steps.deadline, log));
    registerPoolMetrics(metrics, database.pool);
    const status = new DatabaseStatus(databaseUrl);

    const stateChanges = new StateChanges();
    const notifications = { publicUrl: config.publicUrl, channels: channels.map(channelSetup) };
    const api = await listenApi(config, { db: database.reports, metrics, log, database: status, stateChanges, shutdown: abort.signal, clock, notifications }, identity, tls, () =>
      server?.supervisor.unhealthy(),
    );
    steps.add(() => api.close(config.shutdownTimeout));
    const writer = new RecordWriter(database.db, log, { stateChanges });
    const otlp = new OtlpSource(otlpOptionsFrom(config, { tls, decodeMemoryBytes: overrides.decodeMemoryBytes, access: identity }), metrics, log);
    await startSource(steps, otlp, storedOnceMigrated(status, writer), abort.signal);
    const ports = { http: api.port, otlpGrpc: otlp.ports.grpc, otlpHttp: otlp.ports.http };
    await lock?.describe(ports);

    // Set once the database is migrated; the pollers read Secrets through the watcher's client.
    const late: LateSources = {};
    const pollers = resourceGraphPool(config, { db: database.db, metrics, log, clock }, overrides, () => late.readSecret);
    // Registered with or without a cluster, so that every hub's /metrics names it.
    const kubeMetrics = createKubeMetrics(metrics.registry);
    const ready = startOnceMigrated({ config, log, clock, overrides, database, status, metrics, writer, pollers, channels, kubeMetrics, steps, signal: abort.signal }, late);
    steps.startingUntil(ready);

    return {
      ports,
      get kube() {
        return late.kube;
      },
      resourceGraph: pollers,
      databaseUrl,
      embeddedPostgres: server?.embedded,
      psql: server?.psql,
      database,
      ready: stoppedUnlessReady(ready, abort.signal, stopAll),
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** A hub that cannot start its sources stops, rather than listen without storing anything. */
function stoppedUnlessReady(ready: Promise<void>, signal: AbortSignal, stop: () => Promise<void>): Promise<void> {
  const readyOrStopped = ready.catch(async (error: unknown) => {
    if (!signal.aborted) await stop();
    throw error;
  });
  readyOrStopped.catch(() => undefined);
  return readyOrStopped;
}

/** The sources a hub starts once the database is migrated (the CRD watcher only with a cluster). */
interface LateSources {
  kube?: KubeSource;
  readSecret?: SecretReader;
}

async function startSource(steps: StartedSteps, source: Source, sink: RecordSink, signal: AbortSignal): Promise<void> {
  await source.start(sink, signal);
  steps.add(() => source.stop());
}

/** Collectors queue and retry on "unavailable"; a closed port would look like a dead hub. */
function storedOnceMigrated(status: DatabaseStatus, writer: RecordWriter): RecordSink {
  return {
    write: (records) =>
      status.migrated ? writer.write(records) : Promise.reject(new StoreUnavailableError(status.notReadyMessage(), RETRY_LATER_SECONDS)),
  };
}

/**
 * The part of a start that needs the schema: it waits for the database, however long that takes,
 * then runs the background refreshes and the sources that write as soon as they start.
 */
async function startOnceMigrated(
  context: {
    readonly config: HubConfig;
    readonly log: Logger;
    readonly clock: () => Date;
    readonly overrides: HubOverrides;
    readonly database: Database;
    readonly status: DatabaseStatus;
    readonly metrics: HubMetrics;
    readonly writer: RecordWriter;
    readonly pollers: ResourceGraphPollerPool;
    readonly channels: readonly Channel[];
    readonly kubeMetrics: KubeMetrics;
    readonly steps: StartedSteps;
    readonly signal: AbortSignal;
  },
  late: LateSources,
): Promise<void> {
  const { config, log, clock, database, steps } = context;
  await migrateWithRetry(database, context.status, log, context.signal);
  await publishHubSettings(
    database.db,
    {
      staleAfterMs: config.staleAfter,
      environmentOrder: config.environmentOrder,
      rolloutWindowMs: config.rolloutWindow,
      offCommitAfterMs: config.offCommitAfter,
    },
    clock(),
  );
  context.status.markMigrated();
  const { refreshYield } = STATE_TUNING;
  const yieldToWrites = { maxMs: refreshYield.maxMs, recheckMs: refreshYield.recheckMs, busy: () => context.writer.writingWithin(refreshYield.gapMs) };
  for (const timer of [
    scheduleHistoryMaintenance(database.db, { retentionMs: config.historyRetention, clock }, log),
    scheduleRolloutRefresh(database.db, STATE_TUNING.rolloutRefreshMs, context.metrics, log, yieldToWrites),
    scheduleSummaryRefresh(database.db, STATE_TUNING.summaryRefreshMs, clock, context.metrics, log, yieldToWrites),
  ]) {
    steps.add(() => timer.stop());
  }

  if (context.channels.length > 0) {
    const notifications = await startNotifications(
      database.db,
      context.channels,
      { publicUrl: config.publicUrl!, staleAfterMs: config.staleAfter, clock, registry: context.metrics.registry, tuning: { ...NOTIFY_TUNING, ...context.overrides.notifyTuning } },
      log,
    );
    steps.add(() => notifications.stop());
  }

  const kubeSide = await kubeSideOf(config, clock, context.overrides, context.pollers, log, context.kubeMetrics);
  late.readSecret = kubeSide?.readSecret;
  late.kube = kubeSide?.source;
  if (late.kube === undefined) log.info({ kube: config.kube }, 'CRD watcher off: no kubeconfig or in-cluster service account');
  // The pollers first: the watcher adds its resources' pollers to them (and stops before them).
  for (const source of [context.pollers, late.kube]) if (source !== undefined) await startSource(steps, source, context.writer, context.signal);
}

/** The HTTP API, the UI and the health and metrics endpoints, on --http-port. */
async function listenApi(
  config: HubConfig,
  deps: Pick<ApiDeps, 'db' | 'metrics' | 'log' | 'database' | 'stateChanges' | 'shutdown' | 'clock' | 'notifications'>,
  identity: Identity,
  tls: TlsFiles | undefined,
  unhealthy: ApiDeps['unhealthy'],
): Promise<HttpListener> {
  const app = createApiApp({
    ...deps,
    unhealthy,
    staleAfterMs: config.staleAfter,
    maxWaitMs: config.maxWait,
    apiTokens: config.apiToken,
    authenticator: identity.authenticator,
    throttle: identity.throttle,
    clientAddresses: identity.clientAddresses,
    signIn: identity.signIn,
    publicUrl: config.publicUrl,
    tls: tls !== undefined,
  });
  const api = await listenHttp(app, config.listenHost, config.httpPort, tls);
  deps.log.info(
    {
      port: api.port,
      tls: tls !== undefined,
      apiToken: config.apiToken !== undefined,
      ingestToken: config.ingestToken !== undefined,
      apiOpen: !identity.authenticator.requires('api'),
      ingestOpen: !identity.authenticator.requires('ingest'),
    },
    'HTTP API listening',
  );
  return api;
}

/** The Resource Graph pollers; `readSecret` is the watcher's, once there is one (secretRef credentials). */
function resourceGraphPool(
  config: HubConfig,
  deps: { readonly db: Database['db']; readonly metrics: HubMetrics; readonly log: Logger; readonly clock: () => Date },
  overrides: HubOverrides,
  readSecret: () => SecretReader | undefined,
): ResourceGraphPollerPool {
  return new ResourceGraphPollerPool(
    {
      db: deps.db,
      connect: async (source) =>
        overrides.resourceGraphQuery?.(source) ??
        (await createResourceGraphQuery(await credentialFor(source, process.env, readSecret()), config.armEndpoint, deps.log)),
      metrics: createResourceGraphMetrics(deps.metrics.registry),
      log: deps.log,
      clock: deps.clock,
    },
    config.argConfig,
  );
}

async function lockDataDir(dataDir: string, log: Logger): Promise<DataDirLock> {
  return await DataDirLock.acquire(dataDir, (previous) => log.warn({ previous }, 'taking over the data directory from a hub that is gone'));
}

/** The embedded PostgreSQL, kept running by its supervisor (restarted when it stops unexpectedly). */
async function startEmbeddedServer(
  config: HubConfig,
  metrics: HubMetrics,
  log: Logger,
): Promise<{ embedded: EmbeddedPostgres; supervisor: PostgresSupervisor; psql: string }> {
  const embedded = embeddedPostgresFor(config, log);
  const supervisor = new PostgresSupervisor(embedded, { restartTimeoutMs: config.embeddedPgRestartTimeout, ...createSupervisorMetrics(metrics.registry) }, log);
  await supervisor.start();
  const psql = `psql ${shownEmbeddedUrl(embedded.url, config.embeddedPgPassword)}`;
  log.info({ psql }, 'embedded PostgreSQL: connect with this connection string');
  return { embedded, supervisor, psql };
}

/** The Kubernetes side when there is a cluster to watch; its module (and client) is loaded only then. */
async function kubeSideOf(
  config: HubConfig,
  clock: () => Date,
  overrides: HubOverrides,
  pollers: ResourceGraphPollerPool,
  log: Logger,
  metrics: KubeMetrics,
): Promise<KubeSide | undefined> {
  const kubeConfig = overrides.kubeConfig ?? (await loadKubeConfig(config.kube, process.env));
  if (kubeConfig === undefined) return undefined;
  const { kubeSideFor } = await import('./sources/kube/kube-side.ts');
  return kubeSideFor(kubeConfig, config, clock, overrides, pollers, log, metrics);
}

/**
 * The embedded server's connection string for the start-up message. The demo's well-known default
 * password is shown, so psql and Grafana connect by copy and paste; a password the operator chose
 * is a secret and never logged.
 */
function shownEmbeddedUrl(url: string, password: string): string {
  if (password === DATABASE_SETTINGS.embeddedPgPassword.default) return url;
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
 * instead of failing; meanwhile the hub answers with the reason. Spaced by the retry policy, so
 * that the hub is ready soon after the database is.
 */
async function migrateWithRetry(database: Database, status: DatabaseStatus, log: Logger, signal: AbortSignal): Promise<void> {
  for (const delay of backoffDelaysMs(500)) {
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
