// People sign in to the web UI through their organisation's identity provider: OpenID Connect's
// authorization code flow with PKCE (RFC 7636, S256). The hub sends the browser to the provider
// with a fresh state, nonce and code challenge — kept meanwhile in a sealed, short-lived cookie, so
// no server-side store is needed — then exchanges the code (with the verifier) for an ID token at
// the token endpoint, verifies it like any token of a trusted issuer (audience: the hub's client
// id) and its nonce, and maps its claims to roles with the issuer's rules. The session lasts as long
// as the ID token at most (its roles were mapped from it: no stale roles past its `exp`); signing out
// ends the provider's session too, through its end_session_endpoint (OpenID Connect RP-Initiated
// Logout 1.0), when its discovery document names one (docs/research/oidc-rp-initiated-logout.md).
import { createHash, randomBytes } from 'node:crypto';
import { decodeJwt } from 'jose';
import type { SignInConfig } from './auth-config-file.ts';
import type { Authenticator } from './authenticator.ts';
import type { Principal } from './roles.ts';
import type { SessionSealer } from './session-cookie.ts';

export interface SignIn {
  readonly config: SignInConfig;
  readonly clientSecret: string | undefined;
  readonly sealer: SessionSealer;
}

/** How long a sign-in may take at the provider before the callback is refused. */
export const SIGN_IN_WINDOW_MS = 10 * 60_000;

const random = (): string => randomBytes(32).toString('base64url');

/** Where a path given to return to after sign-in may lead: this hub only. */
export function safeReturnPath(value: string | undefined): string {
  return value !== undefined && value.startsWith('/') && !value.startsWith('//') && !value.startsWith('/\\') ? value : '/';
}

/** The provider's authorization URL for a new sign-in, and the sealed cookie that remembers it. */
export async function startSignIn(signIn: SignIn, authenticator: Authenticator, redirectUri: string, returnTo: string): Promise<{ url: string; pending: string }> {
  const discovery = await authenticator.issuer(signIn.config.issuer)!.discovery();
  if (discovery.authorization_endpoint === undefined) throw new Error(`${signIn.config.issuer}: discovery names no authorization_endpoint`);
  const state = random();
  const nonce = random();
  const verifier = random();
  const url = new URL(discovery.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: signIn.config.clientId,
    redirect_uri: redirectUri,
    scope: signIn.config.scopes.join(' '),
    state,
    nonce,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();
  const pending = await signIn.sealer.seal({ state, nonce, verifier, returnTo: safeReturnPath(returnTo) }, new Date(Date.now() + SIGN_IN_WINDOW_MS));
  return { url: url.toString(), pending };
}

export type SignInOutcome =
  | {
      readonly kind: 'signed-in';
      readonly principal: Principal;
      readonly returnTo: string;
      /** The verified ID token: the hint sign-out gives the provider. */
      readonly idToken: string;
      /** When the ID token expires (its `exp`): the session ends then at the latest. */
      readonly expiresAt: Date;
    }
  | { readonly kind: 'failed'; readonly message: string };

/** The callback: the code exchanged and its ID token verified, or why the sign-in failed (never a token). */
export async function completeSignIn(
  signIn: SignIn,
  authenticator: Authenticator,
  pendingCookie: string | undefined,
  query: { readonly code?: string | undefined; readonly state?: string | undefined; readonly error?: string | undefined },
  redirectUri: string,
): Promise<SignInOutcome> {
  if (query.error !== undefined) return { kind: 'failed', message: `the identity provider answered ${query.error}` };
  const pending = await signIn.sealer.open(pendingCookie);
  if (pending === undefined) return { kind: 'failed', message: 'no sign-in in progress in this browser (or it took longer than 10 minutes): start again' };
  if (query.state === undefined || query.state !== pending.state) return { kind: 'failed', message: 'state: does not match the sign-in this browser started' };
  if (query.code === undefined) return { kind: 'failed', message: 'code: missing from the callback' };
  const idToken = await exchangeCode(signIn, authenticator, query.code, String(pending.verifier), redirectUri);
  if (typeof idToken !== 'string') return idToken;
  const verified = await authenticator.verifiedPrincipal(idToken, 'session', [signIn.config.clientId]);
  if (verified.kind === 'refused') return { kind: 'failed', message: `ID token: ${verified.message}` };
  // Verified above (exp is required): decoding again only reads what the signature covers.
  const { nonce, exp } = decodeJwt(idToken);
  if (nonce !== pending.nonce) return { kind: 'failed', message: 'ID token: nonce does not match the sign-in this browser started' };
  const expiresAt = new Date((exp ?? 0) * 1_000);
  // Let in within the clock tolerance, but a session must not start out expired.
  if (expiresAt.getTime() <= Date.now()) return { kind: 'failed', message: 'ID token: already expired (exp); are the clocks of the hub and the provider in step?' };
  return { kind: 'signed-in', principal: verified.principal, returnTo: safeReturnPath(String(pending.returnTo)), idToken, expiresAt };
}

/**
 * Where to send the browser to end the provider's session too (RP-Initiated Logout 1.0, section 2):
 * the provider's end_session_endpoint with the ID token as `id_token_hint` (when the session kept
 * it), the client id, and where to come back to (`post_logout_redirect_uri`, which must be registered
 * at the provider); undefined when discovery names no such endpoint (then only the hub's session ends).
 */
export async function endSessionUrl(signIn: SignIn, authenticator: Authenticator, idToken: string | undefined, postLogoutRedirectUri: string): Promise<string | undefined> {
  const discovery = await authenticator.issuer(signIn.config.issuer)!.discovery();
  if (discovery.end_session_endpoint === undefined) return undefined;
  const url = new URL(discovery.end_session_endpoint);
  const params = new URLSearchParams(url.search);
  if (idToken !== undefined) params.set('id_token_hint', idToken);
  params.set('client_id', signIn.config.clientId);
  params.set('post_logout_redirect_uri', postLogoutRedirectUri);
  url.search = params.toString();
  return url.toString();
}

async function exchangeCode(signIn: SignIn, authenticator: Authenticator, code: string, verifier: string, redirectUri: string): Promise<string | SignInOutcome> {
  const discovery = await authenticator.issuer(signIn.config.issuer)!.discovery();
  if (discovery.token_endpoint === undefined) return { kind: 'failed', message: `${signIn.config.issuer}: discovery names no token_endpoint` };
  const body = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier, client_id: signIn.config.clientId });
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  if (signIn.clientSecret !== undefined) {
    // client_secret_basic: both parts form-encoded first (RFC 6749, 2.3.1).
    const user = `${encodeURIComponent(signIn.config.clientId)}:${encodeURIComponent(signIn.clientSecret)}`;
    headers.authorization = `Basic ${Buffer.from(user).toString('base64')}`;
  }
  const response = await fetch(discovery.token_endpoint, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
  const answer = (await response.json().catch(() => ({}))) as { id_token?: unknown; error?: unknown; error_description?: unknown };
  if (!response.ok || typeof answer.id_token !== 'string') {
    const said = [answer.error, answer.error_description].filter((part) => typeof part === 'string').join(': ');
    return { kind: 'failed', message: `token endpoint: HTTP ${response.status} ${said}`.trim() };
  }
  return answer.id_token;
}
