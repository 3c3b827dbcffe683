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
  let woken = false;
  let sleeper: { timer: NodeJS.Timeout; resolve: () => void } | undefined;
  const sleep = (ms: number): Promise<void> =>
    new Promise<void>((resolve) => {
      if (woken || stopped) {
        resolve();
        return;
      }
      const timer = setTimeout(resolve, ms);
      timer.unref();
      sleeper = { timer, resolve };
    }).then(() => {
      sleeper = undefined;
      woken = false;
    });
  const wake = (): void => {
    woken = true;
    if (sleeper === undefined) return;
    clearTimeout(sleeper.timer);
    sleeper.resolve();
  };

  const observe = async (): Promise<void> => {
    const backlog = await projectionBacklog(db);
    options.metrics.projectionRowsBehind.set(backlog.rows);
    const lagMs = backlog.oldestReceivedAt === undefined ? 0 : Math.max(0, options.clock().getTime() - backlog.oldestReceivedAt.getTime());
    options.metrics.projectionLagSeconds.set(lagMs / 1_000);
  };
  /** One round: batches while full ones come back; then how long to rest. */
  const round = async (): Promise<number> => {
    for (;;) {
      const batch = await projectPending(db, { wait: false, limit: tuning.batch, recorded });
      if (batch !== undefined && batch.reports > 0) options.metrics.projectedReports.inc(batch.reports);
      if (batch === undefined || batch.reports < tuning.batch || stopped) break;
    }
    await observe();
    return tuning.idleMs;
  };
  const running = (async () => {
    let unavailableSince: number | undefined;
    while (!stopped) {
      let rest: number;
      try {
        rest = await round();
        if (unavailableSince !== undefined) options.log.info({ downMs: Date.now() - unavailableSince }, 'projector works again');
        unavailableSince = undefined;
      } catch (error) {
        rest = tuning.retryMs;
        if (!isDatabaseUnavailable(error)) options.log.warn({ err: error }, 'projecting pending reports failed; will retry');
        else if (unavailableSince === undefined) options.log.warn({ err: (error as Error).message }, 'projector waits for the database');
        if (isDatabaseUnavailable(error)) unavailableSince ??= Date.now();
      }
      await sleep(rest);
    }
  })();
  return {
    wake,
    async stop() {
      stopped = true;
      wake();
      await running;
    },
  };
}
