// "Environment discrepancies" for any environments: one row per workload and deployment target
// name, with each environment's desired and deployed versions side by side.
import type { Kysely } from 'kysely';
import type { HubDatabase } from '../database-schema.ts';
import type { ReportContext } from './report-context.ts';
import { type TargetDeployment, targetDeployments } from './target-deployments.ts';

export interface ComparedTarget {
  workspace: string;
  application: string;
  workload: string;
  deploymentTarget: string;
  /** Per requested environment, in the order requested; null where the target does not exist. */
  environments: Record<string, Omit<TargetDeployment, 'workspace' | 'application' | 'workload' | 'deploymentTarget' | 'environment'> | null>;
  /** The desired versions are not the same everywhere (a missing target counts as a difference). */
  desiredDiffers: boolean;
  /** The sets of deployed versions are not the same everywhere. */
  deployedDiffers: boolean;
}

export async function compareReport(
  db: Kysely<HubDatabase>,
  context: ReportContext,
  environments: readonly string[],
): Promise<ComparedTarget[]> {
  const rows = new Map<string, ComparedTarget>();
  for (const target of await targetDeployments(db, context, environments)) {
    const key = JSON.stringify([target.workspace, target.application, target.workload, target.deploymentTarget]);
    let row = rows.get(key);
    if (row === undefined) {
      row = {
        workspace: target.workspace,
        application: target.application,
        workload: target.workload,
        deploymentTarget: target.deploymentTarget,
        environments: Object.fromEntries(environments.map((name) => [name, null])),
        desiredDiffers: false,
        deployedDiffers: false,
      };
      rows.set(key, row);
    }
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
  return [...rows.values()];
}
