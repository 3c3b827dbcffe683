// A verified token's claims → the caller's roles and workspaces, by the issuer's rules
// (--auth-config). Each rule whose every condition holds adds its roles and workspaces; a token that
// matches none is who it says, with no role (refused 403, not 401: the token was good).
import type { JWTPayload } from 'jose';
import type { ClaimRule, IssuerConfig } from './auth-config-file.ts';
import type { Principal, Role, WorkspaceScope } from './roles.ts';

const globCache = new Map<string, RegExp>();

/** `repo:contoso/*` → any run of characters where the `*` stands; otherwise the value itself. */
function globOf(pattern: string): RegExp {
  let compiled = globCache.get(pattern);
  if (compiled === undefined) {
    compiled = new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 's');
    globCache.set(pattern, compiled);
  }
  return compiled;
}

/** A claim's values as text: a string, a number or boolean, or each of a list's. */
function claimValues(claims: JWTPayload, name: string): string[] {
  const value = claims[name];
  const values = Array.isArray(value) ? (value as unknown[]) : [value];
  return values.filter((item) => ['string', 'number', 'boolean'].includes(typeof item)).map(String);
}

function holds(rule: ClaimRule, claims: JWTPayload): boolean {
  return Object.entries(rule.when).every(([claim, patterns]) => {
    const values = claimValues(claims, claim);
    return patterns.some((pattern) => values.some((value) => globOf(pattern).test(value)));
  });
}

/** The workspaces a rule names (its list and its claim's values); undefined when it names none. */
function ruleWorkspaces(rule: ClaimRule, claims: JWTPayload): string[] | undefined {
  if (rule.workspaces === undefined && rule.workspacesClaim === undefined) return undefined;
  return [...(rule.workspaces ?? []), ...(rule.workspacesClaim === undefined ? [] : claimValues(claims, rule.workspacesClaim))];
}

const scopeOf = (names: ReadonlySet<string>): WorkspaceScope => (names.has('*') ? 'all' : [...names].sort());

export function principalFromClaims(issuer: IssuerConfig, claims: JWTPayload, via: 'oidc' | 'session'): Principal {
  const roles = new Set<Role>();
  const workspaces = new Set<string>();
  // What an ingest rule names restricts what the identity may send; one that names none, every workspace.
  const ingestWorkspaces = new Set<string>();
  for (const rule of issuer.rules.filter((candidate) => holds(candidate, claims))) {
    for (const role of rule.roles) roles.add(role);
    const named = ruleWorkspaces(rule, claims);
    for (const workspace of named ?? []) workspaces.add(workspace);
    if (rule.roles.includes('ingest')) for (const workspace of named ?? ['*']) ingestWorkspaces.add(workspace);
  }
  return {
    via,
    name: claimValues(claims, issuer.nameClaim)[0] ?? claimValues(claims, 'sub')[0] ?? '(no subject)',
    issuer: issuer.issuer,
    roles,
    workspaces: scopeOf(workspaces),
    ingestWorkspaces: scopeOf(ingestWorkspaces),
  };
}
