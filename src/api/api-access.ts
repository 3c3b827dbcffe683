// Who may call /api/v1, and who did: each request is admitted (src/security/admission.ts) with the
// permission its route needs — the rollout gate `gate`, every other report `read` — and the
// principal is kept on the context for the routes, which scope their answers to its workspaces.
// Every request leaves an access-log line naming who asked (a token's name or an identity's
// subject, never a token) and counts in /metrics by role; refusals count by reason and are slowed
// per client.
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context, MiddlewareHandler } from 'hono';
import type { Logger } from '../log/logger.ts';
import type { HubMetrics } from '../metrics/hub-metrics.ts';
import { type Admission, admit, admitPrincipal } from '../security/admission.ts';
import type { Authenticator } from '../security/authenticator.ts';
import { ClientAddresses } from '../security/client-address.ts';
import type { FailedAuthThrottle } from '../security/failed-auth-throttle.ts';
import type { Permission, Principal } from '../security/roles.ts';
import { errorBody } from './api-error.ts';

declare module 'hono' {
  interface ContextVariableMap {
    /** Who is asking; set on every /api/v1 request that was let in. */
    principal: Principal;
  }
}

export interface ApiAccessOptions {
  readonly authenticator: Authenticator;
  readonly throttle: FailedAuthThrottle;
  readonly metrics: HubMetrics;
  readonly log: Logger;
  /** A signed-in person's principal from the request's session cookie, if any (web sign-in). */
  readonly session?: (c: Context) => Promise<Principal | undefined>;
  /** Where a browser signs in with the organisation's identity provider (told in 401s), when configured. */
  readonly signInPath?: string;
  /** Requests that need no credential (the OpenAPI document: it holds no data). */
  readonly exempt: (c: Context) => boolean;
  /** Which address is the client's (--trusted-proxies); without it, the connection's. */
  readonly clientAddresses?: ClientAddresses;
}

/** The permission a request to /api/v1 needs. */
export function permissionOf(path: string): Permission {
  return path.startsWith('/api/v1/deployment-state') ? 'gate' : 'read';
}

/** The connection's address (no socket under app.request(): 'local'). */
function socketAddress(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'local';
  }
}

/** The address a request came from, as the throttle keys it and logs show it. */
export function clientOf(c: Context, addresses: ClientAddresses = new ClientAddresses()): string {
  return addresses.clientOf(socketAddress(c), c.req.header('x-forwarded-for'));
}

export function apiAccess(options: ApiAccessOptions): MiddlewareHandler {
  return async (c, next) => {
    if (options.exempt(c)) return await next();
    const started = performance.now();
    const permission = permissionOf(c.req.path);
    const admission = await admissionOf(c, options, permission);
    if (admission.kind !== 'admitted') return await refuse(c, admission, options);
    options.metrics.admittedRequests.inc({ door: 'api', role: admission.role, via: admission.principal.via });
    c.set('principal', admission.principal);
    await next();
    options.log.info(
      { method: c.req.method, path: c.req.path, status: c.res.status, who: admission.principal.name, via: admission.principal.via, role: admission.role, ms: Math.round(performance.now() - started) },
      'api request',
    );
    return undefined;
  };
}

async function admissionOf(c: Context, options: ApiAccessOptions, permission: Permission): Promise<Admission> {
  const header = c.req.header('authorization');
  // A bearer token speaks for itself; without one, a browser's session cookie may.
  if (header === undefined && options.session !== undefined) {
    const principal = await options.session(c);
    if (principal !== undefined) return admitPrincipal(principal, permission);
  }
  return await admit(options.authenticator, 'api', permission, header);
}

async function refuse(c: Context, admission: Exclude<Admission, { kind: 'admitted' }>, options: ApiAccessOptions): Promise<Response> {
  const client = clientOf(c, options.clientAddresses);
  if (admission.kind === 'forbidden') {
    options.metrics.refusedRequests.inc({ door: 'api', reason: 'forbidden' });
    options.log.info({ method: c.req.method, path: c.req.path, status: 403, who: admission.principal.name, via: admission.principal.via }, 'api request forbidden');
    return c.json(errorBody('forbidden', admission.message), 403);
  }
  options.metrics.refusedRequests.inc({ door: 'api', reason: admission.reason });
  const delayMs = await options.throttle.failed(client);
  options.log.info({ method: c.req.method, path: c.req.path, status: 401, client, reason: admission.reason, delayMs }, 'api request unauthenticated');
  c.header('www-authenticate', 'Bearer realm="kalypso-hub"');
  // The web UI offers this sign-in beside the token field.
  if (options.signInPath !== undefined) c.header('kalypso-sign-in', options.signInPath);
  return c.json(errorBody('unauthorized', admission.message), 401);
}
