// The outbox (schema/0024): what is to be sent, written in the transaction of the judgement that
// causes it, claimed by one hub at a time (FOR UPDATE SKIP LOCKED, and a lease that another hub
// may take over when the sender dies), and marked once the receiver acknowledged it.
//
// Per channel and key (a commit and context, or an event) only the newest message matters: a
// newer one replaces one still waiting, and supersedes one whose send failed; and none overtakes
// one of its key on its way.
import { type Kysely, sql } from 'kysely';
import type { HubDatabase } from '../database-schema.ts';

/** Rows not yet done: neither sent, given up nor superseded (the condition of the outbox's partial indexes). */
const UNDONE = sql.raw('sent_at IS NULL AND failed_at IS NULL AND superseded_by IS NULL');

export interface OutboxEntry {
  readonly channel: string;
  readonly key: string;
  readonly message: unknown;
  /** A final state: may go at once. Progress waits until `progressIntervalMs` after the last sent of its key. */
  readonly settled: boolean;
}

export interface ClaimedMessage {
  readonly id: number;
  readonly channel: string;
  readonly key: string;
  readonly message: unknown;
  readonly settled: boolean;
  /** This attempt's number (1 for the first). */
  readonly attempts: number;
  readonly createdAt: Date;
}

/** Queues `entry`, replacing a message of its channel and key that still waits. */
export async function enqueue(db: Kysely<HubDatabase>, entry: OutboxEntry, now: Date, progressIntervalMs: number): Promise<void> {
  await sql`
    INSERT INTO notify_outbox AS o (channel, key, message, settled, not_before)
    SELECT ${entry.channel}, ${entry.key}, ${JSON.stringify(entry.message)}::jsonb, ${entry.settled},
           CASE WHEN ${entry.settled} THEN ${now}::timestamptz
                ELSE greatest(${now}::timestamptz,
                              (SELECT max(s.sent_at) FROM notify_outbox s
                                WHERE s.channel = ${entry.channel} AND s.key = ${entry.key} AND s.sent_at IS NOT NULL)
                              + ${progressIntervalMs} * interval '1 millisecond') END
    ON CONFLICT (channel, key) WHERE ${UNDONE} AND claimed_until IS NULL
    DO UPDATE SET message = excluded.message, settled = excluded.settled,
                  -- A message in backoff keeps its wait; a settled one need not wait for progress's.
                  not_before = CASE WHEN o.attempts = 0 AND excluded.settled THEN excluded.not_before ELSE o.not_before END`.execute(db);
}

/**
 * Takes up to `limit` messages due by `now` for this hub until `now + leaseMs`: per channel and
 * key the newest undone one, none of a paused channel, none while an older one of its key is on
 * its way. Older undone messages of the keys taken are superseded.
 */
