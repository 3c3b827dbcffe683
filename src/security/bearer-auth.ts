// Bearer-token authentication as a Hono middleware, made from its options (the shape of Hono's own
// `hono/bearer-auth`). The hub's two HTTP protocols refuse in their own words — the API with its
// JSON error, OTLP/HTTP with a google.rpc.Status in the request's encoding — so the refusal is an
// option; the check is the same constant-time comparison everywhere (bearer-token.ts).
import type { Context, Env, MiddlewareHandler } from 'hono';
import { bearerTokenMatches } from './bearer-token.ts';

export interface BearerAuthOptions<E extends Env> {
  /** The accepted tokens. */
  readonly tokens: readonly string[];
  /** Requests that need no token (the API's OpenAPI document). */
  readonly exempt?: (c: Context<E>) => boolean;
  /** The answer to a request without an accepted token. */
  readonly refuse: (c: Context<E>) => Response;
}

export function bearerAuth<E extends Env>(options: BearerAuthOptions<E>): MiddlewareHandler<E> {
  return async (c, next) => {
    if (options.exempt?.(c) !== true && !bearerTokenMatches(c.req.header('authorization'), options.tokens)) return options.refuse(c);
    await next();
    return undefined;
  };
}
