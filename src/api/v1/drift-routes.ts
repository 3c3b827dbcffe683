import type { OpenAPIHono } from '@hono/zod-openapi';
import { decodeDriftCursor, driftReport } from '../../store/reports/drift-report.ts';
import { environmentExists } from '../../store/reports/environments-report.ts';
import { ApiError } from '../api-error.ts';
import { drift } from '../../contract/routes/drift.ts';
import { type ApiV1Deps, reportContext } from './api-deps.ts';
import { cursorParam } from './schemas.ts';
import { WorkspaceScope } from './workspace-scope.ts';

export function driftRoutes(app: OpenAPIHono, deps: ApiV1Deps): void {
  app.openapi(drift, async (c) => {
    const { environment, limit, cursor } = c.req.valid('query');
    const after = cursorParam(cursor, decodeDriftCursor);
    if (environment !== undefined && !(await environmentExists(deps.db, environment))) {
      throw new ApiError(404, 'not_found', `environment ${JSON.stringify(environment)} not found`);
    }
    const scope = WorkspaceScope.of(c, deps);
    if (environment !== undefined) await scope?.requireEnvironment(environment);
    const page = await driftReport(deps.db, reportContext(deps), { environment, limit, after });
    return c.json(scope === undefined ? page : { ...page, items: scope.rows(page.items) }, 200);
  });
}
