// The hub's HTTP application on port 8080: health, metrics, the /api/v1 query API and its docs,
// and the web UI.
import { Hono } from 'hono';
import type { Logger } from '../log/logger.ts';
import type { HubMetrics } from '../metrics/hub-metrics.ts';
import { Authenticator } from '../security/authenticator.ts';
import type { ClientAddresses } from '../security/client-address.ts';
import { FailedAuthThrottle } from '../security/failed-auth-throttle.ts';
import type { SignIn } from '../security/oidc-sign-in.ts';
import { SESSION_COOKIE } from '../security/session-cookie.ts';
import { getCookie } from 'hono/cookie';
import { SIGN_IN_PATH, signInRoutes } from './sign-in-routes.ts';
import { apiAccess } from './api-access.ts';
import { securityHeaders } from '../security/security-headers.ts';
import { RETRY_LATER_SECONDS } from '../store/retry-policy.ts';
import { errorBody, handleApiError } from './api-error.ts';
import { apiDocsRoutes } from './api-docs.ts';
import { type HealthDeps, healthRoutes } from './health-routes.ts';
import type { ApiV1Deps } from './v1/api-deps.ts';
import { createApiV1 } from './v1/api-v1.ts';
import { uiNotFound, uiRoutes } from '../ui/ui-routes.ts';

export type ApiDeps = HealthDeps &
  ApiV1Deps & {
    readonly log: Logger;
    readonly metrics: HubMetrics;
    /** When set, /api/v1 answers only requests bearing one of these tokens (without `authenticator`). */
    readonly apiTokens: readonly string[] | undefined;
    /** Who may call: the shared tokens, service tokens and trusted issuers (else made from `apiTokens`). */
    readonly authenticator?: Authenticator;
    /** Failed authentications slowed per client (else one of this app's own). */
    readonly throttle?: FailedAuthThrottle;
    /** Which address is a request's client (--trusted-proxies); else the connection's. */
    readonly clientAddresses?: ClientAddresses;
    /** The web UI's sign-in through the organisation's identity provider (--auth-config signIn). */
    readonly signIn?: SignIn | undefined;
    /** --public-url: where browsers reach the hub (the sign-in's redirect URI). */
    readonly publicUrl?: string | undefined;
    /** Whether the hub serves TLS itself (then browsers are told to keep to it: HSTS). */
    readonly tls: boolean;
  };

// Describes the API, holds no data: the browsable reference must load it without a token.
const OPEN_API_DOCUMENT = '/api/v1/openapi.json';

export function createApiApp(deps: ApiDeps): Hono {
  // Not strict: `/api/docs/` and `/api/docs` are the same page.
  const app = new Hono({ strict: false });
  app.use(securityHeaders({ tls: deps.tls, docsPath: '/api/docs', dataPaths: ['/api/v1', '/healthz', '/readyz', '/metrics'] }));
  app.use(async (c, next) => {
    const stop = deps.metrics.httpRequestSeconds.startTimer({ method: c.req.method });
    await next();
    // The route pattern, not the path: label values stay few.
    stop({ route: c.req.routePath, status: String(c.res.status) });
  });
  app.route('/', healthRoutes(deps));
  const authenticator = deps.authenticator ?? new Authenticator({ apiTokens: deps.apiTokens });
  const signIn = deps.signIn;
  app.use(
    '/api/v1/*',
    apiAccess({
      authenticator,
      throttle: deps.throttle ?? new FailedAuthThrottle(),
      metrics: deps.metrics,
      log: deps.log,
      ...(signIn === undefined ? {} : { session: (c) => signIn.sealer.openPrincipal(getCookie(c, SESSION_COOKIE)), signInPath: SIGN_IN_PATH }),
      exempt: (c) => c.req.path === OPEN_API_DOCUMENT,
      ...(deps.clientAddresses === undefined ? {} : { clientAddresses: deps.clientAddresses }),
    }),
  );
  // Until the schema is migrated the reports have no tables to read: say why, as a retryable 503.
  app.use('/api/v1/*', async (c, next) => {
    if (!deps.database.migrated) {
      c.header('retry-after', String(RETRY_LATER_SECONDS));
      return c.json(errorBody('not_ready', deps.database.notReadyMessage()), 503);
    }
    await next();
    return undefined;
  });
  app.route('/api/v1', createApiV1(deps));
  app.route('/api/docs', apiDocsRoutes());
  if (signIn !== undefined) app.route('/auth', signInRoutes({ signIn, authenticator, publicUrl: deps.publicUrl, log: deps.log }));
  // Without a sign-in nobody is signed in: the UI asks on every page, and is told so.
  else app.get('/auth/session', (c) => c.json({ signedIn: false }));
  app.route('/', uiRoutes());
  app.notFound((c) => uiNotFound(c) ?? c.json(errorBody('not_found', `no route for ${c.req.method} ${c.req.path}`), 404));
  app.onError(handleApiError(deps.log, deps.database));
  return app;
}
