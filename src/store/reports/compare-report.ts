// "Environment discrepancies" for any environments: one row per workload and deployment target
// name, with each environment's desired and deployed versions side by side.
import { type Kysely, sql } from 'kysely';
import type { CompareRow } from '../../contract/answer-types.ts';
import type { HubDatabase } from '../database-schema.ts';
import { summariesCurrent } from '../summary-refresh.ts';
import type { ReportContext } from './report-context.ts';
import { targetDeployments, type TargetRowKey } from './target-deployments.ts';

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
  const conditions = [
    sql`t.environment = ANY(${environments}::text[])`,
    page.workspace === undefined ? undefined : sql`t.workspace = ${page.workspace}`,
    page.application === undefined ? undefined : sql`t.application = ${page.application}`,
    page.after === undefined
      ? undefined
      : sql`(t.workspace, t.application, t.workload, t.name) > (${page.after[0]}, ${page.after[1]}, ${page.after[2]}, ${page.after[3]})`,
  ].filter((condition) => condition !== undefined);
  const keys = await sql<{ workspace: string; application: string; workload: string; name: string }>`
    SELECT DISTINCT t.workspace, t.application, t.workload, t.name
      FROM deployment_target_named t
     WHERE ${sql.join(conditions, sql` AND `)}
     ORDER BY 1, 2, 3, 4
     LIMIT ${page.limit + 1}`.execute(db);
  const pageKeys = keys.rows.slice(0, page.limit).map((row): TargetRowKey => [row.workspace, row.application, row.workload, row.name]);
  const rows = new Map<string, CompareRow>();
  for (const key of pageKeys) {
    rows.set(JSON.stringify(key), {
      workspace: key[0],
      application: key[1],
      workload: key[2],
      deploymentTarget: key[3],
      environments: Object.fromEntries(environments.map((name) => [name, null])),
      desiredDiffers: false,
      deployedDiffers: false,
    });
  }
  for (const target of pageKeys.length === 0 ? [] : await targetDeployments(db, environments, pageKeys)) {
    const row = rows.get(JSON.stringify([target.workspace, target.application, target.workload, target.deploymentTarget]));
    if (row === undefined) continue;
    const { manifestsEndpoint, desired, deployed, reconcilers } = target;
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
  return { items: [...rows.values()], next: keys.rows.length > page.limit ? (pageKeys[pageKeys.length - 1] ?? null) : null };
}
