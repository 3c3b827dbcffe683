// The sender: claims what is due from the outbox (one hub per message), sends it through its
// channel's client, and records what became of it — sent; refused for good (logged once, with the
// receiver's words, and counted); or to be tried again after the wait the receiver named, or with
// backoff. A rate limit holds the whole channel: it is the token's, not the message's.
import type { Kysely } from 'kysely';
import type { Logger } from '../log/logger.ts';
import type { HubDatabase } from '../store/database-schema.ts';
import { type ClaimedMessage, claimDue, markFailed, markRetry, markSent, pauseChannel, pruneOutbox } from '../store/notify/outbox.ts';
import { repeatThroughOutages } from '../store/repeat-every.ts';
import type { ChannelClient, OutboxMessage, SendOutcome } from './messages.ts';
import type { NotifyMetrics } from './notify-metrics.ts';
import type { NotifyTuning } from './notify-settings.ts';

export interface SenderOptions {
  readonly clock: () => Date;
  readonly tuning: NotifyTuning;
}

/** Backoff before attempt n+1 when the receiver named no wait: doubling from the first, capped, ±20 % so that hubs do not retry in step. */
export function backoffMs(attempts: number, tuning: Pick<NotifyTuning, 'firstBackoffMs' | 'maxBackoffMs'>, random: () => number = Math.random): number {
  const base = Math.min(tuning.maxBackoffMs, tuning.firstBackoffMs * 2 ** Math.max(0, attempts - 1));
  return Math.round(base * (0.8 + 0.4 * random()));
}

export class Sender {
  readonly #db: Kysely<HubDatabase>;
  readonly #clients: ReadonlyMap<string, ChannelClient>;
  readonly #options: SenderOptions;
  readonly #metrics: NotifyMetrics;
  readonly #log: Logger;
  readonly #abort = new AbortController();
  #timer: { stop(): Promise<void> } | undefined;
  #lastPrune = 0;

  constructor(db: Kysely<HubDatabase>, clients: ReadonlyMap<string, ChannelClient>, options: SenderOptions, metrics: NotifyMetrics, log: Logger) {
    this.#db = db;
    this.#clients = clients;
    this.#options = options;
    this.#metrics = metrics;
    this.#log = log.child({ part: 'sender' });
  }

  start(): void {
    this.#timer = repeatThroughOutages(this.#options.tuning.sendEveryMs, 'notification sender', () => this.tick(), this.#log);
  }

  /** Requests on their way are cut; what they carried stays claimed until the lease ends, then goes again. */
  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#timer?.stop();
  }

  async tick(): Promise<void> {
    const { clock, tuning } = this.#options;
    const claimed = await claimDue(this.#db, clock(), tuning.claimLeaseMs, tuning.claimBatch);
    const byChannel = Map.groupBy(claimed, (message) => message.channel);
    // Channels in parallel; one channel's messages one after another (providers ask for that, and it keeps their order).
    await Promise.all([...byChannel.values()].map((messages) => this.#deliverInOrder(messages)));
    if (Date.now() - this.#lastPrune > 3_600_000) {
      this.#lastPrune = Date.now();
      await pruneOutbox(this.#db, new Date(clock().getTime() - tuning.keepSentMs));
    }
  }

  /** One channel's messages in turn; a rate limit holds the rest of them too. */
  async #deliverInOrder(messages: readonly ClaimedMessage[]): Promise<void> {
    for (const [index, message] of messages.entries()) {
      if (this.#abort.signal.aborted) return;
      const pausedUntil = await this.#deliver(message);
      if (pausedUntil === undefined) continue;
      for (const held of messages.slice(index + 1)) await markRetry(this.#db, held.id, `held: ${held.channel} is rate limited`, pausedUntil);
      return;
    }
  }

  /** Sends one message and records what became of it; returns when its channel may send again, if a rate limit holds it. */
  async #deliver(claimed: ClaimedMessage): Promise<Date | undefined> {
    const message = claimed.message as OutboxMessage;
    const client = this.#clients.get(claimed.channel);
    const outcome: SendOutcome =
      client === undefined
        ? { kind: 'refused', reason: `channel ${claimed.channel} is no longer in the notifications file` }
        : await client.send(message, this.#abort.signal).catch((error: unknown) => ({ kind: 'retry' as const, reason: (error as Error).message }));
    if (this.#abort.signal.aborted) return undefined;
    const now = this.#options.clock();
    const labels = { channel: claimed.channel, kind: message.kind };
    const about = { channel: claimed.channel, key: claimed.key, attempt: claimed.attempts };
    switch (outcome.kind) {
      case 'sent':
        await markSent(this.#db, claimed.id, now);
        this.#metrics.sent.inc(labels);
        this.#log.debug({ ...about, note: outcome.note }, 'notification delivered');
        return undefined;
      case 'refused':
        await markFailed(this.#db, claimed.id, outcome.reason, now);
        this.#metrics.failed.inc(labels);
        this.#log.error({ ...about, reason: outcome.reason }, 'notification refused for good; it will not be sent again');
        return undefined;
      case 'retry': {
        const waitMs = outcome.afterMs ?? (outcome.rateLimited === true ? this.#options.tuning.rateLimitedBackoffMs : backoffMs(claimed.attempts, this.#options.tuning));
        const until = new Date(now.getTime() + waitMs);
        if (outcome.rateLimited === true) await pauseChannel(this.#db, claimed.channel, until, outcome.reason);
        await markRetry(this.#db, claimed.id, outcome.reason, until);
        this.#metrics.retried.inc({ ...labels, reason: outcome.rateLimited === true ? 'rate_limited' : 'error' });
        this.#log.warn({ ...about, reason: outcome.reason, retryInMs: waitMs }, 'notification not delivered; will retry');
        return outcome.rateLimited === true ? until : undefined;
      }
    }
  }
}
