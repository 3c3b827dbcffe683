// Request parameters as the handlers read them, beyond what zod checks: cursors decoded by the
// report that issued them, and durations bounded by the hub's settings. (The parameters' schemas
// are the contract's: src/contract/request-params.ts.)
import { formatDuration, parseDuration } from '../../config/units.ts';
import { ApiError } from '../api-error.ts';

/** The `cursor` parameter decoded by the report's own decoder; one this hub did not issue is refused. */
export function cursorParam<T>(text: string | undefined, decode: (text: string) => T | undefined, name = 'cursor'): T | undefined {
  if (text === undefined) return undefined;
  const key = decode(text);
  if (key === undefined) throw new ApiError(400, 'invalid_parameter', `${name}: not a cursor from a previous page`);
  return key;
}

/** A duration parameter (30s, 5m, 1h…) in milliseconds; a 400 naming it when it is not one or too long. */
export function durationParamMs(name: string, text: string, maxMs: number, examples: string): number {
  const ms = parseDuration(text);
  if (ms === undefined) throw new ApiError(400, 'invalid_parameter', `${name}: must be a duration such as ${examples}`);
  if (ms > maxMs) throw new ApiError(400, 'invalid_parameter', `${name}: must be at most ${formatDuration(maxMs)}`);
  return ms;
}
