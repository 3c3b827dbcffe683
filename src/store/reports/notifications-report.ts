// "Notifications": what the outbox holds that is not delivered yet — waiting, retrying, or refused
// for good with the receiver's words — per channel, and the channels' queues in numbers.
// Messages are described, never shown whole: a webhook URL or a token never leaves the hub.
import { type Kysely, sql } from 'kysely';
import type { HubDatabase } from '../database-schema.ts';
import { isoTime, isoTimeOrNull } from './report-context.ts';

export interface ChannelQueue {
  readonly channel: string;
  readonly queued: number;
  readonly failed: number;
  readonly sentLastDay: number;
  readonly oldestQueuedAt: Date | null;
  readonly pausedUntil: Date | null;
  readonly pauseReason: string | null;
}

export interface UndeliveredItem {
  readonly id: number;
  readonly channel: string;
  readonly key: string;
  readonly kind: 'status' | 'event';
  /** What it says: `kalypso/prod success: 12/12 reconcilers on 1.4.2`, or the event's type and subject. */
  readonly summary: string;
  readonly state: 'waiting' | 'retrying' | 'sending' | 'failed';
  readonly attempts: number;
  readonly lastError: string | null;
  readonly createdAt: string;
  readonly notBefore: string;
  readonly failedAt: string | null;
}

/** Per channel: undone and refused messages, those sent in the last day, the oldest waiting, a rate-limit pause. */
export async function channelQueues(db: Kysely<HubDatabase>, now: Date): Promise<ChannelQueue[]> {
  const rows = await sql<{
    channel: string;
    queued: number;
    failed: number;
    sent_last_day: number;
    oldest_queued_at: Date | null;
    paused_until: Date | null;
    pause_reason: string | null;
  }>`
    SELECT o.channel,
           count(*) FILTER (WHERE o.sent_at IS NULL AND o.failed_at IS NULL AND o.superseded_by IS NULL)::int AS queued,
           count(*) FILTER (WHERE o.failed_at IS NOT NULL)::int AS failed,
           count(*) FILTER (WHERE o.sent_at > ${now}::timestamptz - interval '1 day')::int AS sent_last_day,
           min(o.created_at) FILTER (WHERE o.sent_at IS NULL AND o.failed_at IS NULL AND o.superseded_by IS NULL) AS oldest_queued_at,
           max(p.until) FILTER (WHERE p.until > ${now}::timestamptz) AS paused_until, max(p.reason) FILTER (WHERE p.until > ${now}::timestamptz) AS pause_reason
      FROM notify_outbox o LEFT JOIN notify_channel_pause p ON p.channel = o.channel
     GROUP BY o.channel ORDER BY o.channel`.execute(db);
  return rows.rows.map((row) => ({
    channel: row.channel,
    queued: row.queued,
    failed: row.failed,
    sentLastDay: row.sent_last_day,
    oldestQueuedAt: row.oldest_queued_at,
    pausedUntil: row.paused_until,
    pauseReason: row.pause_reason,
  }));
}

/** The newest undelivered messages (waiting, retrying, being sent, refused), at most `limit`. */
export async function undeliveredMessages(db: Kysely<HubDatabase>, now: Date, limit: number): Promise<UndeliveredItem[]> {
  const rows = await sql<{
    id: number;
    channel: string;
    key: string;
    message: { kind: 'status' | 'event'; context?: string; state?: string; description?: string; type?: string; id?: string };
    attempts: number;
    last_error: string | null;
    created_at: Date;
    not_before: Date;
    claimed_until: Date | null;
    failed_at: Date | null;
  }>`
    SELECT id, channel, key, message, attempts, last_error, created_at, not_before, claimed_until, failed_at
      FROM notify_outbox
     WHERE sent_at IS NULL AND superseded_by IS NULL
     ORDER BY failed_at IS NULL DESC, created_at DESC, id DESC
     LIMIT ${limit}`.execute(db);
  return rows.rows.map((row) => ({
    id: Number(row.id),
    channel: row.channel,
    key: row.key,
    kind: row.message.kind,
    summary: row.message.kind === 'status' ? `${row.message.context} ${row.message.state}: ${row.message.description}` : `${row.message.type} ${row.message.id}`,
    state: row.failed_at !== null ? 'failed' : row.claimed_until !== null && row.claimed_until > now ? 'sending' : row.attempts > 0 ? 'retrying' : 'waiting',
    attempts: row.attempts,
    lastError: row.last_error,
    createdAt: isoTime(row.created_at),
    notBefore: isoTime(row.not_before),
    failedAt: isoTimeOrNull(row.failed_at),
  }));
}
