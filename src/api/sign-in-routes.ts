// /auth: the web UI's sign-in through the organisation's identity provider (src/security/oidc-sign-in.ts).
// The session lives in an HttpOnly, Secure, SameSite=Strict cookie that scripts cannot read and no
// other site can make the browser send; the sign-in in flight in a SameSite=Lax one scoped to the
// callback (the provider's redirect back is a cross-site navigation, which Strict would not carry).
import { type Context, Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { Logger } from '../log/logger.ts';
import type { Authenticator } from '../security/authenticator.ts';
import { completeSignIn, endSessionUrl, SIGN_IN_WINDOW_MS, type SignIn, startSignIn } from '../security/oidc-sign-in.ts';
import { SESSION_COOKIE, SIGN_IN_COOKIE } from '../security/session-cookie.ts';
import { readableWorkspaces } from '../security/roles.ts';

export const SIGN_IN_PATH = '/auth/login';
const CALLBACK_PATH = '/auth/callback';

export interface SignInRoutesOptions {
  readonly signIn: SignIn;
  readonly authenticator: Authenticator;
  /** --public-url: where browsers reach the hub (else the request's own origin). */
  readonly publicUrl: string | undefined;
  readonly log: Logger;
}

const originOf = (c: Context, publicUrl: string | undefined): string => publicUrl ?? new URL(c.req.url).origin;
const redirectUriOf = (c: Context, publicUrl: string | undefined): string => `${originOf(c, publicUrl)}${CALLBACK_PATH}`;

export function signInRoutes(options: SignInRoutesOptions): Hono {
  const { signIn, authenticator, log } = options;
  const app = new Hono();
  app.get('/login', async (c) => {
    const { url, pending } = await startSignIn(signIn, authenticator, redirectUriOf(c, options.publicUrl), c.req.query('return') ?? '/');
    setCookie(c, SIGN_IN_COOKIE, pending, { httpOnly: true, secure: true, sameSite: 'Lax', path: CALLBACK_PATH, maxAge: SIGN_IN_WINDOW_MS / 1_000 });
    return c.redirect(url, 302);
  });
  app.get('/callback', async (c) => {
    const outcome = await completeSignIn(signIn, authenticator, getCookie(c, SIGN_IN_COOKIE), c.req.query(), redirectUriOf(c, options.publicUrl));
    deleteCookie(c, SIGN_IN_COOKIE, { path: CALLBACK_PATH, secure: true });
    if (outcome.kind === 'failed') {
      log.info({ reason: outcome.message }, 'web sign-in failed');
      return c.text(`Sign-in failed: ${outcome.message}`, 400);
    }
    // The roles were mapped from the ID token's claims: the session ends when it expires, if sooner.
    const expiresAt = new Date(Math.min(Date.now() + signIn.config.sessionDuration, outcome.expiresAt.getTime()));
    const session = await signIn.sealer.sealPrincipal(outcome.principal, expiresAt, outcome.idToken);
    setCookie(c, SESSION_COOKIE, session, { httpOnly: true, secure: true, sameSite: 'Strict', path: '/', expires: expiresAt });
    log.info({ who: outcome.principal.name, issuer: outcome.principal.issuer, roles: [...outcome.principal.roles], expiresAt: expiresAt.toISOString() }, 'web sign-in');
    return c.redirect(outcome.returnTo, 302);
  });
  // Ends the hub's session, and answers where the browser goes to end the provider's too (its
  // end_session_endpoint, to come back to the hub's front page), or null when it offers none. A JSON
  // answer, not a redirect: the page navigates itself (its fetch may not follow to another origin).
  app.post('/logout', async (c) => {
    const session = await signIn.sealer.openSession(getCookie(c, SESSION_COOKIE));
    deleteCookie(c, SESSION_COOKIE, { path: '/', secure: true });
    const endSession = await endSessionUrl(signIn, authenticator, session?.idToken, `${originOf(c, options.publicUrl)}/`).catch((error: unknown) => {
      // The hub's session is over whatever the provider says; its own may outlive it.
      log.warn({ err: (error as Error).message }, 'sign-out: the identity provider’s discovery failed; its session is not ended');
      return undefined;
    });
    if (session !== undefined) log.info({ who: session.principal.name, endSession: endSession !== undefined }, 'web sign-out');
    return c.json({ endSession: endSession ?? null });
  });
  // Who the browser is signed in as, for the UI's header: names, roles and when the session ends, never the cookie.
  app.get('/session', async (c) => {
    const session = await signIn.sealer.openSession(getCookie(c, SESSION_COOKIE));
    if (session === undefined) return c.json({ signedIn: false, signIn: SIGN_IN_PATH });
    const { principal } = session;
    return c.json({
      signedIn: true,
      name: principal.name,
      roles: [...principal.roles],
      workspaces: readableWorkspaces(principal) ?? '*',
      expiresAt: session.expiresAt.toISOString(),
    });
  });
  return app;
}
