// The notifier: once a second, on one hub at a time (an advisory lock), it judges the commits whose
// rollouts changed — and those whose subscribers are turning stale — and, in the same transaction
// as the judgement, queues what to tell each channel (the outbox). A judgement that says what the
// last one said queues nothing: a state and description is never posted twice in a row.
import type { Kysely, Transaction } from 'kysely';
import type { Logger } from '../log/logger.ts';
import type { HubDatabase } from '../store/database-schema.ts';
import { driftChanges, hostChanges } from '../store/notify/fleet-watches.ts';
import { enqueue, type OutboxEntry } from '../store/notify/outbox.ts';
import {
  discoverSubjects,
  dueSubjects,
  keepNotifierAlive,
  makeDue,
  retireSubject,
  retireSuperseded,
  saveJudgement,
  type Subject,
  takeChangedEndpoints,
} from '../store/notify/subjects.ts';
import { underRefreshLock } from '../store/refresh-lock.ts';
import { summariesCurrent } from '../store/summary-refresh.ts';
import { repeatThroughOutages } from '../store/repeat-every.ts';
import { driftEvent, EVENT_TYPES, hostEvent, type QueuedEvent, rolloutEvent } from './events.ts';
import { judgeSubject } from './judge.ts';
import { contextOf, type StatusMessage } from './messages.ts';
import type { Channel, CommitStatusChannel, WebhookChannel } from './notifications-file.ts';
import type { NotifyTuning } from './notify-settings.ts';

export interface NotifierOptions {
  readonly publicUrl: string;
  readonly staleAfterMs: number;
  readonly clock: () => Date;
  readonly tuning: NotifyTuning;
  /** When the notifier was started, by the database's clock: assignments received since are news, even at its first look. */
  readonly startedAt: Date;
  /** Subjects judged in one transaction at most; the rest stay due for the next tick. */
  readonly judgedPerTick?: number;
}

/** What a rollout's status links to: the hub's Rollout view of the environment and commit. */
export function rolloutUrl(publicUrl: string, environment: string, commit: string): string {
  return `${publicUrl}/rollout?environment=${encodeURIComponent(environment)}&commit=${commit}`;
}

export class Notifier {
  readonly #db: Kysely<HubDatabase>;
  readonly #statusChannels: readonly CommitStatusChannel[];
  readonly #webhooks: readonly WebhookChannel[];
  readonly #options: NotifierOptions;
  readonly #log: Logger;
  /** This hub's start-up look at every current assignment is done. */
  #scanned = false;
  /** When drift and hosts were last compared (performance.now()). */
  #lastFleetWatch = -Infinity;
  #timer: { stop(): Promise<void> } | undefined;

  constructor(db: Kysely<HubDatabase>, channels: readonly Channel[], options: NotifierOptions, log: Logger) {
    this.#db = db;
    this.#statusChannels = channels.filter((channel): channel is CommitStatusChannel => channel.kind === 'commit-status');
    this.#webhooks = channels.filter((channel): channel is WebhookChannel => channel.kind === 'webhook');
    this.#options = options;
    this.#log = log.child({ part: 'notifier' });
  }

  start(): void {
    this.#timer = repeatThroughOutages(this.#options.tuning.judgeEveryMs, 'notifier', async () => void (await this.tick()), this.#log, { immediately: true });
  }

  async stop(): Promise<void> {
    await this.#timer?.stop();
  }

