// Commits as people type them: the full id, or a prefix of at least 7 hex digits as UIs and CLIs
// show it, resolved among the commits the hub has seen where the question is asked (an endpoint and
// the endpoints on its branch, or an environment's). Canonical spellings (`main@sha1:…`) are
// accepted too; anything that is not hex (a tag) is taken as it is. A caller scoped to workspaces
// resolves among the commits seen on its own targets' endpoints: the candidates an ambiguous prefix
// names, and the commit a unique one stands for, are never another workspace's (on a branch shared
// with another workspace, a peer endpoint's commits are that workspace's news).
import { type Kysely, sql } from 'kysely';
import { canonicalCommitId, MIN_COMMIT_PREFIX } from '../../model/commit-id.ts';
import { ok, refused, type Result } from '../../model/result.ts';
import type { HubDatabase } from '../database-schema.ts';

const FULL = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
const HEX = /^[0-9a-f]+$/;
const CANDIDATES_NAMED = 10;

export type CommitScope = { readonly endpoint: string } | { readonly environment: string };

/** `workspaces`: the caller's, when it is scoped to some (undefined: every workspace). */
export async function resolveCommit(db: Kysely<HubDatabase>, scope: CommitScope, input: string, workspaces?: readonly string[]): Promise<Result<string>> {
  const commit = canonicalCommitId(input);
  if (FULL.test(commit) || !HEX.test(commit)) return ok(commit);
  const endpoints =
    'endpoint' in scope
      ? sql`SELECT p.peer_id FROM manifests_endpoint e JOIN endpoint_peer p ON p.endpoint_id = e.id WHERE e.endpoint = ${scope.endpoint}`
      : sql`SELECT p.peer_id FROM deployment_target_named t JOIN endpoint_peer p ON p.endpoint_id = t.manifests_endpoint_id
             WHERE t.environment = ${scope.environment}`;
  const readable =
    workspaces === undefined
      ? sql`true`
      : sql`ec.manifests_endpoint_id IN (SELECT t.manifests_endpoint_id FROM deployment_target_named t WHERE t.workspace = ANY(${[...workspaces]}::text[]))`;
  // A sender that reports short ids (some do) is matched exactly before anything is taken for a prefix.
  const found = await sql<{ commit: string }>`
    SELECT x.commit FROM (
      SELECT DISTINCT ec.gitops_commit_id AS commit
        FROM endpoint_commit ec
       WHERE ec.gitops_commit_id LIKE ${`${commit}%`} AND ec.manifests_endpoint_id IN (${endpoints}) AND ${readable}) x
     ORDER BY x.commit = ${commit} DESC, x.commit
     LIMIT ${CANDIDATES_NAMED + 1}`.execute(db);
  const candidates = found.rows.map((row) => row.commit);
  if (candidates[0] === commit) return ok(commit);
  if (commit.length < MIN_COMMIT_PREFIX) {
    return refused(`${JSON.stringify(input)} is too short: give the full commit or at least ${MIN_COMMIT_PREFIX} hex digits`);
  }
  const where = 'endpoint' in scope ? `on ${scope.endpoint}` : `in environment ${scope.environment}`;
  if (candidates.length === 1) return ok(candidates[0]!);
  if (candidates.length === 0) return refused(`no commit the hub has seen ${where} starts with ${commit}`);
  const named = candidates.slice(0, CANDIDATES_NAMED).join(', ');
  return refused(
    `${commit} is ambiguous ${where}: it starts ${candidates.length > CANDIDATES_NAMED ? `more than ${CANDIDATES_NAMED} commits, among them` : `${candidates.length} commits:`} ${named}`,
  );
}
