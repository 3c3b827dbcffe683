import type { OpenAPIHono } from '@hono/zod-openapi';
import { decodeCursor, historyReport } from '../../store/reports/history-report.ts';
import { history } from '../../contract/routes/history.ts';
import type { ApiV1Deps } from './api-deps.ts';
import { cursorParam } from './schemas.ts';
import { WorkspaceScope } from './workspace-scope.ts';

export function historyRoutes(app: OpenAPIHono, deps: ApiV1Deps): void {
  app.openapi(history, async (c) => {
    const query = c.req.valid('query');
    const cursor = cursorParam(query.cursor, decodeCursor);
    const scope = WorkspaceScope.of(c, deps);
    const page = await historyReport(deps.db, {
      ...query,
      workspace: scope === undefined ? query.workspace : scope.workspaceFilter(query.workspace),
      since: query.since === undefined ? undefined : new Date(query.since),
      until: query.until === undefined ? undefined : new Date(query.until),
      cursor,
    });
    return c.json(scope === undefined ? page : { ...page, items: scope.rows(page.items) }, 200);
  });
}
