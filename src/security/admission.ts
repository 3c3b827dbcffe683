// Whether a request may do what it asks: authenticated at its door (or the door is open), then
// holding a role that grants the permission. Three outcomes, each answered differently: 401 (no
// or a bad credential: try another), 403 (a good credential without the role: asking again will
// not help), admitted (with the principal and the role that let it in, for logs and metrics).
import { ANONYMOUS, type Authenticator, type Door, type RefusalReason } from './authenticator.ts';
import { grantingRole, type Permission, type Principal, type Role } from './roles.ts';

export type Admission =
  | { readonly kind: 'admitted'; readonly principal: Principal; readonly role: Role | 'anonymous' }
  | { readonly kind: 'unauthenticated'; readonly reason: RefusalReason; readonly message: string }
  | { readonly kind: 'forbidden'; readonly principal: Principal; readonly message: string };

/** The roles that grant a permission, for the message of a 403. */
const NEEDED: Readonly<Record<Permission, string>> = { read: 'viewer or admin', gate: 'pipeline, viewer or admin', ingest: 'ingest or admin' };

export async function admit(authenticator: Authenticator, door: Door, permission: Permission, header: string | undefined): Promise<Admission> {
  if (!authenticator.requires(door)) return { kind: 'admitted', principal: ANONYMOUS, role: 'anonymous' };
  const authentication = await authenticator.authenticate(header, door);
  if (authentication.kind === 'refused') return { kind: 'unauthenticated', reason: authentication.reason, message: authentication.message };
  return admitPrincipal(authentication.principal, permission);
}

/** A principal already known (a signed-in person's session): only its roles are judged. */
export function admitPrincipal(principal: Principal, permission: Permission): Admission {
  const role = grantingRole(principal, permission);
  if (role === undefined) {
    const has = principal.roles.size === 0 ? 'no role' : `roles ${[...principal.roles].join(', ')}`;
    return { kind: 'forbidden', principal, message: `${principal.name} has ${has}; ${permission} needs ${NEEDED[permission]}` };
  }
  return { kind: 'admitted', principal, role };
}
