import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { hostsReport, hostStateReport } from '../../store/reports/hosts-report.ts';
import { ApiError } from '../api-error.ts';
import { type ApiV1Deps, reportContext } from './api-deps.ts';
import {
  EffectiveStatusSchema,
  errorResponses,
  jsonResponse,
  NameParam,
  notFoundResponse,
  ReportedStatusSchema,
  StatusCountsSchema,
  TextParam,
  Timestamp,
} from './schemas.ts';
import { serialized } from './serialize.ts';

const HostSchema = z
  .object({
    name: z.string(),
    type: z.string(),
    firstSeenAt: Timestamp,
    lastSeenAt: Timestamp,
    stale: z.boolean().openapi({ description: 'No report within the stale-after window: the host looks offline.' }),
    environments: z.array(z.string()).openapi({ description: 'The environments of its reconcilers’ targets, in promotion order.' }),
    reconcilers: StatusCountsSchema,
  })
  .openapi('Host');

const HostReconcilerSchema = z
  .object({
    reconciler: z.string(),
    type: z.string(),
    manifestsEndpoint: z.string(),
    commit: z.string(),
    status: EffectiveStatusSchema,
    reportedStatus: ReportedStatusSchema,
    statusMessage: z.string(),
    deployedAt: Timestamp.openapi({ description: 'When the reconciler entered its current state.' }),
    lastSeenAt: Timestamp,
    deploymentTargets: z.array(
      z.object({
        workspace: z.string(),
        application: z.string(),
        workload: z.string(),
        deploymentTarget: z.string(),
        environment: z.string(),
        deployedVersion: z.string().nullable(),
        desiredVersion: z.string().nullable(),
        desiredCommit: z.string().nullable(),
      }),
    ),
  })
  .openapi('HostReconciler');

const listHosts = createRoute({
  method: 'get',
  path: '/hosts',
  summary: 'Hosts with their reconcilers by status; filter by environment and status',
  request: {
    query: z.object({
      environment: NameParam('environment', 'query', 'Only hosts with a reconciler on a target of this environment').optional(),
      status: EffectiveStatusSchema.optional().openapi({ description: 'Only hosts with at least one reconciler in this status' }),
      limit: z.coerce.number().int().min(1).max(5_000).default(200),
      cursor: TextParam().max(253).optional().openapi({ description: 'nextCursor of the previous page' }),
    }),
  },
  responses: {
    ...jsonResponse(z.object({ items: z.array(HostSchema), nextCursor: z.string().nullable() }), 'Hosts by name'),
    ...errorResponses,
  },
});

const hostState = createRoute({
  method: 'get',
  path: '/hosts/{host}/state',
  summary: 'Cluster state: every reconciler on the host, what it deployed and its status',
  request: { params: z.object({ host: NameParam('host', 'path', 'Host name') }) },
  responses: {
    ...jsonResponse(
      z.object({
        name: z.string(),
        type: z.string(),
        firstSeenAt: Timestamp,
        lastSeenAt: Timestamp,
        stale: z.boolean(),
        reconcilers: z.array(HostReconcilerSchema),
      }),
      'The host',
    ),
    ...errorResponses,
    ...notFoundResponse,
  },
});

export function hostsRoutes(app: OpenAPIHono, deps: ApiV1Deps): void {
  app.openapi(listHosts, async (c) => {
    const query = c.req.valid('query');
    const page = await hostsReport(deps.db, reportContext(deps), {
      environment: query.environment,
      status: query.status,
      after: query.cursor,
      limit: query.limit,
    });
    return c.json(serialized(page), 200);
  });

  app.openapi(hostState, async (c) => {
    const { host } = c.req.valid('param');
    const state = await hostStateReport(deps.db, reportContext(deps), host);
    if (state === undefined) throw new ApiError(404, 'not_found', `host ${JSON.stringify(host)} not found`);
    return c.json(serialized(state), 200);
  });
}
