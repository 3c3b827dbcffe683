// Which branch (repo/branch) and repository an endpoint pulls, when a source named repo and branch
// apart. The endpoints of one branch share what the hub witnessed about its commits (schema/0010),
// so that a cluster that skipped a commit on one path can still be known to have moved past it; the
// repository is where commit statuses about the endpoint's commits are posted.
import { type Kysely, sql } from 'kysely';
import type { BoundedCache } from './bounded-cache.ts';
import type { HubDatabase } from './database-schema.ts';

export interface EndpointBranch {
  readonly endpointId: number;
  readonly branch: string | undefined;
  readonly repo: string | undefined;
}

/** Sets the branches not yet written by this hub; outside the batch's transaction, like dimension rows. */
export async function recordBranches(db: Kysely<HubDatabase>, written: BoundedCache<string, true>, rows: readonly EndpointBranch[]): Promise<void> {
  const pending = new Map<number, { branch: string; repo: string | null }>();
  for (const { endpointId, branch, repo } of rows) {
    if (branch === undefined || written.get(cacheKey(endpointId, branch)) !== undefined) continue;
    pending.set(endpointId, { branch, repo: repo ?? null });
  }
  if (pending.size === 0) return;
  const ids = [...pending.keys()].sort((a, b) => a - b);
  // An endpoint that joins a branch learns what its peers witnessed before: versions are carried
  // forward from every commit its branch's targets know (schema/0017).
  await sql`
    WITH named AS (
      SELECT x.*, e.branch IS DISTINCT FROM x.branch AS moved
        FROM unnest(${ids}::bigint[], ${ids.map((id) => pending.get(id)!.branch)}::text[], ${ids.map((id) => pending.get(id)!.repo)}::text[]) AS x(id, branch, repo)
        JOIN manifests_endpoint e ON e.id = x.id
       WHERE e.branch IS DISTINCT FROM x.branch OR (x.repo IS NOT NULL AND e.repo IS DISTINCT FROM x.repo)
    ), learned AS (
      UPDATE manifests_endpoint e SET branch = n.branch, repo = coalesce(n.repo, e.repo)
        FROM named n
       WHERE e.id = n.id
      RETURNING e.id, n.moved
    )
    SELECT kalypso_branch_learned(array_agg(id)) FROM learned WHERE moved HAVING count(*) > 0`.execute(db);
  for (const id of ids) written.set(cacheKey(id, pending.get(id)!.branch), true);
}

function cacheKey(endpointId: number, branch: string): string {
  return `${endpointId}\u0000${branch}`;
}
