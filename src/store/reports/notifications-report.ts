// "Notifications": what the outbox holds that is not delivered yet — waiting, retrying, or refused
// for good with the receiver's words — per channel, and the channels' queues in numbers.
// Messages are described, never shown whole: a webhook URL or a token never leaves the hub.
import { type Kysely, type RawBuilder, sql } from 'kysely';
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

/** Said in place of what a message shared with other workspaces may name of theirs. */
export const WITHHELD = '(withheld: it also concerns workspaces you do not read)';

/**
 * The newest undelivered messages (waiting, retrying, being sent, refused), at most `limit`. For a
 * caller scoped to `workspaces`, only those that concern one of them (see concernedWorkspaces), cut
 * before the limit; of a message that also concerns another workspace, the status description (it
 * may name the other's failing hosts) and the receiver's answer are withheld.
 */
export async function undeliveredMessages(db: Kysely<HubDatabase>, now: Date, limit: number, workspaces?: readonly string[]): Promise<UndeliveredItem[]> {
  const scoped = workspaces === undefined ? undefined : [...workspaces];
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
    shared: boolean;
  }>`
    WITH undelivered AS (
      SELECT id, channel, key, message, attempts, last_error, created_at, not_before, claimed_until, failed_at
        FROM notify_outbox
       WHERE sent_at IS NULL AND superseded_by IS NULL
    )
    SELECT u.*, ${scoped === undefined ? sql`false` : sql`NOT (c.workspaces <@ ${scoped}::text[])`} AS shared
      FROM undelivered u
      ${scoped === undefined ? sql`` : sql`CROSS JOIN LATERAL (SELECT ${concernedWorkspaces(sql`u.message`)} AS workspaces) c WHERE c.workspaces && ${scoped}::text[]`}
     ORDER BY u.failed_at IS NULL DESC, u.created_at DESC, u.id DESC
     LIMIT ${limit}`.execute(db);
  return rows.rows.map((row) => ({
    id: Number(row.id),
    channel: row.channel,
    key: row.key,
    kind: row.message.kind,
    summary:
      row.message.kind === 'status'
        ? `${row.message.context} ${row.message.state}: ${row.shared ? WITHHELD : row.message.description}`
        : `${row.message.type} ${row.message.id}`,
    state: row.failed_at !== null ? 'failed' : row.claimed_until !== null && row.claimed_until > now ? 'sending' : row.attempts > 0 ? 'retrying' : 'waiting',
    attempts: row.attempts,
    lastError: row.shared && row.last_error !== null ? WITHHELD : row.last_error,
    createdAt: isoTime(row.created_at),
    notBefore: isoTime(row.not_before),
    failedAt: isoTimeOrNull(row.failed_at),
  }));
}

/**
 * The workspaces an outbox message concerns (an SQL text[]), from what it is about: a commit status,
 * the deployment targets its commit was judged over (a GitOps commit: the environment's targets on
 * the subject's endpoints; a source commit: those of workloads built from its repository); a rollout
 * event, the targets of the environment's GitOps commit; a drift event, its deployment target; a
 * host event, the targets whose endpoints the host pulls. A message about nothing the hub still
 * knows concerns no workspace: only a caller of every workspace sees it.
 */
function concernedWorkspaces(message: RawBuilder<unknown>): RawBuilder<string[]> {
  return sql<string[]>`ARRAY(
    WITH m AS (SELECT ${message} AS message, CASE WHEN ${message}->>'kind' = 'event' THEN ((${message}->>'body')::jsonb)->'data' END AS data)
    -- By (kind, environment, repo, commit): the subject's unique key.
    SELECT t.workspace
      FROM m, environment e
      JOIN notify_subject s ON s.environment_id = e.id
      JOIN deployment_target_named t ON t.environment_id = s.environment_id AND t.manifests_endpoint_id = ANY (s.manifests_endpoint_ids)
     WHERE m.message->>'kind' = 'status' AND e.name = m.message->>'environment' AND s.kind IN ('gitops', 'source')
       AND s.repo = m.message->>'repo' AND s.commit_id = m.message->>'commit'
       AND (s.kind = 'gitops' OR EXISTS (SELECT 1 FROM workload w WHERE w.id = t.workload_id AND w.source_repo = s.repo))
    UNION
    SELECT t.workspace
      FROM m, environment e
      JOIN notify_subject s ON s.environment_id = e.id
      JOIN deployment_target_named t ON t.environment_id = s.environment_id AND t.manifests_endpoint_id = ANY (s.manifests_endpoint_ids)
     WHERE starts_with(m.message->>'type', 'io.kalypso.rollout.') AND e.name = m.data->>'environment' AND s.kind = 'gitops'
       AND s.commit_id = m.data->>'commit'
    UNION
    SELECT t.workspace
      FROM m, deployment_target_named t
     WHERE starts_with(m.message->>'type', 'io.kalypso.drift.') AND t.environment = m.data->>'environment' AND t.workload = m.data->>'workload'
       AND t.name = m.data->>'deploymentTarget'
    UNION
    SELECT t.workspace
      FROM m, host h JOIN deployment_state ds ON ds.host_id = h.id JOIN deployment_target_named t ON t.manifests_endpoint_id = ds.manifests_endpoint_id
     WHERE starts_with(m.message->>'type', 'io.kalypso.host.') AND h.name = m.data->>'host')`;
}
