// The rollout gate: has commit C of manifests endpoint E been applied by every reconciler that
// pulls E (its subscribers)? The judgement is the database's (kalypso_gate_endpoints, schema/0027):
// on C or on a commit witnessed to have come after C on E's branch, a subscriber's own status
// counts; on any other commit it is in progress; stale never counts as success.
//
// The answer counts every subscriber and lists a page of them, those holding the rollout up first
// (issue 38): an environment of a large fleet has tens of thousands, and nobody reads them all.
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { EndpointRolloutState, GateTarget, Subscriber } from '../../contract/answer-types.ts';
import { PREPARED_MARK } from '../kept-plans.ts';
import type { HubDatabase } from '../database-schema.ts';
import { TARGET_ENVIRONMENT_ORDER } from './environments-report.ts';
import { addStatus, type EffectiveStatus, emptyCounts, isoTime, joinVersionAt, type ReportContext, staleBefore, type StatusCounts } from './report-context.ts';

/** Where a page of subscribers starts: after this one, in the order of the answer. */
export interface SubscriberCursor {
  /** Failing 0, in progress 1, stale 2, succeeded 3: who holds the rollout up comes first. */
  readonly rank: number;
  readonly host: string;
  readonly reconciler: string;
}

/** Which page of the answer: `limit` undefined lists every subscriber and target (the notifier's way). */
export interface GatePage {
  readonly limit: number | undefined;
  readonly after?: SubscriberCursor | undefined;
  /**
   * The workspaces of a scoped caller (issue 39); undefined for all. The gate's own queries keep
   * only their deployment targets (and, for an environment, the subscribers of those targets'
   * endpoints), so that counts are over all of the caller's subscribers and pages are full.
   */
  readonly workspaces?: readonly string[] | undefined;
}

/** An SQL condition on `t` (deployment_target_named): the target is in one of `workspaces`; true when undefined. */
export function inWorkspaces(workspaces: readonly string[] | undefined): RawBuilder<unknown> {
  return workspaces === undefined ? sql`true` : sql`t.workspace = ANY(${[...workspaces]}::text[])`;
}

export const STATUS_RANK: Record<EffectiveStatus, number> = { failure: 0, in_progress: 1, stale: 2, success: 3 };

/** STATUS_RANK in SQL, of the judged row `g` (any other status ranks with success, as it counts). */
const RANK_OF_STATUS = sql.raw(
  `CASE g.status ${(['failure', 'in_progress', 'stale'] as const).map((status) => `WHEN '${status}' THEN ${STATUS_RANK[status]}`).join(' ')} ELSE ${STATUS_RANK.success} END`,
);

export function encodeSubscriberCursor(cursor: SubscriberCursor): string {
  return Buffer.from(JSON.stringify([cursor.rank, cursor.host, cursor.reconciler])).toString('base64url');
}

/** undefined when the text is not a cursor this hub issued. */
export function decodeSubscriberCursor(text: string): SubscriberCursor | undefined {
  try {
    const [rank, host, reconciler] = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown[];
    if (!Number.isSafeInteger(rank) || typeof host !== 'string' || typeof reconciler !== 'string') return undefined;
    return { rank: rank as number, host, reconciler };
  } catch {
    return undefined;
  }
}

/** A row of gateTargets: a target, its endpoint's id, and whether its branch has carried the commit. */
export interface GateTargetRow extends TargetVersions {
  id: number;
  environment: string;
  workspace: string;
  application: string;
  workload: string;
  name: string;
  endpoint_id: number;
  endpoint: string;
  carried: boolean;
}

/** Makes a statement a prepared one when asked (kept-plans.ts, PREPARED_MARK); nothing otherwise. */
function preparedMark(prepared: boolean): RawBuilder<unknown> {
  return sql.raw(prepared ? PREPARED_MARK : '');
}

/** The version `commit` runs on a target, and the target's desired version and commit. */
export interface TargetVersions {
  version: string | null;
  desired_version: string | null;
  desired_commit: string | null;
}

/**
 * The deployment targets chosen by `where` (a condition on `t`, deployment_target_named), in
 * promotion order, with whether the target's branch has carried `commit` (some reconciler or
 * assignment on an endpoint of the branch saw it) and, unless `versions` is false (then null, for
 * targetVersions to look up for a page of them), the version `commit` runs on each.
 */
