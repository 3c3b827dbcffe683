// Answers cut to the workspaces a caller may read (roles.ts readableWorkspaces). Rows that name a
// workspace are kept when it is one of the caller's; hosts, manifests endpoints and environments
// when they serve at least one of its deployment targets (store/reports/workspace-visibility.ts).
// What is not visible is answered exactly as what does not exist (404 with the same message), so
// that a caller cannot learn another workspace's names by asking for them. A caller scoped to one
// workspace gets that workspace as the reports' own filter, so its pages and totals are exact;
// with several, rows are cut after the report (a page may then hold fewer rows than `limit`). The
// rollout gates are not cut afterwards: they are paged in the database, so the caller's workspaces
// restrict their queries before counting and paging (GatePage.workspaces).
import type { Context } from 'hono';
import type { DeliveryReport, Host, HostState } from '../../contract/answer-types.ts';
import { readableWorkspaces } from '../../security/roles.ts';
import { type VisibleNames, visibleNames } from '../../store/reports/workspace-visibility.ts';
import { ApiError } from '../api-error.ts';
import type { ApiV1Deps } from './api-deps.ts';

export class WorkspaceScope {
  readonly workspaces: ReadonlySet<string>;
  readonly #deps: ApiV1Deps;
  #names: Promise<VisibleNames> | undefined;

  private constructor(workspaces: readonly string[], deps: ApiV1Deps) {
    this.workspaces = new Set(workspaces);
    this.#deps = deps;
  }

  /** The request's scope; undefined when its caller reads every workspace. */
  static of(c: Context, deps: ApiV1Deps): WorkspaceScope | undefined {
    const principal = c.get('principal') as Parameters<typeof readableWorkspaces>[0] | undefined;
    if (principal === undefined) return undefined;
    const workspaces = readableWorkspaces(principal);
    return workspaces === undefined ? undefined : new WorkspaceScope(workspaces, deps);
  }

  /** The workspace a report should be filtered by: the one asked for (if readable), else the caller's only one. */
  workspaceFilter(asked: string | undefined): string | undefined {
    if (asked !== undefined) {
      if (!this.workspaces.has(asked)) throw new ApiError(403, 'forbidden', `workspace: ${JSON.stringify(asked)} is not among the workspaces you may read`);
      return asked;
    }
    return this.workspaces.size === 1 ? [...this.workspaces][0] : undefined;
  }

  names(): Promise<VisibleNames> {
    this.#names ??= visibleNames(this.#deps.db, [...this.workspaces]);
    return this.#names;
  }

  /** 404 for an environment none of the caller's targets are in, as for one that does not exist. */
  async requireEnvironment(environment: string): Promise<void> {
    if (!(await this.names()).environments.has(environment)) throw new ApiError(404, 'not_found', `environment ${JSON.stringify(environment)} not found`);
  }

  async requireEndpoint(endpoint: string): Promise<void> {
    if (!(await this.names()).endpoints.has(endpoint)) throw new ApiError(404, 'not_found', `manifests endpoint ${JSON.stringify(endpoint)} not found`);
  }

  /** Rows that name their workspace (a row with none — a reconciler no target pulls — is nobody's). */
  rows<T extends { readonly workspace: string | null }>(items: readonly T[]): T[] {
    return items.filter((item) => item.workspace !== null && this.workspaces.has(item.workspace));
  }

  async hosts(items: readonly Host[]): Promise<Host[]> {
    const { hosts } = await this.names();
    return items.filter((item) => hosts.has(item.name));
  }

  /** The host with only the caller's deployment targets, and only reconcilers that pull one; undefined when none does. */
  hostState(state: HostState): HostState | undefined {
    const reconcilers = state.reconcilers
      .map((reconciler) => ({ ...reconciler, deploymentTargets: this.rows(reconciler.deploymentTargets) }))
      .filter((reconciler) => reconciler.deploymentTargets.length > 0);
    return reconcilers.length === 0 ? undefined : { ...state, reconcilers };
  }

  async delivery(report: DeliveryReport): Promise<DeliveryReport> {
    const { hosts } = await this.names();
    return { ...report, recentRollouts: this.rows(report.recentRollouts), laggingHosts: report.laggingHosts.filter((host) => hosts.has(host.host)) };
  }
}
