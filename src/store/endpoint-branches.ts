// Which branch (repo/branch) an endpoint pulls, when a source named repo and branch apart. The
// endpoints of one branch share what the hub witnessed about its commits (schema/0010), so that a
// cluster that skipped a commit on one path can still be known to have moved past it.
import { type Kysely, sql } from 'kysely';
import type { BoundedCache } from './bounded-cache.ts';
import type { HubDatabase } from './database-schema.ts';

export interface EndpointBranch {
  readonly endpointId: number;
  readonly branch: string | undefined;
}

/** Sets the branches not yet written by this hub; outside the batch's transaction, like dimension rows. */
export async function recordBranches(db: Kysely<HubDatabase>, written: BoundedCache<string, true>, rows: readonly EndpointBranch[]): Promise<void> {
  const pending = new Map<number, string>();
  for (const { endpointId, branch } of rows) {
    if (branch === undefined || written.get(`${endpointId}\u0000${branch}`) !== undefined) continue;
    pending.set(endpointId, branch);
  }
  if (pending.size === 0) return;
  const ids = [...pending.keys()].sort((a, b) => a - b);
  // An endpoint that joins a branch learns what its peers witnessed before: versions are carried
  // forward from every commit its branch's targets know (schema/0017).
  await sql`
    WITH learned AS (
      UPDATE manifests_endpoint e SET branch = x.branch
        FROM unnest(${ids}::bigint[], ${ids.map((id) => pending.get(id)!)}::text[]) AS x(id, branch)
       WHERE e.id = x.id AND e.branch IS DISTINCT FROM x.branch
      RETURNING e.id
    )
    SELECT kalypso_branch_learned(array_agg(id)) FROM learned HAVING count(*) > 0`.execute(db);
  for (const id of ids) written.set(`${id}\u0000${pending.get(id)!}`, true);
}
