// The environment gate's subscribers from the summaries' counts (schema/0035): counted per endpoint
// and status, and a page of them named, without judging each of an environment's 80,000.
//
// A subscriber's gate status is kalypso_gate_status(stale, on C or a later commit, reported): all
// of it but "stale" follows from its (endpoint, applied commit, reported status), which the summary
// refresh counts in endpoint_status_count and remembers per reconciler in summary_reconciler. So
// each counted class is judged once, and the reconcilers whose counted place may differ from their
// state at the cut asked for — the dirty ones — are taken out of the counts and judged again from
// deployment_state:
// - those queued in summary_queue (written since the last refresh: inserted, removed, or changed
//   endpoint, host, commit, status or observation — every such write queues them, by a trigger);
// - those counted live whose remembered last sign of life is older than the cut (the refresh has
//   not aged them yet, or the cut is later than its clock);
// - every one counted stale (a sign of life since, or a cut earlier than the refresh's clock).
// Any other reconciler is counted live, with a remembered last sign of life at or after the cut;
// its real one is no older (the refresh remembers a value its state had, and a later report only
// moves it forward), so it is live at the cut too, with the endpoint, commit and status it is
// counted with: its class's judgement is its own. Hence counts and pages equal the judgement of
// every subscriber (test/store/counted-gate.test.ts holds them to it after random writes, with and
// without a refresh, at cuts either side of the refresh's).
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { HubDatabase } from '../database-schema.ts';
import { type EffectiveStatus, type ReportContext, staleBefore, type StatusCounts } from './report-context.ts';
import { type CountLists, countsPerEndpoint, type GatePage, type GateRow, STATUS_RANK } from './rollout-gate-report.ts';

/** The subscribers of some endpoints, counted per endpoint, and a page of them (one more than asked). */
export interface CountedSubscribers {
  readonly counts: ReadonlyMap<number, StatusCounts>;
  readonly rows: readonly GateRow[];
}

/** The gate's statuses in the answer's order (STATUS_RANK): those holding the rollout up first. */
const RANK_STATUS = (Object.keys(STATUS_RANK) as EffectiveStatus[]).sort((a, b) => STATUS_RANK[a] - STATUS_RANK[b]);

type CountedRow = GateRow & CountLists;

