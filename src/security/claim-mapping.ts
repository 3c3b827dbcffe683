// A verified token's claims → the caller's roles and workspaces, by the issuer's rules
// (--auth-config). Each rule whose every condition holds adds its roles and workspaces; a token that
// matches none is who it says, with no role (refused 403, not 401: the token was good).
import type { JWTPayload } from 'jose';
import type { ClaimRule, IssuerConfig } from './auth-config-file.ts';
import type { Principal, Role } from './roles.ts';

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

export function principalFromClaims(issuer: IssuerConfig, claims: JWTPayload, via: 'oidc' | 'session'): Principal {
  const roles = new Set<Role>();
  const workspaces = new Set<string>();
  for (const rule of issuer.rules.filter((candidate) => holds(candidate, claims))) {
    for (const role of rule.roles) roles.add(role);
    for (const workspace of rule.workspaces ?? []) workspaces.add(workspace);
    if (rule.workspacesClaim !== undefined) for (const workspace of claimValues(claims, rule.workspacesClaim)) workspaces.add(workspace);
  }
  return {
    via,
    name: claimValues(claims, issuer.nameClaim)[0] ?? claimValues(claims, 'sub')[0] ?? '(no subject)',
    issuer: issuer.issuer,
    roles,
    workspaces: workspaces.has('*') ? 'all' : [...workspaces].sort(),
  };
}
