// The routes' types, as the web UI's client reads them: for each path of /api/v1, its path
// parameters, its query and its answer — inferred from the route specs, so a page cannot ask for
// a parameter a route does not take, nor read a field its answer does not carry.
import type { z } from '@hono/zod-openapi';
import type { API_ROUTES } from './routes/index.ts';

type Route = (typeof API_ROUTES)[keyof typeof API_ROUTES];

/** A route's path as the contract writes it, e.g. `/hosts/{host}/state`. */
export type ApiPath = Route['path'];

type RouteAt<P extends ApiPath> = Extract<Route, { path: P }>;
type RequestPart<R, K extends 'params' | 'query'> = R extends { request: { [key in K]: infer S extends z.ZodType } } ? z.input<S> : Record<never, never>;

export type PathParams<P extends ApiPath> = RequestPart<RouteAt<P>, 'params'>;
export type QueryParams<P extends ApiPath> = RequestPart<RouteAt<P>, 'query'>;
export type Answer<P extends ApiPath> = z.output<RouteAt<P>['responses'][200]['content']['application/json']['schema']>;
