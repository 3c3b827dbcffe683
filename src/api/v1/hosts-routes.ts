import type { OpenAPIHono } from '@hono/zod-openapi';
import { hostsReport, hostStateReport } from '../../store/reports/hosts-report.ts';
import { ApiError } from '../api-error.ts';
import { listHosts, hostState } from '../../contract/routes/hosts.ts';
import { type ApiV1Deps, reportContext } from './api-deps.ts';

export function hostsRoutes(app: OpenAPIHono, deps: ApiV1Deps): void {
  app.openapi(listHosts, async (c) => {
    const query = c.req.valid('query');
    const page = await hostsReport(deps.db, reportContext(deps), {
      environment: query.environment,
      status: query.status,
      offline: query.offline === undefined ? undefined : query.offline === 'true',
      drifting: query.drifting === undefined ? undefined : query.drifting === 'true',
      search: query.q,
      after: query.cursor,
      limit: query.limit,
    });
    return c.json(page, 200);
  });

  app.openapi(hostState, async (c) => {
    const { host } = c.req.valid('param');
    const state = await hostStateReport(deps.db, reportContext(deps), host);
    if (state === undefined) throw new ApiError(404, 'not_found', `host ${JSON.stringify(host)} not found`);
    return c.json(state, 200);
  });
}
