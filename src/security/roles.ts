// Who may do what. Four roles — viewer (the reports), pipeline (the rollout gate), ingest (OTLP),
// admin (all of it) — and the workspaces whose data a caller may read. A caller is a principal: a
// service token, an OIDC identity, a signed-in person, or nobody (where a door is left open).

export const ROLES = ['viewer', 'pipeline', 'ingest', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** What a request asks to do. */
export type Permission = 'read' | 'gate' | 'ingest';

/** The roles that grant each permission, in the order the granting one is named (logs, metrics). */
const GRANTED_BY: Readonly<Record<Permission, readonly Role[]>> = {
  read: ['viewer', 'admin'],
  // The gate is a report too: whoever may read may ask it.
  gate: ['pipeline', 'viewer', 'admin'],
  ingest: ['ingest', 'admin'],
};

/** Every workspace, or only these (by name). */
export type WorkspaceScope = 'all' | readonly string[];

export interface Principal {
  /** How the caller proved who it is. */
  readonly via: 'anonymous' | 'token' | 'oidc' | 'session';
  /** Who asked, as logs name it: a service token's name, an identity's subject. Never a secret. */
  readonly name: string;
  /** The issuer that vouched for an OIDC identity or a session. */
  readonly issuer?: string;
  readonly roles: ReadonlySet<Role>;
  /** The workspaces it reads (viewer, pipeline). */
  readonly workspaces: WorkspaceScope;
  /**
   * The workspaces whose reports it may send (ingest): apart from `workspaces`, because an identity's
   * ingest rule may name none (every workspace) while its viewer rule names some.
   */
  readonly ingestWorkspaces: WorkspaceScope;
}

/** The role that lets the principal do it, or undefined. */
export function grantingRole(principal: Principal, permission: Permission): Role | undefined {
  return GRANTED_BY[permission].find((role) => principal.roles.has(role));
}

/** The workspaces whose data the principal may read; undefined for every one (an admin reads all). */
export function readableWorkspaces(principal: Principal): readonly string[] | undefined {
  return principal.workspaces === 'all' || principal.roles.has('admin') ? undefined : principal.workspaces;
}

/** The workspaces whose reports the principal may send; undefined for every one (an admin sends all). */
export function ingestibleWorkspaces(principal: Principal): readonly string[] | undefined {
  return principal.ingestWorkspaces === 'all' || principal.roles.has('admin') ? undefined : principal.ingestWorkspaces;
}

/** Roles that read data, and so need their workspaces named. */
export function readsData(roles: Iterable<Role>): boolean {
  return [...roles].some((role) => role === 'viewer' || role === 'pipeline');
}

/** Workspaces as files spell them: a list of names, or ['*'] for every one. */
export function workspaceScopeOf(names: readonly string[]): WorkspaceScope {
  return names.includes('*') ? 'all' : [...new Set(names)].sort();
}
