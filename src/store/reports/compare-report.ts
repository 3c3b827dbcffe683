// "Environment discrepancies" for any environments: one row per workload and deployment target
// name, with each environment's desired and deployed versions side by side.
import { type Kysely, sql } from 'kysely';
import type { CompareRow, DeployedVersion } from '../../contract/answer-types.ts';
import type { HubDatabase } from '../database-schema.ts';
import { summariesCurrent } from '../summary-refresh.ts';
import { type EffectiveStatus, type ReportContext, rowLimit } from './report-context.ts';
import { addDeployed, type TargetRow, targetDeploymentOf, type TargetRowKey } from './target-deployments.ts';

export interface ComparePage {
  readonly limit: number;
  /** The last row of the previous page. */
  readonly after?: TargetRowKey | undefined;
  readonly workspace?: string | undefined;
  readonly application?: string | undefined;
}

/** A page of comparison rows (by workspace, application, workload, target), and the next page's start. */
export async function compareReport(
  db: Kysely<HubDatabase>,
  context: ReportContext,
  environments: readonly string[],
  page: ComparePage,
): Promise<{ items: CompareRow[]; next: TargetRowKey | null }> {
  await summariesCurrent(db, context.asOf);
  const targets = await readComparedTargets(db, environments, page);
  const pageKeys: TargetRowKey[] = [];
  const rows = new Map<string, CompareRow>();
  let more = false;
  for (const target of targets) {
    const id = JSON.stringify([target.workspace, target.application, target.workload, target.target]);
    let row = rows.get(id);
    if (row === undefined) {
      // The first row of the key after the page's: there is a next page.
      more = pageKeys.length === page.limit;
      if (more) break;
      pageKeys.push([target.workspace, target.application, target.workload, target.target]);
      row = {
        workspace: target.workspace,
        application: target.application,
        workload: target.workload,
        deploymentTarget: target.target,
        environments: Object.fromEntries(environments.map((name) => [name, null])),
        desiredDiffers: false,
        deployedDiffers: false,
      };
      rows.set(id, row);
    }
    const versions = new Map<string, DeployedVersion>();
    for (const [commit, version, onDesired, status, n] of target.deployed ?? []) addDeployed(versions, { commit, version, on_desired: onDesired, status, n });
    const { manifestsEndpoint, desired, deployed, reconcilers } = targetDeploymentOf(target, versions);
    row.environments[target.environment] = { manifestsEndpoint, desired, deployed, reconcilers };
  }
  for (const row of rows.values()) {
    const cells = environments.map((name) => row.environments[name] ?? null);
    const desired = new Set(cells.map((cell) => (cell === null ? '∅' : (cell.desired?.version ?? '?'))));
    const deployed = new Set(
      cells.map((cell) => (cell === null ? '∅' : JSON.stringify([...new Set(cell.deployed.map((d) => d.version ?? d.commit))].sort()))),
    );
    row.desiredDiffers = desired.size > 1;
    row.deployedDiffers = deployed.size > 1;
  }
  return { items: [...rows.values()], next: more ? pageKeys[pageKeys.length - 1]! : null };
}

/** A target of the page with its deployed versions: [commit, version, on the desired rollout, status, reconcilers] per row of its counts. */
type ComparedTargetRow = TargetRow & { deployed: [string, string | null, boolean, EffectiveStatus, number][] | null };

/**
 * One statement: the page's keys (one more than asked: whether a next page exists), their targets
 * in the environments by key (index lookups), and each target's reconcilers per commit and status
 * from the counts kept on write (schema/0012), read from target_deployment per target.
 * Picking the page's targets out of every target named (12,000 at fleet L, each with its current
 * assignment) and then asking target_deployment for them took three statements and 200+ ms.
 */
async function readComparedTargets(db: Kysely<HubDatabase>, environments: readonly string[], page: ComparePage): Promise<ComparedTargetRow[]> {
  const conditions = [
    page.workspace === undefined ? undefined : sql`ws.name = ${page.workspace}`,
    page.application === undefined ? undefined : sql`app.name = ${page.application}`,
    page.after === undefined
      ? undefined
      : sql`(ws.name, app.name, w.name, t.name) > (${page.after[0]}, ${page.after[1]}, ${page.after[2]}, ${page.after[3]})`,
  ].filter((condition) => condition !== undefined);
  const rows = await sql<ComparedTargetRow>`
    WITH env AS MATERIALIZED (
      SELECT e.id, e.name, e.environment_rank FROM environment_in_order e WHERE e.name = ANY(${environments}::text[])
    ), page_key AS MATERIALIZED (
      SELECT DISTINCT ws.name AS workspace, app.name AS application, w.name AS workload, t.name AS target, w.id AS workload_id
        FROM deployment_target t
        JOIN env ON env.id = t.environment_id
        JOIN workload w ON w.id = t.workload_id
        JOIN application app ON app.id = w.application_id
        JOIN workspace ws ON ws.id = app.workspace_id
       ${conditions.length === 0 ? sql`` : sql`WHERE ${sql.join(conditions, sql` AND `)}`}
       ORDER BY 1, 2, 3, 4
       LIMIT ${rowLimit(page.limit + 1)}
    )
    SELECT t.id, k.workspace, k.application, k.workload, k.target, env.name AS environment, me.endpoint,
           v.version, v.build, a.gitops_commit_id AS commit, a.assigned_at,
           (SELECT json_agg(json_build_array(d.gitops_commit_id, d.version, d.on_desired, d.status, d.reconcilers))
              FROM target_deployment d WHERE d.deployment_target_id = t.id) AS deployed
      FROM page_key k
      JOIN deployment_target t ON t.workload_id = k.workload_id AND t.name = k.target
      JOIN env ON env.id = t.environment_id
      JOIN manifests_endpoint me ON me.id = t.manifests_endpoint_id
      LEFT JOIN deployment_assignment a ON a.id = t.current_assignment_id
      LEFT JOIN workload_version v ON v.id = a.workload_version_id
     ORDER BY k.workspace, k.application, k.workload, k.target, env.environment_rank`.execute(db);
  return rows.rows;
}
