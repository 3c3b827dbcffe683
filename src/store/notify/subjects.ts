// The commits the hub reports on (schema/0024 notify_subject): found from the targets' current
// assignments — an environment's GitOps commit, posted on its manifests repository, and a
// workload's source commit, posted on its source repository — and judged again whenever the
// rollout refresh recomputed one of their endpoints (notify_dirty_endpoint) or a subscriber is
// about to turn stale.
import { type Kysely, sql } from 'kysely';
import type { StatusCounts } from '../../contract/answer-types.ts';
import type { HubDatabase } from '../database-schema.ts';

export type SubjectKind = 'gitops' | 'source';
export type CommitState = 'pending' | 'success' | 'failure';

export interface Subject {
  readonly id: number;
  readonly kind: SubjectKind;
  readonly environment: string;
  readonly repo: string;
  readonly commit: string;
  /** The GitOps commit it is judged on (a source subject's newest assignment's). */
  readonly gitopsCommit: string;
  readonly endpointIds: readonly number[];
  /** The branch that carries the commit, when the hub knows it. */
  readonly ref: string | undefined;
  readonly announce: boolean;
  readonly state: CommitState | null;
  readonly description: string | null;
  readonly counts: StatusCounts | null;
}

export interface Judgement {
  readonly state: CommitState;
  readonly description: string;
  readonly counts: StatusCounts & { readonly settled: boolean };
  /** When to judge it again whatever happens (a subscriber turning stale); null: only on a change. */
  readonly dueAt: Date | null;
}

/** The database's clock: what `received_at` and other defaults are written by. */
export async function databaseNow(db: Kysely<HubDatabase>): Promise<Date> {
  return (await sql<{ now: Date }>`SELECT now() AS now`.execute(db)).rows[0]!.now;
}

/**
 * While a notifier runs, the rollout refresh records the endpoints it refreshed for it: alive for
 * `forMs` more, by the database's clock (the one the refresh reads it by).
 */
export async function keepNotifierAlive(db: Kysely<HubDatabase>, forMs: number): Promise<void> {
  await sql`
    INSERT INTO notify_notifier (singleton, alive_until) VALUES (true, now() + ${forMs} * interval '1 millisecond')
    ON CONFLICT (singleton) DO UPDATE SET alive_until = excluded.alive_until`.execute(db);
}

/** In the rollout refresh's transaction: `endpointIds` were refreshed; the notifier, if one runs, judges their subjects. */
export async function markEndpointsChanged(db: Kysely<HubDatabase>, endpointIds: readonly unknown[]): Promise<void> {
  await sql`
    INSERT INTO notify_dirty_endpoint (manifests_endpoint_ids)
    SELECT ${endpointIds}::bigint[] WHERE EXISTS (SELECT 1 FROM notify_notifier WHERE alive_until > now())`.execute(db);
}

/** The endpoints changed since the last call (taken: each is handed out once). */
export async function takeChangedEndpoints(db: Kysely<HubDatabase>): Promise<number[]> {
  const taken = await sql<{ ids: number[] }>`
    WITH taken AS (DELETE FROM notify_dirty_endpoint RETURNING manifests_endpoint_ids)
    SELECT coalesce(array_agg(DISTINCT x), '{}') AS ids FROM taken, unnest(taken.manifests_endpoint_ids) x`.execute(db);
  return taken.rows[0]!.ids.map(Number);
}

/**
 * The subjects of the assignments of the targets on `endpointIds` (every target: 'all') — their
 * current ones, and those received since `receivedSince` (a merge followed by another before the
 * notifier looked is still reported) — added when new, announced or not, and, new or known, made
 * due now. `announceReceivedSince`: announced all the same when one of its assignments arrived
 * since then (the start-up look: a merge that came after the notifier started is news, even when
 * it has settled before the notifier first looked).
 */
