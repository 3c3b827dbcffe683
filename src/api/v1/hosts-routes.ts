import type { OpenAPIHono } from '@hono/zod-openapi';
import { hostsReport, hostStateReport } from '../../store/reports/hosts-report.ts';
import { ApiError } from '../api-error.ts';
import { listHosts, hostState } from '../../contract/routes/hosts.ts';
import { type ApiV1Deps, reportContext } from './api-deps.ts';
import { WorkspaceScope } from './workspace-scope.ts';

export function hostsRoutes(app: OpenAPIHono, deps: ApiV1Deps): void {
  app.openapi(listHosts, async (c) => {
    const query = c.req.valid('query');
    const scope = WorkspaceScope.of(c, deps);
    const page = await hostsReport(deps.db, reportContext(deps), {
      environment: query.environment,
      status: query.status,
      offline: query.offline === undefined ? undefined : query.offline === 'true',
      drifting: query.drifting === undefined ? undefined : query.drifting === 'true',
      search: query.q,
      after: query.cursor,
      limit: query.limit,
    });
    return c.json(scope === undefined ? page : { ...page, items: await scope.hosts(page.items) }, 200);
  });

  app.openapi(hostState, async (c) => {
    const { host } = c.req.valid('param');
    const scope = WorkspaceScope.of(c, deps);
    const found = await hostStateReport(deps.db, reportContext(deps), host);
    const state = found === undefined || scope === undefined ? found : scope.hostState(found);
    if (state === undefined) throw new ApiError(404, 'not_found', `host ${JSON.stringify(host)} not found`);
    return c.json(state, 200);
  });
}
