// "Environment state": per deployment target of one environment, what should run (desired
// version and commit) and what runs (deployed versions with reconciler counts by status) — a page
// of targets at a time (by workspace, application, workload, target), with the environment's
// totals over every page.
import { type Kysely, sql } from 'kysely';
import type { EnvironmentState, TargetState } from '../../contract/answer-types.ts';
import type { HubDatabase } from '../database-schema.ts';
import { summariesCurrent } from '../summary-refresh.ts';
import { countsFromRow, type ReportContext, type StatusCountRow, summedStatusCountColumns } from './report-context.ts';
import { targetDeployments, type TargetRowKey } from './target-deployments.ts';

/** The answer's targets and totals, and where the next page starts (the API encodes it as the cursor). */
export interface EnvironmentStatePage extends Pick<EnvironmentState, 'items' | 'totals'> {
  /** The last target of this page, to ask for the next one; null on the last page. */
  next: TargetRowKey | null;
}

export async function environmentStateReport(
  db: Kysely<HubDatabase>,
  context: ReportContext,
  environment: string,
  page: { readonly limit: number; readonly after?: TargetRowKey | undefined },
): Promise<EnvironmentStatePage> {
  await summariesCurrent(db, context.asOf);
  // The page and the environment's totals side by side: neither needs the other.
  const [{ keys, items }, totals] = await Promise.all([pageOfTargets(db, environment, page), environmentTotals(db, environment)]);
  return {
    items,
    next: keys.length > page.limit ? keyOf(keys[page.limit - 1]!) : null,
    totals: { deploymentTargets: totals.targets, reconcilers: countsFromRow(totals) },
  };
}

type PageKey = { id: number; workspace: string; application: string; workload: string; name: string };

function keyOf(row: PageKey): TargetRowKey {
  return [row.workspace, row.application, row.workload, row.name];
}

/** The page's targets (one key more than asked, to tell whether a next page exists). */
async function pageOfTargets(
  db: Kysely<HubDatabase>,
  environment: string,
  page: { readonly limit: number; readonly after?: TargetRowKey | undefined },
): Promise<{ keys: PageKey[]; items: TargetState[] }> {
  const after =
    page.after === undefined
      ? sql`true`
      : sql`(t.workspace, t.application, t.workload, t.name) > (${page.after[0]}, ${page.after[1]}, ${page.after[2]}, ${page.after[3]})`;
  const keys = await sql<PageKey>`
    SELECT t.id, t.workspace, t.application, t.workload, t.name FROM deployment_target_named t
     WHERE t.environment = ${environment} AND ${after}
     ORDER BY t.workspace, t.application, t.workload, t.name
     LIMIT ${page.limit + 1}`.execute(db);
  const shown = keys.rows.slice(0, page.limit);
  return { keys: keys.rows, items: shown.length === 0 ? [] : await targetDeployments(db, shown.map((row) => row.id)) };
}

/** The environment's targets, and its reconcilers counted by status (each endpoint once). */
async function environmentTotals(db: Kysely<HubDatabase>, environment: string): Promise<{ targets: number } & StatusCountRow> {
  const totals = await sql<{ targets: number } & StatusCountRow>`
    WITH endpoints AS (
      SELECT DISTINCT t.manifests_endpoint_id FROM deployment_target t JOIN environment e ON e.id = t.environment_id WHERE e.name = ${environment}
    )
    SELECT (SELECT count(*)::int FROM deployment_target t JOIN environment e ON e.id = t.environment_id WHERE e.name = ${environment}) AS targets,
           ${summedStatusCountColumns('c')}
      FROM endpoints x JOIN endpoint_status_count c ON c.manifests_endpoint_id = x.manifests_endpoint_id`.execute(db);
  return totals.rows[0]!;
}
