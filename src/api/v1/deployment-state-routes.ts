// The rollout gates for CD pipelines — per manifests endpoint, or per environment (Kalypso's Check
// Promote) — with an optional long-poll (`wait`) that answers as soon as every subscriber settled.
import type { OpenAPIHono } from '@hono/zod-openapi';
import { normalizeManifestsEndpoint } from '../../model/manifests-endpoint.ts';
import { type CommitScope, resolveCommit } from '../../store/reports/commit-resolution.ts';
import { environmentGateReport } from '../../store/reports/environment-gate-report.ts';
import { environmentExists } from '../../store/reports/environments-report.ts';
import { rolloutGateReport } from '../../store/reports/rollout-gate-report.ts';
import { projectionCurrent } from '../../store/projector.ts';
import type { RolloutState } from '../../contract/answer-types.ts';
import { ApiError } from '../api-error.ts';
import { deploymentState } from '../../contract/routes/deployment-state.ts';
import { type ApiV1Deps, reportContext } from './api-deps.ts';
import { durationParamMs } from './schemas.ts';
import { API_TUNING } from '../api-settings.ts';

export function deploymentStateRoutes(app: OpenAPIHono, deps: ApiV1Deps): void {
  app.openapi(deploymentState, async (c) => {
    const query = c.req.valid('query');
    if ((query.manifestsEndpoint === undefined) === (query.environment === undefined)) {
      throw new ApiError(400, 'invalid_parameter', 'manifestsEndpoint, environment: give exactly one of them');
    }
    const waitMs = query.wait === undefined ? 0 : durationParamMs('wait', query.wait, deps.maxWaitMs, '30s or 5m');
    const scope: CommitScope =
      query.environment === undefined ? { endpoint: normalizeManifestsEndpoint(query.manifestsEndpoint!) } : { environment: query.environment };
    if ('environment' in scope && !(await environmentExists(deps.db, scope.environment))) {
      throw new ApiError(404, 'not_found', `environment ${JSON.stringify(scope.environment)} not found`);
    }
    const resolved = await resolveCommit(deps.db, scope, query.commit);
    if (!resolved.ok) throw new ApiError(400, 'invalid_parameter', `commit: ${resolved.reason}`);
    const commit = resolved.value;
    const read = (): Promise<RolloutState> =>
      'endpoint' in scope
        ? rolloutGateReport(deps.db, reportContext(deps), scope.endpoint, commit)
        : environmentGateReport(deps.db, reportContext(deps), scope.environment, commit);
    const endpointsOf = (state: RolloutState): string[] =>
      'environment' in state ? state.targets.map((target) => target.manifestsEndpoint) : [state.manifestsEndpoint];

    const deadline = Date.now() + waitMs;
    const stop = AbortSignal.any([deps.shutdown, c.req.raw.signal]);
    let state = await read();
    while (!state.settled && Date.now() < deadline && !stop.aborted) {
      await deps.stateChanges.next(endpointsOf(state), Math.min(API_TUNING.gatePollIntervalMs, deadline - Date.now()), stop);
      // What was acknowledged while it waited (--append-first), as before the first read (app.ts).
      await projectionCurrent(deps.db);
      state = await read();
    }
    return c.json(state, 200);
  });
}
