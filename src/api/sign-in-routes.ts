// /auth: the web UI's sign-in through the organisation's identity provider (src/security/oidc-sign-in.ts).
// The session lives in an HttpOnly, Secure, SameSite=Strict cookie that scripts cannot read and no
// other site can make the browser send; the sign-in in flight in a SameSite=Lax one scoped to the
// callback (the provider's redirect back is a cross-site navigation, which Strict would not carry).
import { type Context, Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { Logger } from '../log/logger.ts';
import type { Authenticator } from '../security/authenticator.ts';
import { completeSignIn, SIGN_IN_WINDOW_MS, type SignIn, startSignIn } from '../security/oidc-sign-in.ts';
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

const redirectUriOf = (c: Context, publicUrl: string | undefined): string => `${publicUrl ?? new URL(c.req.url).origin}${CALLBACK_PATH}`;

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
    const expiresAt = new Date(Date.now() + signIn.config.sessionDuration);
    const session = await signIn.sealer.sealPrincipal(outcome.principal, expiresAt);
    setCookie(c, SESSION_COOKIE, session, { httpOnly: true, secure: true, sameSite: 'Strict', path: '/', expires: expiresAt });
    log.info({ who: outcome.principal.name, issuer: outcome.principal.issuer, roles: [...outcome.principal.roles] }, 'web sign-in');
    return c.redirect(outcome.returnTo, 302);
  });
  app.post('/logout', (c) => {
    deleteCookie(c, SESSION_COOKIE, { path: '/', secure: true });
    return c.body(null, 204);
  });
  // Who the browser is signed in as, for the UI's header: names and roles, never the cookie.
  app.get('/session', async (c) => {
    const principal = await signIn.sealer.openPrincipal(getCookie(c, SESSION_COOKIE));
    if (principal === undefined) return c.json({ signedIn: false, signIn: SIGN_IN_PATH });
    return c.json({ signedIn: true, name: principal.name, roles: [...principal.roles], workspaces: readableWorkspaces(principal) ?? '*' });
  });
  return app;
}