  /** One round; how many messages it queued, or undefined when another hub holds the notifier's lock. */
  async tick(): Promise<number | undefined> {
    const now = this.#options.clock();
    // The drift watch's first look takes what stands: the summaries folded in first (a reconciler
    // that fell silent before the hub started is drifting, even if no refresh has said so yet).
    if (!this.#scanned && this.#wanted(EVENT_TYPES.driftStarted)) await summariesCurrent(this.#db, now);
    const queued = await underRefreshLock(this.#db, 'kalypso_notify', false, async (trx) => {
      // Alive a little longer than a few rounds: the rollout refresh records changes meanwhile.
      await keepNotifierAlive(trx, 30 * this.#options.tuning.judgeEveryMs);
      // At start, every current assignment: unsettled ones are announced, settled ones only once
      // they change — unless they arrived after the notifier started (a first look delayed by a busy
      // machine or another hub's lock must not turn a new merge into history).
      const since = this.#options.startedAt;
      if (!this.#scanned) await discoverSubjects(trx, 'all', { announce: false, now, announceReceivedSince: since });
      const changed = await takeChangedEndpoints(trx);
      if (changed.length > 0) {
        await discoverSubjects(trx, changed, { announce: true, now, receivedSince: since });
        await makeDue(trx, changed, now);
      }
      let count = 0;
      for (const subject of await dueSubjects(trx, now, this.#options.judgedPerTick ?? 100)) count += await this.#judge(trx, subject, now);
      await retireSuperseded(trx, now, this.#options.tuning.watchUnsettledMs);
      return count + (await this.#fleetEvents(trx, now));
    });
    if (queued !== undefined) this.#scanned = true;
    if (queued !== undefined && queued > 0) this.#log.debug({ queued }, 'notifications queued');
    return queued;
  }

  async #judge(trx: Transaction<HubDatabase>, subject: Subject, now: Date): Promise<number> {
    const { publicUrl, staleAfterMs } = this.#options;
    const judged = await judgeSubject(trx, subject, { asOf: now, staleAfterMs }, this.#options.tuning.staleRecheckMs);
    if (judged === undefined) {
      await retireSubject(trx, subject.id, now);
      return 0;
    }
    await saveJudgement(trx, subject.id, judged, now);
    const changed = judged.state !== subject.state || judged.description !== subject.description;
    // Found settled at start: history, not news.
    const baseline = subject.state === null && !subject.announce && judged.counts.settled;
    if (!changed || baseline) return 0;
    const url = rolloutUrl(publicUrl, subject.environment, subject.gitopsCommit);
    const status: StatusMessage = {
      kind: 'status',
      repo: subject.repo,
      commit: subject.commit,
      ...(subject.ref === undefined ? {} : { ref: subject.ref }),
      environment: subject.environment,
      context: contextOf(subject.environment),
      state: judged.state,
      description: judged.description,
      targetUrl: url,
    };
    const entries: OutboxEntry[] = this.#statusChannels
      .filter((channel) => channel.repos.some((pattern) => pattern.matches(subject.repo)))
      .map((channel) => ({ channel: channel.name, key: `${subject.repo}@${subject.commit}#${status.context}`, message: status, settled: judged.state !== 'pending' }));
    if (subject.kind === 'gitops') entries.push(...this.#eventEntries(rolloutEvent(subject, judged, publicUrl, url, now)));
    return await this.#enqueueAll(trx, entries, now);
  }

  /** Drift and host changes, when a webhook listens for them — every few seconds, not every round. */
  async #fleetEvents(trx: Transaction<HubDatabase>, now: Date): Promise<number> {
    const { publicUrl, tuning } = this.#options;
    if (performance.now() - this.#lastFleetWatch < tuning.fleetWatchEveryMs) return 0;
    this.#lastFleetWatch = performance.now();
    const wanted = (type: string): boolean => this.#wanted(type);
    const events: QueuedEvent[] = [];
    if (wanted(EVENT_TYPES.driftStarted) || wanted(EVENT_TYPES.driftResolved)) {
      events.push(...(await driftChanges(trx, now, tuning.driftEventAfterMs)).map((change) => driftEvent(change, publicUrl, now)));
    }
    if (wanted(EVENT_TYPES.hostOffline) || wanted(EVENT_TYPES.hostOnline)) {
      events.push(...(await hostChanges(trx, now)).map((change) => hostEvent(change, publicUrl, now)));
    }
    return await this.#enqueueAll(trx, events.flatMap((queued) => this.#eventEntries(queued)), now);
  }

  #wanted(type: string): boolean {
    return this.#webhooks.some((webhook) => webhook.types.some((glob) => glob.test(type)));
  }

  #eventEntries(queued: QueuedEvent): OutboxEntry[] {
    return this.#webhooks
      .filter((webhook) => webhook.types.some((glob) => glob.test(queued.message.type)))
      .map((webhook) => ({ channel: webhook.name, key: queued.key, message: queued.message, settled: queued.settled }));
  }

  async #enqueueAll(trx: Transaction<HubDatabase>, entries: readonly OutboxEntry[], now: Date): Promise<number> {
    for (const entry of entries) await enqueue(trx, entry, now, this.#options.tuning.progressIntervalMs);
    return entries.length;
  }
}
