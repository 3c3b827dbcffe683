// Keeps the embedded PostgreSQL running for as long as the hub runs. A crashed server (killed by
// the OOM killer, a stray `kill`) used to stay down until someone restarted the hub, while its
// /healthz said all was well. Now the hub starts it again at once (PostgreSQL recovers from its
// WAL), with backoff while that fails; meanwhile every write is answered "retry later", as for
// any unreachable database. If it is not back within the bound, the hub reports itself unhealthy
// so that an orchestrator (Kubernetes, Docker's HEALTHCHECK, systemd) restarts the whole hub.
import { setTimeout as sleep } from 'node:timers/promises';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Logger } from '../../log/logger.ts';
import type { EmbeddedPostgres } from './embedded-postgres.ts';
import { DATABASE_TUNING } from '../database-settings.ts';
import { backoffDelaysMs } from '../retry-policy.ts';

export interface SupervisorOptions {
  /** How long the server may stay down before the hub calls itself unhealthy. */
  readonly restartTimeoutMs: number;
  readonly restarts: Counter;
  readonly up: Gauge;
}

/** The supervisor's metrics, registered only when the hub runs an embedded server. */
export function createSupervisorMetrics(registry: Registry): Pick<SupervisorOptions, 'restarts' | 'up'> {
  return {
    restarts: new Counter({
      name: 'kalypso_embedded_postgres_restarts_total',
      help: 'Times the hub brought its embedded PostgreSQL back after it stopped unexpectedly.',
      registers: [registry],
    }),
    up: new Gauge({ name: 'kalypso_embedded_postgres_up', help: '1 while the embedded PostgreSQL runs, 0 while it is down.', registers: [registry] }),
  };
}

export class PostgresSupervisor {
  readonly #server: EmbeddedPostgres;
  readonly #options: SupervisorOptions;
  readonly #log: Logger;
  readonly #stop = new AbortController();
  /** Since when the server is down, and why it is not back yet. */
  #down: { readonly since: number; reason: string } | undefined;
  #recovery: Promise<void> | undefined;

  constructor(server: EmbeddedPostgres, options: SupervisorOptions, log: Logger) {
    this.#server = server;
    this.#options = options;
    this.#log = log.child({ component: 'embedded-postgres' });
  }

  async start(): Promise<void> {
    this.#server.onUnexpectedExit = (status) => this.#crashed(status);
    await this.#server.start();
    this.#options.up.set(1);
  }

  /** Why the hub is not healthy, when the server has been down longer than the bound. */
  unhealthy(now = Date.now()): string | undefined {
    const down = this.#down;
    if (down === undefined || now - down.since < this.#options.restartTimeoutMs) return undefined;
    return `the embedded PostgreSQL has been down for ${Math.round((now - down.since) / 1_000)} s and could not be restarted: ${down.reason}`;
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    this.#server.onUnexpectedExit = undefined;
    await this.#recovery;
    await this.#server.stop();
  }

  #crashed(status: string): void {
    if (this.#stop.signal.aborted || this.#recovery !== undefined) return;
    this.#options.up.set(0);
    this.#down = { since: Date.now(), reason: status };
    this.#log.error({ status }, 'embedded PostgreSQL stopped unexpectedly; restarting it');
    this.#recovery = this.#recover().finally(() => (this.#recovery = undefined));
  }

  async #recover(): Promise<void> {
    for (const delay of backoffDelaysMs(DATABASE_TUNING.embeddedFirstRestartMs)) {
      if (this.#stop.signal.aborted) return;
      try {
        await this.#server.start();
        const downMs = Date.now() - (this.#down?.since ?? Date.now());
        this.#down = undefined;
        this.#options.restarts.inc();
        this.#options.up.set(1);
        this.#log.info({ downMs }, 'embedded PostgreSQL restarted');
        return;
      } catch (error) {
        const reason = (error as Error).message;
        if (this.#down !== undefined) this.#down.reason = reason;
        this.#log.warn({ err: reason, retryInMs: delay }, 'embedded PostgreSQL did not restart; retrying');
        await sleep(delay, undefined, { signal: this.#stop.signal }).catch(() => undefined);
      }
    }
  }
}
