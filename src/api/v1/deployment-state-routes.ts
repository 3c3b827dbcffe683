// The rollout gates for CD pipelines — per manifests endpoint, or per environment (Kalypso's Check
// Promote) — with an optional long-poll (`wait`) that answers as soon as every subscriber settled.
import type { OpenAPIHono } from '@hono/zod-openapi';
import { normalizeManifestsEndpoint } from '../../model/manifests-endpoint.ts';
import { type CommitScope, resolveCommit } from '../../store/reports/commit-resolution.ts';
import { decodeTargetCursor, environmentGateReport } from '../../store/reports/environment-gate-report.ts';
import { environmentExists } from '../../store/reports/environments-report.ts';
import { decodeSubscriberCursor, rolloutGateReport } from '../../store/reports/rollout-gate-report.ts';
import type { RolloutState } from '../../contract/answer-types.ts';
import { ApiError } from '../api-error.ts';
import { deploymentState } from '../../contract/routes/deployment-state.ts';
import { type ApiV1Deps, reportContext } from './api-deps.ts';
import { cursorParam, durationParamMs } from './schemas.ts';
import { API_TUNING } from '../api-settings.ts';
import { WorkspaceScope } from './workspace-scope.ts';

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
    // Before the commit is resolved: an unknown prefix's answer lists candidates.
    const workspaces = WorkspaceScope.of(c, deps);
    if (workspaces !== undefined) await ('environment' in scope ? workspaces.requireEnvironment(scope.environment) : workspaces.requireEndpoint(scope.endpoint));
    const resolved = await resolveCommit(deps.db, scope, query.commit, workspaces === undefined ? undefined : [...workspaces.workspaces]);
    if (!resolved.ok) throw new ApiError(400, 'invalid_parameter', `commit: ${resolved.reason}`);
    const commit = resolved.value;
    const page = {
      limit: query.limit,
      after: cursorParam(query.cursor, decodeSubscriberCursor),
      targetsAfter: cursorParam(query.targetsCursor, decodeTargetCursor, 'targetsCursor'),
      // A scoped caller's gate is restricted in its queries (its targets, their subscribers) before
      // counting and paging: counts over all of its subscribers, full pages, consistent cursors.
      workspaces: workspaces === undefined ? undefined : [...workspaces.workspaces],
      // Counted from the summaries: an answer needs none of the notifier's facts over every subscriber.
      answerOnly: true,
    };
    const read = async (): Promise<{ answer: RolloutState; endpoints: readonly string[] }> => {
      if ('environment' in scope) return await environmentGateReport(deps.db, reportContext(deps), scope.environment, commit, page);
      return { answer: await rolloutGateReport(deps.db, reportContext(deps), scope.endpoint, commit, page), endpoints: [scope.endpoint] };
    };

    const deadline = Date.now() + waitMs;
    const stop = AbortSignal.any([deps.shutdown, c.req.raw.signal]);
    let state = await read();
    while (!state.answer.settled && Date.now() < deadline && !stop.aborted) {
      await deps.stateChanges.next(state.endpoints, Math.min(API_TUNING.gatePollIntervalMs, deadline - Date.now()), stop);
      // A client gone needs no answer; nor is this request awaited then when the hub stops, so a
      // read now could find the database closed beneath it. (A hub stopping answers its connected
      // clients with a last read: it waits for their requests before it closes the database.)
      if (c.req.raw.signal.aborted) break;
      state = await read();
    }
    return c.json(state.answer, 200);
  });
}