export async function gateTargets(
  db: Kysely<HubDatabase>,
  where: ReturnType<typeof sql>,
  commit: string,
  versions = true,
  prepared = false,
): Promise<GateTargetRow[]> {
  const rows = await sql<GateTargetRow>`${preparedMark(prepared)}
    SELECT t.id, t.environment, t.workspace, t.application, t.workload, t.name, t.manifests_endpoint_id AS endpoint_id, me.endpoint,
           ${versions ? sql`at_commit.version, desired.version AS desired_version, a.gitops_commit_id AS desired_commit` : sql`NULL AS version, NULL AS desired_version, NULL AS desired_commit`},
           ${branchCarried(sql.ref('t.manifests_endpoint_id'), commit)} AS carried
      FROM deployment_target_named t
      JOIN manifests_endpoint me ON me.id = t.manifests_endpoint_id
      ${versions ? targetVersionJoins(commit) : sql``}
     WHERE ${where}
     ORDER BY ${TARGET_ENVIRONMENT_ORDER}, t.workspace, t.application, t.workload, t.name`.execute(db);
  return rows.rows.map((row) => ({ ...row, id: Number(row.id) }));
}

function targetVersionJoins(commit: string): RawBuilder<unknown> {
  return sql`${joinVersionAt('t', sql`${commit}`, 'at_commit')}
      LEFT JOIN deployment_assignment a ON a.id = t.current_assignment_id
      LEFT JOIN workload_version desired ON desired.id = a.workload_version_id`;
}

/** The versions of the targets `ids` (gateTargets' without them: a page's worth, by index, instead of hashing every assignment). */
export async function targetVersions(db: Kysely<HubDatabase>, ids: readonly number[], commit: string): Promise<Map<number, TargetVersions>> {
  if (ids.length === 0) return new Map();
  const rows = await sql<TargetVersions & { id: number }>`
    SELECT t.id, at_commit.version, desired.version AS desired_version, a.gitops_commit_id AS desired_commit
      FROM unnest(${[...ids]}::bigint[]) AS x(id)
      JOIN deployment_target t ON t.id = x.id
      ${targetVersionJoins(commit)}`.execute(db);
  return new Map(rows.rows.map(({ id, ...versions }) => [Number(id), versions]));
}

/**
 * Whether the branch of endpoint `endpointId` (an SQL expression) has carried `commit`: some
 * reconciler or assignment on an endpoint of it saw it. The endpoint itself is looked at first (its
 * peers include it): one probe of endpoint_commit's key, which answers for an environment that
 * received the commit, where the peers alone were hashed over the whole fleet (prod of fleet L:
 * 26 → 10 ms for its 4,000 targets). The peers are only asked of an endpoint that has not seen it.
 */
export function branchCarried(endpointId: RawBuilder<unknown>, commit: string): RawBuilder<unknown> {
  return sql`(EXISTS (SELECT 1 FROM endpoint_commit ec WHERE ec.manifests_endpoint_id = ${endpointId} AND ec.gitops_commit_id = ${commit})
              OR EXISTS (SELECT 1 FROM endpoint_peer p
                           JOIN endpoint_commit ec ON ec.manifests_endpoint_id = p.peer_id AND ec.gitops_commit_id = ${commit}
                          WHERE p.endpoint_id = ${endpointId}))`;
}

export function gateTarget(row: GateTargetRow, counts: StatusCounts): GateTarget {
  return {
    environment: row.environment,
    workspace: row.workspace,
    application: row.application,
    workload: row.workload,
    deploymentTarget: row.name,
    manifestsEndpoint: row.endpoint,
    version: row.version,
    desiredVersion: row.desired_version,
    desiredCommit: row.desired_commit,
    ...counts,
  };
}

/** A subscriber of the page, judged and named. */
export interface GateRow {
  endpoint_id: number;
  /** The manifests endpoint's name. */
  endpoint: string;
  rank: number;
  host: string;
  reconciler: string;
  type: string;
  applied_commit: string;
  status: EffectiveStatus;
  status_message: string;
  observed_at: Date;
  last_seen_at: Date;
  moved_past: boolean;
}

/** The subscribers of some endpoints, judged: counted per endpoint, and a page of them (one more than asked). */
export interface JudgedSubscribers {
  readonly counts: ReadonlyMap<number, StatusCounts>;
  readonly rows: readonly GateRow[];
  /** Over every subscriber, not only the page's: hosts with a failing one, and the longest silence of those counted live. */
  readonly failedHosts: number;
  readonly oldestLiveSeenAt: Date | null;
}

/**
 * The counts per endpoint and status as a gate statement returns them: three JSON arrays (json_agg),
 * which the driver parses with JSON.parse — as SQL arrays they were parsed character by character
 * in JavaScript (prod at fleet L: three arrays of 8,700, a tenth of the hub's CPU per answer).
 */
export interface CountLists {
  count_endpoints: number[] | null;
  count_statuses: EffectiveStatus[] | null;
  count_ns: number[] | null;
}