/** Every subscriber of the endpoints `endpointIds` (an SQL bigint[]) on `commit`, counted, and the page's named. */
export async function countedSubscribers(
  db: Kysely<HubDatabase>,
  context: ReportContext,
  endpointIds: RawBuilder<unknown>,
  commit: string,
  page: GatePage,
): Promise<CountedSubscribers> {
  const cut = sql`${staleBefore(context)}::timestamptz`;
  const onCommitOrLater = (endpoint: string, applied: string) =>
    sql`(${sql.ref(applied)} = ${commit} OR EXISTS (SELECT 1 FROM later l WHERE l.endpoint_id = ${sql.ref(endpoint)} AND l.later_commit = ${sql.ref(applied)}))`;
  const ranks = RANK_STATUS.map((_, rank) => rank).filter((rank) => page.after === undefined || rank >= page.after.rank);
  const result = await sql<CountedRow>`
    WITH asked AS MATERIALIZED (
      SELECT DISTINCT x.id FROM unnest(${endpointIds}) AS x(id)
    ), later AS MATERIALIZED (
      SELECT l.endpoint_id, l.later_commit FROM kalypso_gate_later(ARRAY(SELECT a.id FROM asked a), ${commit}) l
    ), classes AS MATERIALIZED (
      -- Each (endpoint, commit, status) the summary counts, judged once.
      SELECT k.manifests_endpoint_id AS endpoint_id, k.gitops_commit_id, k.status AS counted_status, k.reconcilers,
             kalypso_gate_status(k.status = 'stale', ${onCommitOrLater('k.manifests_endpoint_id', 'k.gitops_commit_id')}, k.status) AS status
        -- By key, in one index scan (= ANY): joined, each of prod's 4,000 endpoints at fleet L was a
        -- bitmap scan of its own (the endpoints asked are guessed to be 10).
        FROM endpoint_status_count k WHERE k.manifests_endpoint_id = ANY (ARRAY(SELECT a.id FROM asked a))
    ), dirty AS MATERIALIZED (
      SELECT DISTINCT d.id FROM (
        SELECT unnest(q.reconciler_ids) FROM summary_queue q
        UNION ALL
        SELECT c.reconciler_id FROM summary_reconciler c WHERE NOT c.counted_stale AND c.last_seen_at < ${cut}
        UNION ALL
        SELECT c.reconciler_id FROM classes k
          JOIN summary_reconciler c ON c.manifests_endpoint_id = k.endpoint_id AND c.status = k.counted_status AND c.gitops_commit_id = k.gitops_commit_id
         WHERE k.counted_status = 'stale') d(id)
    ), rejudged AS MATERIALIZED (
      SELECT s.manifests_endpoint_id AS endpoint_id, s.reconciler_id, s.host_id,
             kalypso_gate_status(s.last_seen_at < ${cut}, ${onCommitOrLater('s.manifests_endpoint_id', 's.gitops_commit_id')}, s.status::text) AS status
        FROM dirty d JOIN deployment_state s ON s.reconciler_id = d.id
       WHERE s.manifests_endpoint_id IN (SELECT a.id FROM asked a)
    ), counted AS (
      SELECT k.endpoint_id, k.status, k.reconcilers AS n FROM classes k
      UNION ALL
      -- The dirty ones out of the classes they are counted in, and in as they are.
      SELECT k.endpoint_id, k.status, -1 FROM dirty d
        JOIN summary_reconciler c ON c.reconciler_id = d.id
        JOIN classes k ON k.endpoint_id = c.manifests_endpoint_id AND k.counted_status = c.status AND k.gitops_commit_id = c.gitops_commit_id
      UNION ALL
      SELECT j.endpoint_id, j.status, 1 FROM rejudged j
    ), summed AS (
      SELECT c.endpoint_id, c.status, sum(c.n)::int AS n FROM counted c GROUP BY 1, 2 HAVING sum(c.n) <> 0
    ), ${sql.join(RANK_STATUS.map((status, rank) => sql`${sql.raw(`candidates_${rank}`)} AS MATERIALIZED (${candidates(status)})`))},
    page AS (
      -- Rank by rank under one LIMIT: the Append stops once the holders fill the page, so the 75,000
      -- succeeded of prod at fleet L are never looked up.
      SELECT q.endpoint_id, me.endpoint, q.rank, q.host, q.reconciler, q.type, q.applied_commit, q.status, q.status_message,
             q.observed_at, q.last_seen_at, q.moved_past
        FROM (SELECT p.* FROM (${sql.join(
          // A cursor past the last rank: nothing after it (the empty part keeps the statement whole).
          ranks.length === 0 ? [sql`(SELECT e.* FROM (${pagePart(0, page, cut, commit)}) e WHERE false)`] : ranks.map((rank) => sql`(${pagePart(rank, page, cut, commit)})`),
          sql` UNION ALL `,
        )}) p
        ${page.limit === undefined ? sql`` : sql`LIMIT ${page.limit + 1}`}) q
        JOIN manifests_endpoint me ON me.id = q.endpoint_id
    )
    SELECT NULL::bigint AS endpoint_id, NULL::text AS endpoint, NULL::int AS rank, NULL::text AS host, NULL::text AS reconciler, NULL::text AS type,
           NULL::text AS applied_commit, NULL::text AS status, NULL::text AS status_message, NULL::timestamptz AS observed_at,
           NULL::timestamptz AS last_seen_at, NULL::boolean AS moved_past,
           json_agg(c.endpoint_id) AS count_endpoints, json_agg(c.status) AS count_statuses, json_agg(c.n) AS count_ns
      FROM summed c
    UNION ALL
    SELECT p.*, NULL, NULL, NULL FROM page p
     ORDER BY rank NULLS FIRST, host, reconciler`.execute(db);
  const [summary, ...rows] = result.rows;
  return { counts: countsPerEndpoint(summary), rows: rows.map((row) => ({ ...row, endpoint_id: Number(row.endpoint_id) })) };
}