export async function discoverSubjects(
  db: Kysely<HubDatabase>,
  endpointIds: readonly number[] | 'all',
  options: { readonly announce: boolean; readonly now: Date; readonly receivedSince?: Date; readonly announceReceivedSince?: Date },
): Promise<void> {
  const { announce, now, receivedSince, announceReceivedSince } = options;
  const news = announceReceivedSince === undefined ? sql`false` : sql`a.received_at >= ${announceReceivedSince}::timestamptz`;
  const onEndpoints = endpointIds === 'all' ? sql`true` : sql`t.manifests_endpoint_id IN (SELECT unnest(${endpointIds}::bigint[]))`;
  const assignments =
    receivedSince === undefined
      ? sql`a.id = t.current_assignment_id`
      : sql`(a.id = t.current_assignment_id OR a.received_at >= ${receivedSince}::timestamptz)`;
  await sql`
    WITH targets AS (
      SELECT t.environment_id, t.manifests_endpoint_id, a.gitops_commit_id, a.assigned_at, me.repo AS manifests_repo,
             w.source_repo, v.build_commit, a.id = t.current_assignment_id AS current, ${news} AS news
        FROM deployment_target t
        JOIN deployment_assignment a ON a.deployment_target_id = t.id AND ${assignments}
        JOIN manifests_endpoint me ON me.id = t.manifests_endpoint_id
        JOIN workload w ON w.id = t.workload_id
        JOIN workload_version v ON v.id = a.workload_version_id
       WHERE ${onEndpoints}
    ), found AS (
      SELECT 'gitops' AS kind, environment_id, manifests_repo AS repo, gitops_commit_id AS commit_id, gitops_commit_id,
             array_agg(DISTINCT manifests_endpoint_id) AS endpoint_ids, bool_or(current) AS current, bool_or(news) AS news
        FROM targets WHERE manifests_repo IS NOT NULL
       GROUP BY environment_id, manifests_repo, gitops_commit_id
      UNION ALL
      SELECT 'source', environment_id, source_repo, build_commit,
             (array_agg(gitops_commit_id ORDER BY assigned_at DESC))[1], array_agg(DISTINCT manifests_endpoint_id), bool_or(current), bool_or(news)
        FROM targets WHERE source_repo IS NOT NULL AND build_commit IS NOT NULL
       GROUP BY environment_id, source_repo, build_commit
    )
    INSERT INTO notify_subject AS s (kind, environment_id, repo, commit_id, gitops_commit_id, manifests_endpoint_ids, first_seen_at, due_at, announce)
    SELECT kind, environment_id, repo, commit_id, gitops_commit_id, endpoint_ids, ${now}::timestamptz, ${now}::timestamptz, ${announce} OR news FROM found
    ON CONFLICT (kind, environment_id, repo, commit_id) DO UPDATE
       SET manifests_endpoint_ids = ARRAY(SELECT DISTINCT x FROM unnest(s.manifests_endpoint_ids || excluded.manifests_endpoint_ids) x ORDER BY x),
           gitops_commit_id = excluded.gitops_commit_id,
           -- A retired subject stays retired, unless its commit is current again (a rollback).
           due_at = CASE WHEN s.retired_at IS NULL OR (SELECT f.current FROM found f WHERE f.kind = s.kind AND f.environment_id = s.environment_id
                                                                                       AND f.repo = s.repo AND f.commit_id = s.commit_id)
                         THEN excluded.due_at ELSE s.due_at END,
           retired_at = CASE WHEN (SELECT f.current FROM found f WHERE f.kind = s.kind AND f.environment_id = s.environment_id
                                                                  AND f.repo = s.repo AND f.commit_id = s.commit_id)
                             THEN NULL ELSE s.retired_at END`.execute(db);
}

/** Subjects watched whose endpoints are among `endpointIds`: due now. */
export async function makeDue(db: Kysely<HubDatabase>, endpointIds: readonly number[], now: Date): Promise<void> {
  if (endpointIds.length === 0) return;
  await sql`
    UPDATE notify_subject SET due_at = ${now}::timestamptz
     WHERE retired_at IS NULL AND manifests_endpoint_ids && ${endpointIds}::bigint[]`.execute(db);
}