/** The counts per endpoint that the lists give (none without a summary row). */
export function countsPerEndpoint(lists: CountLists | undefined): Map<number, StatusCounts> {
  const counts = new Map<number, StatusCounts>();
  (lists?.count_endpoints ?? []).forEach((endpointId, index) => {
    const id = Number(endpointId);
    const endpointCounts = counts.get(id) ?? emptyCounts();
    counts.set(id, endpointCounts);
    addStatus(endpointCounts, lists!.count_statuses![index]!, lists!.count_ns![index]);
  });
  return counts;
}

type JudgedRow = GateRow &
  CountLists & {
  failed_hosts: number | null;
  oldest_live_seen: Date | null;
};

/**
 * Every subscriber of the endpoints `endpointIds` (an SQL bigint[]) judged on `commit` once, in one
 * statement: counted per endpoint and status, and only the page's rows named (an environment of
 * fleet L judges 80,000, and naming and shipping them all took seconds).
 */
export async function judgeSubscribers(
  db: Kysely<HubDatabase>,
  context: ReportContext,
  endpointIds: RawBuilder<unknown>,
  commit: string,
  page: GatePage,
  prepared = false,
): Promise<JudgedSubscribers> {
  const result = await sql<JudgedRow>`${preparedMark(prepared)}
    WITH judged AS MATERIALIZED (
      SELECT g.*, ${RANK_OF_STATUS} AS rank
        FROM ${judgedFrom(endpointIds, commit, context, prepared)}
    ), counted AS (
      SELECT j.endpoint_id, j.status, count(*)::int AS n, min(j.last_seen_at) AS oldest_seen FROM judged j GROUP BY 1, 2
    ), page AS (
      -- Rank by rank, each part named and sorted on its own: an Append runs its parts in order and
      -- the LIMIT stops it, so while the holders fill the page the 70,000 succeeded of a large
      -- rollout are never looked up (600 ms at fleet L).
      SELECT q.endpoint_id, me.endpoint, q.rank, q.host, q.reconciler, q.type, q.applied_commit, q.status, q.status_message,
             q.observed_at, q.last_seen_at, q.moved_past
        FROM (SELECT p.* FROM (${sql.join(
          RANKS.filter((rank) => page.after === undefined || rank >= page.after.rank).map((rank) => sql`(${pagePart(rank, page)})`),
          sql` UNION ALL `,
        )}) p
        ${page.limit === undefined ? sql`` : sql`LIMIT ${page.limit + 1}`}) q
        JOIN manifests_endpoint me ON me.id = q.endpoint_id
    )
    SELECT NULL::bigint AS endpoint_id, NULL::text AS endpoint, NULL::int AS rank, NULL::text AS host, NULL::text AS reconciler, NULL::text AS type,
           NULL::text AS applied_commit, NULL::text AS status, NULL::text AS status_message, NULL::timestamptz AS observed_at,
           NULL::timestamptz AS last_seen_at, NULL::boolean AS moved_past,
           json_agg(c.endpoint_id) AS count_endpoints, json_agg(c.status) AS count_statuses, json_agg(c.n) AS count_ns,
           (SELECT count(DISTINCT j.host_id) FROM judged j WHERE j.status = 'failure')::int AS failed_hosts,
           min(c.oldest_seen) FILTER (WHERE c.status <> 'stale') AS oldest_live_seen
      FROM counted c
    UNION ALL
    SELECT p.*, NULL, NULL, NULL, NULL, NULL FROM page p
     ORDER BY rank NULLS FIRST, host, reconciler`.execute(db);
  const [summary, ...rows] = result.rows;
  return {
    counts: countsPerEndpoint(summary),
    rows: rows.map((row) => ({ ...row, endpoint_id: Number(row.endpoint_id) })),
    failedHosts: summary?.failed_hosts ?? 0,
    oldestLiveSeenAt: summary?.oldest_live_seen ?? null,
  };
}

/**
 * kalypso_gate_endpoints over the endpoints `endpointIds`. Prepared, its body is written into the
 * statement (schema/0045) and planned once per connection: the ids are passed as a column of a
 * subquery kept apart (OFFSET 0), since a sub-select among a function's arguments keeps it from being
 * inlined. Unprepared (an environment's thousands of endpoints), the function is planned at its call,
 * with its own row estimate, as before.
 */
export function judgedFrom(endpointIds: RawBuilder<unknown>, commit: string, context: ReportContext, prepared: boolean): RawBuilder<unknown> {
  return prepared
    ? sql`(SELECT ${endpointIds} AS ids OFFSET 0) asked CROSS JOIN LATERAL kalypso_gate_endpoints(asked.ids, ${commit}, ${staleBefore(context)}::timestamptz) g`
    : sql`kalypso_gate_endpoints(${endpointIds}, ${commit}, ${staleBefore(context)}::timestamptz) g`;
}

