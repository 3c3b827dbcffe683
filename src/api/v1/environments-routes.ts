import type { OpenAPIHono } from '@hono/zod-openapi';
import { environmentExists, environmentsReport } from '../../store/reports/environments-report.ts';
import { environmentStateReport } from '../../store/reports/environment-state-report.ts';
import { decodeTargetCursor, encodeTargetCursor } from '../../store/reports/target-deployments.ts';
import { ApiError } from '../api-error.ts';
import { listEnvironments, environmentState } from '../../contract/routes/environments.ts';
import { type ApiV1Deps, reportContext } from './api-deps.ts';
import { cursorParam } from './schemas.ts';
import { WorkspaceScope } from './workspace-scope.ts';

export function environmentsRoutes(app: OpenAPIHono, deps: ApiV1Deps): void {
  app.openapi(listEnvironments, async (c) => {
    const scope = WorkspaceScope.of(c, deps);
    const items = await environmentsReport(deps.db, reportContext(deps), scope === undefined ? undefined : [...scope.workspaces]);
    return c.json({ items }, 200);
  });

  app.openapi(environmentState, async (c) => {
    const { environment } = c.req.valid('param');
    const { limit, cursor } = c.req.valid('query');
    const after = cursorParam(cursor, decodeTargetCursor);
    if (!(await environmentExists(deps.db, environment))) {
      throw new ApiError(404, 'not_found', `environment ${JSON.stringify(environment)} not found`);
    }
    const scope = WorkspaceScope.of(c, deps);
    await scope?.requireEnvironment(environment);
    const page = await environmentStateReport(deps.db, reportContext(deps), environment, { limit, after });
    return c.json(
      { environment, items: scope === undefined ? page.items : scope.rows(page.items), nextCursor: page.next === null ? null : encodeTargetCursor(page.next), totals: page.totals },
      200,
    );
  });
}
