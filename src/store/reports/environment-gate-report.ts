// The environment gate — the question Kalypso's Check Promote asks after a PR to an environment's
// GitOps branch is merged: has every reconciler subscribed to any deployment target of the
// environment applied the merged commit C, or a commit that came after it, successfully? Each
// subscriber is judged as the endpoint gate judges it (kalypso_gate_endpoints).
//
// Scope: the targets whose branch has carried C (some reconciler or assignment on an endpoint of the
// branch saw it). An environment whose targets pull several repositories is judged on the ones the
// commit belongs to; while no branch has seen C yet, every target is judged (all in progress).
//
// The answer counts every subscriber and target and lists a page of each, those holding the
// rollout up first: prod of fleet L has 4,000 targets and 80,000 subscribers.
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { EnvironmentRolloutState, EnvironmentSubscriber, GateTarget } from '../../contract/answer-types.ts';
import type { HubDatabase } from '../database-schema.ts';
import { type CountedSubscribers, countedSubscribers } from './counted-gate.ts';
import { emptyCounts, mergeCounts, type ReportContext } from './report-context.ts';
import {
  branchCarried,
  type GatePage,
  gateTarget,
  type GateTargetRow,
  gateTargets,
  inWorkspaces,
  isSettled,
  judgeSubscribers,
  type JudgedSubscribers,
  pageOfSubscribers,
  subscriberOf,
  targetVersions,
} from './rollout-gate-report.ts';

/** Where a page of targets starts: after this one, in the order of the answer. */
export interface TargetCursor {
  /** With a failing subscriber 0, in progress 1, stale 2, without subscribers 3, succeeded 4. */
  readonly rank: number;
  readonly key: readonly [workspace: string, application: string, workload: string, target: string];
}

export interface EnvironmentGatePage extends GatePage {
  readonly targetsAfter?: TargetCursor | undefined;
  /**
   * The answer only (the API's): subscribers counted from the summaries (counted-gate.ts), the
   * versions of the page's targets only, and none of the facts over every subscriber below, which
   * need every subscriber judged (the notifier's way, without it).
   */
  readonly answerOnly?: boolean | undefined;
}

export function encodeTargetCursor(cursor: TargetCursor): string {
  return Buffer.from(JSON.stringify([cursor.rank, ...cursor.key])).toString('base64url');
}

/** undefined when the text is not a cursor this hub issued. */
export function decodeTargetCursor(text: string): TargetCursor | undefined {
  try {
    const [rank, ...key] = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown[];
    if (!Number.isSafeInteger(rank) || key.length !== 4 || !key.every((part) => typeof part === 'string')) return undefined;
    return { rank: rank as number, key: key as unknown as TargetCursor['key'] };
  } catch {
    return undefined;
  }
}

/** The environment's gate, and every endpoint it judged: a long poll waits for a change to any of them. */
export interface EnvironmentGate {
  readonly answer: EnvironmentRolloutState;
  readonly endpoints: readonly string[];
  /** Over every subscriber and target, whatever the page (the notifier's description and next look); undefined with `answerOnly`. */
  readonly failedHosts: number | undefined;
  readonly oldestLiveSeenAt: Date | null | undefined;
  readonly versions: ReadonlySet<string>;
}

export async function environmentGateReport(
  db: Kysely<HubDatabase>,
  context: ReportContext,
  environment: string,
  commit: string,
  page: EnvironmentGatePage,
): Promise<EnvironmentGate> {
  // The targets and the subscribers side by side: each statement picks the judged endpoints by the
  // same rule (a write between the two can make them differ for one answer; the next agrees).
  const [targets, subscribers, carriedInEnvironment] = await Promise.all([
    // Every target's versions for the notifier (it reads them all); the page's only otherwise.
    gateTargets(db, sql`t.environment = ${environment} AND ${inWorkspaces(page.workspaces)}`, commit, page.answerOnly !== true),
    page.answerOnly === true
      ? countedSubscribers(db, context, judgedEndpoints(environment, commit, page.workspaces), commit, page)
      : judgeSubscribers(db, context, judgedEndpoints(environment, commit, page.workspaces), commit, page),
    // A scoped caller's targets are judged as in the unscoped answer: whether any branch has carried
    // the commit is asked of every target of the environment (judgedEndpoints decides the same way).
    page.workspaces === undefined ? undefined : environmentCarried(db, environment, commit),
  ]);
  // While no branch has carried the commit, every target is judged (all in progress).
  const anyCarried = carriedInEnvironment ?? targets.some((target) => target.carried);
  const judged = targets.filter((target) => target.carried || !anyCarried);
  const endpointNames = new Map(judged.map((target) => [target.endpoint_id, target.endpoint]));

  // A reconciler pulls one endpoint: summing the endpoints counts each reconciler once.
  const counts = emptyCounts();
  for (const endpointCounts of subscribers.counts.values()) mergeCounts(counts, endpointCounts);
  const gateTargetsJudged = judged.map((row) => ({ row, target: gateTarget(row, subscribers.counts.get(row.endpoint_id) ?? emptyCounts()) }));
  const targetsPage = pageOfTargets(gateTargetsJudged, page);
  return {
    answer: {
      environment,
      commit,
      ...counts,
      settled: isSettled(counts),
      ...pageOfSubscribers(subscribers.rows, page, (row): EnvironmentSubscriber => ({ ...subscriberOf(row, commit), manifestsEndpoint: row.endpoint })),
      targets: page.answerOnly === true ? await withVersions(db, targetsPage.shown, commit) : targetsPage.shown.map(({ target }) => target),
      nextTargetsCursor: targetsPage.nextTargetsCursor,
      targetsTotal: gateTargetsJudged.length,
    },
    endpoints: [...endpointNames.values()],
    ...everySubscriberFacts(subscribers),
    versions: new Set(judged.flatMap((target) => (target.version === null ? [] : [target.version]))),
  };
}

