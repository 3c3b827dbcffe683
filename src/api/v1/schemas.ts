// The API's request parameters and the OpenAPI response wiring the routes share, in zod: they
// validate requests and generate the OpenAPI document, so the documentation cannot drift from the
// code. The answers' shapes are in answers.ts.
import { z } from '@hono/zod-openapi';
import { formatDuration, parseDuration } from '../../config/units.ts';
import { ApiError } from '../api-error.ts';
import { ErrorSchema } from '../../answers/answer-schemas.ts';

/**
 * A text parameter. PostgreSQL text cannot hold NUL, and a lone surrogate (percent-encoded
 * invalid UTF-8) cannot match anything stored: both are a bad parameter, not a server error.
 */
export const TextParam = () =>
  z.string().refine((value) => !value.includes('\u0000') && value.isWellFormed(), { message: 'must be text without NUL characters or invalid UTF-8' });

export const NameParam = (name: string, where: 'path' | 'query', description: string) =>
  TextParam()
    .min(1)
    .max(253)
    .openapi({ param: { name, in: where }, description });

/** An optional moment as a query parameter: ISO 8601 with an offset. */
export const TimeParam = (name: string, description: string, example: string) =>
  z.iso.datetime({ offset: true }).optional().openapi({ param: { name, in: 'query' }, description, example });

/** A page's size (hosts, drift, environment state): 200 unless asked, at most 5,000. */
export const PageLimitParam = () => z.coerce.number().int().min(1).max(5_000).default(200);

/** The `cursor` parameter decoded by the report's own decoder; one this hub did not issue is refused. */
export function cursorParam<T>(text: string | undefined, decode: (text: string) => T | undefined): T | undefined {
  if (text === undefined) return undefined;
  const key = decode(text);
  if (key === undefined) throw new ApiError(400, 'invalid_parameter', 'cursor: not a cursor from a previous page');
  return key;
}

/** The names that slice the fleet, as optional query parameters (the reports that filter by them). */
export const sliceParams = {
  environment: NameParam('environment', 'query', 'Environment').optional(),
  workspace: NameParam('workspace', 'query', 'Workspace').optional(),
  application: NameParam('application', 'query', 'Application').optional(),
  workload: NameParam('workload', 'query', 'Workload').optional(),
  deploymentTarget: NameParam('deploymentTarget', 'query', 'Deployment target').optional(),
  host: NameParam('host', 'query', 'Host').optional(),
};

/** A duration parameter (30s, 5m, 1h…) in milliseconds; a 400 naming it when it is not one or too long. */
export function durationParamMs(name: string, text: string, maxMs: number, examples: string): number {
  const ms = parseDuration(text);
  if (ms === undefined) throw new ApiError(400, 'invalid_parameter', `${name}: must be a duration such as ${examples}`);
  if (ms > maxMs) throw new ApiError(400, 'invalid_parameter', `${name}: must be at most ${formatDuration(maxMs)}`);
  return ms;
}


export const errorResponses = {
  400: { description: 'A parameter is invalid; the message names it.', content: { 'application/json': { schema: ErrorSchema } } },
  503: { description: 'The database is unreachable; retry later.', content: { 'application/json': { schema: ErrorSchema } } },
} as const;

export const notFoundResponse = {
  404: { description: 'No such name.', content: { 'application/json': { schema: ErrorSchema } } },
} as const;

export function jsonResponse<T extends z.ZodType>(
  schema: T,
  description: string,
): { 200: { description: string; content: { 'application/json': { schema: T } } } } {
  return { 200: { description, content: { 'application/json': { schema } } } };
}
