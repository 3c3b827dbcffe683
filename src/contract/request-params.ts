// The API's request parameters and the OpenAPI response wiring the routes share, in zod: they
// validate requests and generate the OpenAPI document, so the documentation cannot drift from the
// code. The answers' shapes are in answer-schemas.ts.
import { z } from '@hono/zod-openapi';
import { ErrorSchema } from './answer-schemas.ts';

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

/** `true` or `false` as a query parameter; anything else is a 400 naming it. */
export const BooleanParam = (description: string) =>
  z.enum(['true', 'false'], { error: 'must be true or false' }).optional().openapi({ description });

/** The names that slice the fleet, as optional query parameters (the reports that filter by them). */
export const sliceParams = {
  environment: NameParam('environment', 'query', 'Environment').optional(),
  workspace: NameParam('workspace', 'query', 'Workspace').optional(),
  application: NameParam('application', 'query', 'Application').optional(),
  workload: NameParam('workload', 'query', 'Workload').optional(),
  deploymentTarget: NameParam('deploymentTarget', 'query', 'Deployment target').optional(),
  host: NameParam('host', 'query', 'Host').optional(),
};

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