/** The targets with the versions their rows were read without. */
async function withVersions(db: Kysely<HubDatabase>, shown: readonly { row: GateTargetRow; target: GateTarget }[], commit: string): Promise<GateTarget[]> {
  const versions = await targetVersions(db, shown.map(({ row }) => row.id), commit);
  return shown.map(({ row, target }) => {
    const found = versions.get(row.id);
    return { ...target, version: found?.version ?? null, desiredVersion: found?.desired_version ?? null, desiredCommit: found?.desired_commit ?? null };
  });
}

function everySubscriberFacts(subscribers: JudgedSubscribers | CountedSubscribers): Pick<EnvironmentGate, 'failedHosts' | 'oldestLiveSeenAt'> {
  return 'failedHosts' in subscribers
    ? { failedHosts: subscribers.failedHosts, oldestLiveSeenAt: subscribers.oldestLiveSeenAt }
    : { failedHosts: undefined, oldestLiveSeenAt: undefined };
}

/**
 * The endpoints of the environment's targets whose branch has carried the commit; all of them while
 * none has (an SQL bigint[]). With `workspaces`, only the endpoints of those workspaces' targets —
 * whether any branch carried the commit is still asked of every target of the environment.
 */
function judgedEndpoints(environment: string, commit: string, workspaces: readonly string[] | undefined): RawBuilder<unknown> {
  return sql`ARRAY(
    WITH scope AS MATERIALIZED (
      SELECT t.manifests_endpoint_id AS id, bool_or(${inWorkspaces(workspaces)}) AS readable,
             ${branchCarried(sql.ref('t.manifests_endpoint_id'), commit)} AS carried
        FROM deployment_target_named t
       WHERE t.environment = ${environment}
       GROUP BY t.manifests_endpoint_id
    )
    SELECT s.id FROM scope s WHERE s.readable AND (s.carried OR NOT EXISTS (SELECT 1 FROM scope c WHERE c.carried)))`;
}

/** Whether the branch of any target of the environment has carried the commit. */
async function environmentCarried(db: Kysely<HubDatabase>, environment: string, commit: string): Promise<boolean> {
  const result = await sql<{ carried: boolean }>`
    SELECT EXISTS (
      SELECT 1 FROM (SELECT DISTINCT t.manifests_endpoint_id AS id FROM deployment_target_named t WHERE t.environment = ${environment}) e
       WHERE ${branchCarried(sql.ref('e.id'), commit)}) AS carried`.execute(db);
  return result.rows[0]?.carried ?? false;
}

function targetRank(target: GateTarget): number {
  if (target.failed > 0) return 0;
  if (target.inProgress > 0) return 1;
  if (target.stale > 0) return 2;
  return target.total === 0 ? 3 : 4;
}

function targetKey(target: GateTarget): TargetCursor['key'] {
  return [target.workspace, target.application, target.workload, target.deploymentTarget];
}

/** Negative when a comes before b: by rank, then by names (code units: the cursor compares the same way). */
function compareTargets(a: TargetCursor, b: TargetCursor): number {
  if (a.rank !== b.rank) return a.rank - b.rank;
  for (let part = 0; part < a.key.length; part += 1) {
    if (a.key[part] !== b.key[part]) return a.key[part]! < b.key[part]! ? -1 : 1;
  }
  return 0;
}

/** The targets holding the rollout up first, a page after the cursor, and the next page's cursor. */
function pageOfTargets<T extends { target: GateTarget }>(targets: readonly T[], page: EnvironmentGatePage): { shown: T[]; nextTargetsCursor: string | null } {
  const ordered = targets
    .map((item) => ({ item, at: { rank: targetRank(item.target), key: targetKey(item.target) } }))
    .filter(({ at }) => page.targetsAfter === undefined || compareTargets(at, page.targetsAfter) > 0)
    .sort((a, b) => compareTargets(a.at, b.at));
  const shown = page.limit === undefined ? ordered : ordered.slice(0, page.limit);
  const last = shown[shown.length - 1];
  return {
    shown: shown.map(({ item }) => item),
    nextTargetsCursor: shown.length < ordered.length && last !== undefined ? encodeTargetCursor(last.at) : null,
  };
}
