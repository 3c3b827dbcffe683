import type { OpenAPIHono } from '@hono/zod-openapi';
import { deliveryReport } from '../../store/reports/delivery-report.ts';
import { ApiError } from '../api-error.ts';
import { delivery, DEFAULT_FIX_WINDOW } from '../../contract/routes/delivery.ts';
import { type ApiV1Deps, reportContext } from './api-deps.ts';
import { durationParamMs } from './schemas.ts';
import { API_TUNING } from '../api-settings.ts';
import { WorkspaceScope } from './workspace-scope.ts';

export function deliveryRoutes(app: OpenAPIHono, deps: ApiV1Deps): void {
  app.openapi(delivery, async (c) => {
    const query = c.req.valid('query');
    const until = query.until === undefined ? deps.clock() : new Date(query.until);
    const since = query.since === undefined ? new Date(until.getTime() - API_TUNING.deliveryWindowMs) : new Date(query.since);
    if (since >= until) throw new ApiError(400, 'invalid_parameter', 'since: must be before until');
    const fixWindowMs = durationParamMs('fixWindow', query.fixWindow ?? DEFAULT_FIX_WINDOW, API_TUNING.maxFixWindowMs, '1h or 30m');
    const scope = WorkspaceScope.of(c, deps);
    const workspace = scope === undefined ? query.workspace : scope.workspaceFilter(query.workspace);
    const report = await deliveryReport(deps.db, reportContext(deps), { ...query, workspace, since, until, fixWindowSeconds: fixWindowMs / 1_000 });
    return c.json(scope === undefined ? report : await scope.delivery(report), 200);
  });
}
