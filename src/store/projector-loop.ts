// The projector's background loop, on every hub with --append-first: folds pending reports as they
// come (woken by each acknowledged write, or every idle interval for other hubs' writes), one batch
// after another while any are pending. Only one hub's batch runs at a time (the projector's lock);
// the others find it taken and only watch the backlog, so every hub's /metrics shows the lag.
import type { Logger } from '../log/logger.ts';
import type { HubMetrics } from '../metrics/hub-metrics.ts';
import type { Kysely } from 'kysely';
import type { HubDatabase } from './database-schema.ts';
import { RecordedEvidence } from './commit-evidence.ts';
import { PROJECTION_TUNING, type ProjectionTuning, projectionBacklog, projectPending } from './projector.ts';
import { isDatabaseUnavailable } from './store-errors.ts';

export interface ProjectorLoop {
  /** A write appended reports: fold them now rather than after the idle interval. */
  wake(): void;
  /**
   * Whether this hub's projector folded something less than `gapMs` ago or is folding now: the
   * background refreshes give way to it as to writes (hub.ts), and fold its burst in once after.
   */
  projectingWithin(gapMs: number): boolean;
  /** Waits for a batch under way (its transaction commits or rolls back), then ends the loop. */
  stop(): Promise<void>;
}

export interface ProjectorLoopOptions {
  readonly clock: () => Date;
  readonly metrics: Pick<HubMetrics, 'projectionLagSeconds' | 'projectionRowsBehind' | 'projectedReports'>;
  readonly log: Pick<Logger, 'info' | 'warn' | 'debug'>;
  readonly tuning?: Partial<ProjectionTuning>;
}

export function startProjectorLoop(db: Kysely<HubDatabase>, options: ProjectorLoopOptions): ProjectorLoop {
  const tuning = { ...PROJECTION_TUNING, ...options.tuning };
  const recorded = new RecordedEvidence();
  let stopped = false;
  const sleeper = new Sleeper();
  /** When a batch that folded something last ended (performance.now()); Infinity while one runs. */
  let lastWork = -Infinity;
  let lastObserved = -Infinity;

  const observe = async (): Promise<void> => {
    const backlog = await projectionBacklog(db);
    options.metrics.projectionRowsBehind.set(backlog.rows);
    const lagMs = backlog.oldestReceivedAt === undefined ? 0 : Math.max(0, options.clock().getTime() - backlog.oldestReceivedAt.getTime());
    options.metrics.projectionLagSeconds.set(lagMs / 1_000);
  };
  /**
   * One round: batches while full ones come back; then how long to rest, and whether a write may
   * cut the rest short. After folding something the loop lingers (`lingerMs`) whatever is written
   * meanwhile: under a burst each batch then takes what accumulated, instead of one export's reports
   * at a time (722 batches of 500 for 360,000 reports, the statements' fixed costs each time).
   */
  const round = async (): Promise<{ rest: number; wakeable: boolean }> => {
    let folded = 0;
    for (;;) {
      lastWork = Infinity;
      const batch = await projectPending(db, { wait: false, limit: tuning.batch, recorded }).finally(() => {
        lastWork = performance.now();
      });
      if (batch !== undefined && batch.reports > 0) options.metrics.projectedReports.inc(batch.reports);
      folded += batch?.reports ?? 0;
      if (batch === undefined || batch.reports < tuning.batch || stopped) break;
    }
    if (folded === 0) lastWork = -Infinity;
    // The backlog's probe walks the index entries of folded rows until they are vacuumed: a few ms
    // under a burst, so it runs every `observeMs`, and at once when the loop found nothing to do.
    if (folded === 0 || performance.now() - lastObserved >= tuning.observeMs) {
      lastObserved = performance.now();
      await observe();
    }
    return folded === 0 ? { rest: tuning.idleMs, wakeable: true } : { rest: tuning.lingerMs, wakeable: false };
  };
  const running = (async () => {
    let unavailableSince: number | undefined;
    while (!stopped) {
      let rest: { rest: number; wakeable: boolean };
      try {
        rest = await round();
        if (unavailableSince !== undefined) options.log.info({ downMs: Date.now() - unavailableSince }, 'projector works again');
        unavailableSince = undefined;
      } catch (error) {
        rest = { rest: tuning.retryMs, wakeable: false };
        if (!isDatabaseUnavailable(error)) options.log.warn({ err: error }, 'projecting pending reports failed; will retry');
        else if (unavailableSince === undefined) options.log.warn({ err: (error as Error).message }, 'projector waits for the database');
        if (isDatabaseUnavailable(error)) unavailableSince ??= Date.now();
      }
      await sleeper.sleep(rest.rest, rest.wakeable);
    }
  })();
  return {
    wake: () => sleeper.wake(),
    projectingWithin: (gapMs) => performance.now() - lastWork < gapMs,
    async stop() {
      stopped = true;
      sleeper.stop();
      await running;
    },
  };
}

/** The loop's rest between rounds, which a write's wake ends early only when the loop was idle. */
class Sleeper {
  #woken = false;
  #stopped = false;
  #current: { timer: NodeJS.Timeout; resolve: () => void; wakeable: boolean } | undefined;

  async sleep(ms: number, wakeable: boolean): Promise<void> {
    if ((wakeable && this.#woken) || this.#stopped) {
      this.#woken = false;
      return;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      timer.unref();
      this.#current = { timer, resolve, wakeable };
    });
    this.#current = undefined;
    this.#woken = false;
  }

  wake(): void {
    this.#woken = true;
    if (this.#current?.wakeable === true) this.#end();
  }

  stop(): void {
    this.#stopped = true;
    this.#end();
  }

  #end(): void {
    if (this.#current === undefined) return;
    clearTimeout(this.#current.timer);
    this.#current.resolve();
  }
}
