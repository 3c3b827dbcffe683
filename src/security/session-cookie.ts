// A signed-in person's session, kept by the browser in a cookie the hub alone can read or make:
// the principal (name, issuer, roles, workspaces) sealed as an encrypted JWT (A256GCM with a key
// derived from --auth-config signIn.sessionKeyFile) with its expiry. No session store: any replica
// with the same key reads it, and a restart signs nobody out. Changing the key signs everyone out.
import { createHash } from 'node:crypto';
import { EncryptJWT, jwtDecrypt } from 'jose';
import { ROLES, type Principal, type Role, type WorkspaceScope } from './roles.ts';

export const SESSION_COOKIE = 'kalypso_session';
/** The sign-in in flight (state, nonce, PKCE verifier), between the redirect out and the callback. */
export const SIGN_IN_COOKIE = 'kalypso_sign_in';

/** Shortest session key accepted: it is the only secret between a cookie and a forged one. */
export const MIN_SESSION_KEY_LENGTH = 32;

/**
 * Longest session cookie value sealed with the ID token in it: browsers keep cookies of up to 4,096
 * bytes (name, value and attributes). A larger ID token (many groups) is left out; sign-out then asks
 * the provider without `id_token_hint`, and the provider asks the person (RP-Initiated Logout 1.0, 2).
 */
export const MAX_SESSION_COOKIE_LENGTH = 3_800;

/** A signed-in person's session as the cookie holds it. */
export interface Session {
  readonly principal: Principal;
  /** The ID token the sign-in got: the hint sign-out gives the provider, when it fitted in the cookie. */
  readonly idToken: string | undefined;
  readonly expiresAt: Date;
}

export class SessionSealer {
  readonly #key: Uint8Array;

  constructor(secret: string) {
    // Derived, so that the file may hold any text of sufficient length (a generated password, base64…).
    this.#key = createHash('sha256').update(`kalypso-session:${secret}`).digest();
  }

  async seal(claims: Record<string, unknown>, expiresAt: Date): Promise<string> {
    return await new EncryptJWT(claims).setProtectedHeader({ alg: 'dir', enc: 'A256GCM' }).setIssuedAt().setExpirationTime(expiresAt).encrypt(this.#key);
  }

  /** The claims of a cookie this hub sealed and that has not expired; undefined otherwise. */
  async open(cookie: string | undefined): Promise<Record<string, unknown> | undefined> {
    if (cookie === undefined || cookie === '') return undefined;
    try {
      const { payload } = await jwtDecrypt(cookie, this.#key, { keyManagementAlgorithms: ['dir'], contentEncryptionAlgorithms: ['A256GCM'] });
      return payload;
    } catch {
      return undefined;
    }
  }

  /** The session's cookie value, with the ID token in it when the cookie stays within MAX_SESSION_COOKIE_LENGTH. */
  async sealPrincipal(principal: Principal, expiresAt: Date, idToken?: string): Promise<string> {
    const claims = { sub: principal.name, iss_: principal.issuer ?? null, roles: [...principal.roles], workspaces: principal.workspaces === 'all' ? '*' : [...principal.workspaces] };
    if (idToken !== undefined) {
      const sealed = await this.seal({ ...claims, idt: idToken }, expiresAt);
      if (sealed.length <= MAX_SESSION_COOKIE_LENGTH) return sealed;
    }
    return await this.seal(claims, expiresAt);
  }

  async openPrincipal(cookie: string | undefined): Promise<Principal | undefined> {
    return (await this.openSession(cookie))?.principal;
  }

  /** The session of a cookie this hub sealed, until it expires (with the ID token's `exp` at the latest). */
  async openSession(cookie: string | undefined): Promise<Session | undefined> {
    const claims = await this.open(cookie);
    if (claims === undefined || typeof claims.sub !== 'string' || !Array.isArray(claims.roles) || typeof claims.exp !== 'number') return undefined;
    const roles = new Set((claims.roles as unknown[]).filter((role): role is Role => (ROLES as readonly unknown[]).includes(role)));
    const workspaces: WorkspaceScope = claims.workspaces === '*' ? 'all' : Array.isArray(claims.workspaces) ? claims.workspaces.map(String) : [];
    // A session only reads (the web UI): it sends no reports.
    const principal: Principal = { via: 'session', name: claims.sub, ...(typeof claims.iss_ === 'string' ? { issuer: claims.iss_ } : {}), roles, workspaces, ingestWorkspaces: [] };
    return { principal, idToken: typeof claims.idt === 'string' ? claims.idt : undefined, expiresAt: new Date(claims.exp * 1_000) };
  }
}
