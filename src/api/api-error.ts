// The API's one error type and the handler that turns every error into `{error: {code, message}}`.
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Logger } from '../log/logger.ts';
import { isDatabaseUnavailable, StoreUnavailableError } from '../store/store-errors.ts';
import type { DatabaseStatus } from '../store/database-status.ts';
import { RETRY_LATER_SECONDS } from '../store/retry-policy.ts';

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: ContentfulStatusCode;
  readonly code: string;

  constructor(status: ContentfulStatusCode, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function errorBody(code: string, message: string): { error: { code: string; message: string } } {
  return { error: { code, message } };
}

export function handleApiError(log: Logger, database: DatabaseStatus) {
  return (error: Error, c: Context): Response => {
    if (error instanceof ApiError) return c.json(errorBody(error.code, error.message), error.status);
    if (error instanceof HTTPException) return c.json(errorBody('http_error', error.message), error.status);
    if (error instanceof StoreUnavailableError || isDatabaseUnavailable(error)) {
      c.header('retry-after', String(RETRY_LATER_SECONDS));
      return c.json(errorBody('database_unavailable', database.unreachableMessage(error)), 503);
    }
    log.error({ err: error, path: c.req.path }, 'request failed');
    return c.json(errorBody('internal', 'internal error'), 500);
  };
}