/** The reconcilers (and their hosts) of one gate status: the clean ones of its classes, found by summary_reconciler_by_class, and the dirty ones judged so. */
function candidates(status: EffectiveStatus): RawBuilder<unknown> {
  return sql`
    SELECT c.reconciler_id, c.host_id FROM classes k
      JOIN summary_reconciler c ON c.manifests_endpoint_id = k.endpoint_id AND c.status = k.counted_status AND c.gitops_commit_id = k.gitops_commit_id
     WHERE k.status = ${status} AND NOT EXISTS (SELECT 1 FROM dirty d WHERE d.id = c.reconciler_id)
    UNION ALL
    SELECT j.reconciler_id, j.host_id FROM rejudged j WHERE j.status = ${status}`;
}

/**
 * The subscribers of one rank after the page's cursor, named, in the answer's order: from the first
 * hosts by name that hold the page's rows, so that a rank of thousands is not named whole. A host is
 * taken while the candidates of the hosts before it number fewer than the page (its own may fill
 * it); the cursor's host counts for none, since some of its candidates come before the cursor.
 */
function pagePart(rank: number, page: GatePage, cut: RawBuilder<unknown>, commit: string): RawBuilder<unknown> {
  const cursor = page.after?.rank === rank ? page.after : undefined;
  const ofRank = sql.raw(`candidates_${rank}`);
  const firstHosts =
    page.limit === undefined
      ? sql`true`
      : // A hashed subplan (IS TRUE keeps the IN from being planned as a join): = ANY (ARRAY(…)) is
        // searched linearly for each row (prod's 4,000 in progress against a page of 1,000 hosts:
        // 4 million comparisons, 45 ms), and as a join, the candidates estimated at a few rows, it
        // was a nested loop over the hosts for each candidate (600 ms). Hosts taken by count, not
        // as the page's number of hosts (each has at least one): at fleet S, prod's 666 hosts
        // were all under a page of 1,000, and all 7,512 succeeded were named for 521 rows (86 ms).
        sql`(x.host_id IN (
          SELECT f.id FROM (
            SELECT fh.id,
                   coalesce(sum(${cursor === undefined ? sql`n.c` : sql`CASE WHEN fh.name = ${cursor.host} THEN 0 ELSE n.c END`})
                              OVER (ORDER BY fh.name ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
              FROM (SELECT y.host_id, count(*) AS c FROM ${ofRank} y GROUP BY y.host_id) n
              JOIN host fh ON fh.id = n.host_id
             ${cursor === undefined ? sql`` : sql`WHERE fh.name >= ${cursor.host}`}
             ORDER BY fh.name
             LIMIT ${page.limit + 2}) f
           WHERE f.before < ${page.limit + 1})) IS TRUE`;
  return sql`
    SELECT s.manifests_endpoint_id AS endpoint_id, ${rank}::int AS rank, h.name AS host, r.name AS reconciler, r.type,
           s.gitops_commit_id AS applied_commit,
           kalypso_gate_status(s.last_seen_at < ${cut}, s.gitops_commit_id = ${commit} OR m.moved_past, s.status::text) AS status,
           s.status_message, s.observed_at, s.last_seen_at, m.moved_past
      FROM ${ofRank} x
      JOIN deployment_state s ON s.reconciler_id = x.reconciler_id
      JOIN host h ON h.id = s.host_id
      JOIN reconciler r ON r.id = s.reconciler_id
     CROSS JOIN LATERAL (SELECT s.gitops_commit_id <> ${commit}
                                AND EXISTS (SELECT 1 FROM later l WHERE l.endpoint_id = s.manifests_endpoint_id AND l.later_commit = s.gitops_commit_id) AS moved_past) m
     WHERE ${firstHosts}
       ${cursor === undefined ? sql`` : sql`AND (h.name, r.name) > (${cursor.host}, ${cursor.reconciler})`}
     ORDER BY h.name, r.name
     ${page.limit === undefined ? sql`` : sql`LIMIT ${page.limit + 1}`}`;
}
