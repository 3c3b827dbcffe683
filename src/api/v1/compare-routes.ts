import type { OpenAPIHono } from '@hono/zod-openapi';
import { compareReport } from '../../store/reports/compare-report.ts';
import { knownEnvironments } from '../../store/reports/environments-report.ts';
import { ApiError } from '../api-error.ts';
import { compare, MAX_COMPARE_ENVIRONMENTS } from '../../contract/routes/compare.ts';
import { type ApiV1Deps, reportContext } from './api-deps.ts';
import { decodeTargetCursor, encodeTargetCursor } from '../../store/reports/target-deployments.ts';
import { cursorParam } from './schemas.ts';
import { WorkspaceScope } from './workspace-scope.ts';

export function compareRoutes(app: OpenAPIHono, deps: ApiV1Deps): void {
  app.openapi(compare, async (c) => {
    const query = c.req.valid('query');
    const names = [...new Set(query.environments.split(',').map((name) => name.trim()))].filter((name) => name !== '');
    if (names.length < 2) throw new ApiError(400, 'invalid_parameter', 'environments: name at least two environments, comma-separated');
    if (names.length > MAX_COMPARE_ENVIRONMENTS) {
      throw new ApiError(400, 'invalid_parameter', `environments: at most ${MAX_COMPARE_ENVIRONMENTS} environments`);
    }
    const scope = WorkspaceScope.of(c, deps);
    const known = await knownEnvironments(deps.db, names);
    for (const name of names) {
      if (!known.has(name)) throw new ApiError(404, 'not_found', `environment ${JSON.stringify(name)} not found`);
      await scope?.requireEnvironment(name);
    }
    const after = cursorParam(query.cursor, decodeTargetCursor);
    const page = await compareReport(deps.db, reportContext(deps), names, {
      limit: query.limit,
      after,
      workspace: scope === undefined ? query.workspace : scope.workspaceFilter(query.workspace),
      application: query.application,
    });
    return c.json(
      {
        environments: names,
        items: scope === undefined ? page.items : scope.rows(page.items),
        nextCursor: page.next === null ? null : encodeTargetCursor(page.next),
      },
      200,
    );
  });
}
