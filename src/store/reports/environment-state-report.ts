// "Environment state": per deployment target of one environment, what should run (desired
// version and commit) and what runs (deployed versions with reconciler counts by status).
import type { Kysely } from 'kysely';
import type { HubDatabase } from '../database-schema.ts';
import type { ReportContext } from './report-context.ts';
import { type TargetDeployment, targetDeployments } from './target-deployments.ts';

export async function environmentStateReport(
  db: Kysely<HubDatabase>,
  context: ReportContext,
  environment: string,
): Promise<TargetDeployment[]> {
  return targetDeployments(db, context, [environment]);
}
