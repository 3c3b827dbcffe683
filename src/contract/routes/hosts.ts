// The hosts routes: the fleet's hosts, a page at a time, and one host's reconcilers.
import { createRoute, z } from '@hono/zod-openapi';
import { EffectiveStatusSchema, HostStateAnswer, HostsPage } from '../answer-schemas.ts';
import { TextParam, NameParam, PageLimitParam, BooleanParam, errorResponses, notFoundResponse, jsonResponse } from '../request-params.ts';

export const listHosts = createRoute({
  method: 'get',
  path: '/hosts',
  summary: 'Hosts in natural order of their names, with their reconcilers by status, drift, and totals over every page',
  description:
    'Hosts are ordered by name as people number them (aks-dev-2 before aks-dev-10 before aks-dev-100; case aside) and paged by ' +
    '`cursor`. `totals` counts the hosts matching the filters over every page (so a page of 200 can say "1,600 hosts"), `fleet` ' +
    'counts every host whatever the filters ("40 of 1,600 hosts"); without filters the two are equal. `offset` is the number of ' +
    'matching hosts before this page. Filters combine (all must hold).',
  request: {
    query: z.object({
      environment: NameParam('environment', 'query', 'Only hosts with a reconciler on a target of this environment').optional(),
      status: EffectiveStatusSchema.optional().openapi({ description: 'Only hosts with at least one reconciler in this status' }),
      offline: BooleanParam('Only hosts silent longer than the stale-after setting (`true`), or only the others (`false`)'),
      drifting: BooleanParam('Only hosts with a reconciler off its target’s desired rollout (`true`), or only those without (`false`)'),
      q: TextParam().min(1).max(253).optional().openapi({ description: 'Only hosts whose name contains this text, in any case' }),
      limit: PageLimitParam(),
      cursor: TextParam().max(253).optional().openapi({ description: 'nextCursor of the previous page (opaque)' }),
    }),
  },
  responses: {
    ...jsonResponse(HostsPage, 'A page of hosts in natural order of their names'),
    ...errorResponses,
  },
});

export const hostState = createRoute({
  method: 'get',
  path: '/hosts/{host}/state',
  summary: 'Cluster state: every reconciler on the host, what it deployed and its status',
  request: { params: z.object({ host: NameParam('host', 'path', 'Host name') }) },
  responses: {
    ...jsonResponse(HostStateAnswer, 'The host'),
    ...errorResponses,
    ...notFoundResponse,
  },
});