export async function claimDue(db: Kysely<HubDatabase>, now: Date, leaseMs: number, limit: number): Promise<ClaimedMessage[]> {
  return await db.transaction().execute(async (trx) => {
    const claimed = await sql<{ id: number; channel: string; key: string; message: unknown; settled: boolean; attempts: number; created_at: Date }>`
      WITH due AS (
        SELECT o.id FROM notify_outbox o
         WHERE ${UNDONE} AND o.not_before <= ${now}::timestamptz AND (o.claimed_until IS NULL OR o.claimed_until < ${now}::timestamptz)
           AND NOT EXISTS (SELECT 1 FROM notify_channel_pause p WHERE p.channel = o.channel AND p.until > ${now}::timestamptz)
           AND NOT EXISTS (SELECT 1 FROM notify_outbox n
                            WHERE n.channel = o.channel AND n.key = o.key AND n.id > o.id AND n.sent_at IS NULL AND n.failed_at IS NULL AND n.superseded_by IS NULL)
           AND NOT EXISTS (SELECT 1 FROM notify_outbox f
                            WHERE f.channel = o.channel AND f.key = o.key AND f.id < o.id AND f.claimed_until >= ${now}::timestamptz
                              AND f.sent_at IS NULL AND f.failed_at IS NULL AND f.superseded_by IS NULL)
         ORDER BY o.not_before, o.id
         LIMIT ${limit}
         FOR UPDATE SKIP LOCKED
      )
      UPDATE notify_outbox o SET claimed_until = ${now}::timestamptz + ${leaseMs} * interval '1 millisecond', attempts = o.attempts + 1
        FROM due WHERE o.id = due.id
      RETURNING o.id, o.channel, o.key, o.message, o.settled, o.attempts, o.created_at`.execute(trx);
    if (claimed.rows.length > 0) {
      await sql`
        UPDATE notify_outbox o SET superseded_by = c.id
          FROM unnest(${claimed.rows.map((row) => row.id)}::bigint[], ${claimed.rows.map((row) => row.channel)}::text[], ${claimed.rows.map((row) => row.key)}::text[]) AS c(id, channel, key)
         WHERE o.channel = c.channel AND o.key = c.key AND o.id < c.id AND o.sent_at IS NULL AND o.failed_at IS NULL AND o.superseded_by IS NULL`.execute(trx);
    }
    return claimed.rows.map((row) => ({
      id: row.id,
      channel: row.channel,
      key: row.key,
      message: row.message,
      settled: row.settled,
      attempts: row.attempts,
      createdAt: row.created_at,
    }));
  });
}

/** The receiver acknowledged it (or already had it). */
export async function markSent(db: Kysely<HubDatabase>, id: number, now: Date): Promise<void> {
  await sql`UPDATE notify_outbox SET sent_at = ${now}::timestamptz, claimed_until = NULL, last_error = NULL WHERE id = ${id}`.execute(db);
}

/** Refused for good (a permanent 4xx): kept with the provider's reason, never tried again. */
export async function markFailed(db: Kysely<HubDatabase>, id: number, reason: string, now: Date): Promise<void> {
  await sql`UPDATE notify_outbox SET failed_at = ${now}::timestamptz, claimed_until = NULL, last_error = ${reason} WHERE id = ${id}`.execute(db);
}

/**
 * To be tried again at `notBefore` — unless a newer message of its key waits meanwhile: that one
 * goes instead (it says what this one said, and more recently).
 */
export async function markRetry(db: Kysely<HubDatabase>, id: number, reason: string, notBefore: Date): Promise<void> {
  await sql`
    WITH newer AS (
      SELECT n.id FROM notify_outbox o JOIN notify_outbox n ON n.channel = o.channel AND n.key = o.key AND n.id > o.id
       WHERE o.id = ${id} AND n.sent_at IS NULL AND n.failed_at IS NULL AND n.superseded_by IS NULL
       ORDER BY n.id DESC LIMIT 1
    )
    UPDATE notify_outbox o
       SET claimed_until = NULL, last_error = ${reason},
           not_before = CASE WHEN (SELECT id FROM newer) IS NULL THEN ${notBefore}::timestamptz ELSE o.not_before END,
           superseded_by = (SELECT id FROM newer)
     WHERE o.id = ${id}`.execute(db);
}

/** Nothing of `channel` goes before `until` (a rate limit is its token's). */
export async function pauseChannel(db: Kysely<HubDatabase>, channel: string, until: Date, reason: string): Promise<void> {
  await sql`
    INSERT INTO notify_channel_pause (channel, until, reason) VALUES (${channel}, ${until}::timestamptz, ${reason})
    ON CONFLICT (channel) DO UPDATE SET until = greatest(notify_channel_pause.until, excluded.until), reason = excluded.reason`.execute(db);
}

/** Deletes what was sent, superseded or given up before `before`: the record of delivery is kept that long. */
export async function pruneOutbox(db: Kysely<HubDatabase>, before: Date): Promise<number> {
  const result = await sql`
    DELETE FROM notify_outbox
     WHERE coalesce(sent_at, failed_at, CASE WHEN superseded_by IS NOT NULL THEN created_at END) < ${before}::timestamptz`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