/** Up to `limit` subjects due by `now`, those due longest first. */
export async function dueSubjects(db: Kysely<HubDatabase>, now: Date, limit: number): Promise<Subject[]> {
  const rows = await sql<{
    id: number;
    kind: SubjectKind;
    environment: string;
    repo: string;
    commit_id: string;
    gitops_commit_id: string;
    manifests_endpoint_ids: number[];
    ref: string | null;
    announce: boolean;
    state: CommitState | null;
    description: string | null;
    counts: StatusCounts | null;
  }>`
    SELECT s.id, s.kind, e.name AS environment, s.repo, s.commit_id, s.gitops_commit_id, s.manifests_endpoint_ids, s.announce,
           s.state, s.description, s.counts,
           -- The environment's branch (an endpoint's repo/branch less its repo), or the workload's source branch.
           CASE WHEN s.kind = 'gitops'
                THEN (SELECT substr(me.branch, length(me.repo) + 2) FROM manifests_endpoint me
                       WHERE me.id = s.manifests_endpoint_ids[1] AND starts_with(me.branch, me.repo || '/'))
                ELSE (SELECT max(w.source_branch) FROM workload w WHERE w.source_repo = s.repo) END AS ref
      FROM notify_subject s JOIN environment e ON e.id = s.environment_id
     WHERE s.retired_at IS NULL AND s.due_at <= ${now}::timestamptz
     ORDER BY s.due_at, s.id
     LIMIT ${limit}`.execute(db);
  return rows.rows.map((row) => ({
    id: row.id,
    kind: row.kind,
    environment: row.environment,
    repo: row.repo,
    commit: row.commit_id,
    gitopsCommit: row.gitops_commit_id,
    endpointIds: row.manifests_endpoint_ids.map(Number),
    ref: row.ref ?? undefined,
    announce: row.announce,
    state: row.state,
    description: row.description,
    counts: row.counts,
  }));
}

/** A source subject's rollouts: per target of its environment, the newest assignment of a version built from its commit. */
export async function sourceRollouts(db: Kysely<HubDatabase>, subject: Subject): Promise<{ endpoint: string; commit: string }[]> {
  const rows = await sql<{ endpoint: string; commit: string }>`
    SELECT DISTINCT ON (t.id) me.endpoint, a.gitops_commit_id AS commit
      FROM notify_subject s
      JOIN deployment_target t ON t.environment_id = s.environment_id
      JOIN workload w ON w.id = t.workload_id AND w.source_repo = s.repo
      JOIN deployment_assignment a ON a.deployment_target_id = t.id
      JOIN workload_version v ON v.id = a.workload_version_id AND v.build_commit = s.commit_id
      JOIN manifests_endpoint me ON me.id = t.manifests_endpoint_id
     WHERE s.id = ${subject.id}
     ORDER BY t.id, a.assigned_at DESC`.execute(db);
  return rows.rows;
}

/** What the subject is now; it is announced from here on. */
export async function saveJudgement(db: Kysely<HubDatabase>, id: number, judgement: Judgement, now: Date): Promise<void> {
  await sql`
    UPDATE notify_subject
       SET state = ${judgement.state}, description = ${judgement.description}, counts = ${JSON.stringify(judgement.counts)}::jsonb,
           judged_at = ${now}::timestamptz, due_at = ${judgement.dueAt}::timestamptz, announce = true
     WHERE id = ${id}`.execute(db);
}

/** A subject there is nothing left to judge by: no longer watched. */
export async function retireSubject(db: Kysely<HubDatabase>, id: number, now: Date): Promise<void> {
  await sql`UPDATE notify_subject SET retired_at = ${now}::timestamptz, due_at = NULL WHERE id = ${id}`.execute(db);
}

/**
 * Subjects no longer watched: settled ones that a newer commit of their kind, environment and
 * repository followed, and unsettled ones followed that long ago (they will not settle now).
 */
export async function retireSuperseded(db: Kysely<HubDatabase>, now: Date, watchUnsettledMs: number): Promise<void> {
  await sql`
    UPDATE notify_subject s SET retired_at = ${now}::timestamptz
     WHERE s.retired_at IS NULL AND s.state IS NOT NULL
       AND EXISTS (SELECT 1 FROM notify_subject n
                    WHERE n.kind = s.kind AND n.environment_id = s.environment_id AND n.repo = s.repo AND n.first_seen_at > s.first_seen_at
                      AND ((s.counts ->> 'settled')::boolean
                           OR n.first_seen_at < ${now}::timestamptz - ${watchUnsettledMs} * interval '1 millisecond'))`.execute(db);
}