/** The judged subscribers of the ranks `ranks` (a condition on j) after the page's cursor, named, in the answer's order. */
const RANKS = [0, 1, 2, 3] as const;

/**
 * The judged subscribers of one rank after the page's cursor, named, in the answer's order. A page
 * takes its rows from the first hosts by name that have one of that rank (each has at least one;
 * the cursor's host may have none left, hence one more): naming and sorting every subscriber of a
 * rank — all 80,000 while an environment rolls out — cost a lookup of host and reconciler each.
 */
function pagePart(rank: number, page: GatePage): RawBuilder<unknown> {
  const cursor = page.after?.rank === rank ? page.after : undefined;
  const firstHosts =
    page.limit === undefined
      ? sql`true`
      : sql`j.host_id = ANY (ARRAY(
          SELECT fh.id FROM host fh
           WHERE EXISTS (SELECT 1 FROM judged fj WHERE fj.host_id = fh.id AND fj.rank = ${rank})
             ${cursor === undefined ? sql`` : sql`AND fh.name >= ${cursor.host}`}
           ORDER BY fh.name
           LIMIT ${page.limit + 2}))`;
  return sql`
    SELECT j.endpoint_id, j.rank, h.name AS host, r.name AS reconciler, r.type, j.applied_commit, j.status, j.status_message,
           j.observed_at, j.last_seen_at, j.moved_past
      FROM judged j
      JOIN host h ON h.id = j.host_id
      JOIN reconciler r ON r.id = j.reconciler_id
     WHERE j.rank = ${rank} AND ${firstHosts}
       ${cursor === undefined ? sql`` : sql`AND (h.name, r.name) > (${cursor.host}, ${cursor.reconciler})`}
     ORDER BY h.name, r.name
     ${page.limit === undefined ? sql`` : sql`LIMIT ${page.limit + 1}`}`;
}

/** The page's subscribers, and the cursor of the next page when there is one. */
export function pageOfSubscribers<T>(rows: readonly GateRow[], page: GatePage, subscriber: (row: GateRow) => T): { subscribers: T[]; nextCursor: string | null } {
  const shown = page.limit === undefined ? rows : rows.slice(0, page.limit);
  const last = shown[shown.length - 1];
  return {
    subscribers: shown.map(subscriber),
    nextCursor: shown.length < rows.length && last !== undefined ? encodeSubscriberCursor({ rank: last.rank, host: last.host, reconciler: last.reconciler }) : null,
  };
}

export function subscriberOf(row: GateRow, commit: string): Subscriber {
  const onCommit = row.applied_commit === commit;
  const waiting = row.status === 'in_progress' && !onCommit && !row.moved_past;
  return {
    host: row.host,
    reconciler: row.reconciler,
    reconcilerType: row.type,
    status: row.status,
    statusMessage: waiting
      ? `applied ${row.applied_commit}; ${commit} not applied yet${row.status_message === '' ? '' : ` (${row.status_message})`}`
      : row.status_message,
    appliedCommit: row.applied_commit,
    observedAt: isoTime(row.observed_at),
    lastSeenAt: isoTime(row.last_seen_at),
    supersededBy: row.moved_past ? row.applied_commit : null,
  };
}

export function isSettled(counts: StatusCounts): boolean {
  return counts.total > 0 && counts.inProgress === 0 && counts.stale === 0;
}

export async function rolloutGateReport(
  db: Kysely<HubDatabase>,
  context: ReportContext,
  endpoint: string,
  commit: string,
  page: GatePage,
): Promise<EndpointRolloutState> {
  const [judged, targets] = await Promise.all([
    // Prepared: planning these two took longer than running them for one endpoint (PREPARED_MARK).
    judgeSubscribers(db, context, sql`ARRAY(SELECT id FROM manifests_endpoint WHERE endpoint = ${endpoint})`, commit, page, true),
    gateTargets(db, sql`me.endpoint = ${endpoint} AND ${inWorkspaces(page.workspaces)}`, commit, true, true),
  ]);
  // One endpoint: its counts are the only ones.
  const counts = [...judged.counts.values()][0] ?? emptyCounts();
  return {
    manifestsEndpoint: endpoint,
    commit,
    ...counts,
    settled: isSettled(counts),
    ...pageOfSubscribers(judged.rows, page, (row) => subscriberOf(row, commit)),
    // Every reconciler of the endpoint pulls each of its targets: the endpoint's counts are theirs.
    targets: targets.map((target) => gateTarget(target, counts)),
  };
}
