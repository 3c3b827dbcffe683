// The rollout gate for CD pipelines, with an optional long-poll (`wait`) that answers as soon as
// every subscriber has settled.
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { canonicalCommitId } from '../../model/commit-id.ts';
import { normalizeManifestsEndpoint } from '../../model/manifests-endpoint.ts';
import { type RolloutState, rolloutGateReport } from '../../store/reports/rollout-gate-report.ts';
import { type ApiV1Deps, reportContext } from './api-deps.ts';
import { durationParamMs, EffectiveStatusSchema, errorResponses, jsonResponse, TextParam, Timestamp } from './schemas.ts';
import { serialized } from './serialize.ts';

/** Other hub replicas write too: a waiting request also looks again on this interval. */
const POLL_INTERVAL_MS = 1_000;

const RolloutSchema = z
  .object({
    manifestsEndpoint: z.string(),
    commit: z.string(),
    total: z.number().int(),
    succeeded: z.number().int(),
    failed: z.number().int(),
    inProgress: z.number().int(),
    stale: z.number().int(),
    settled: z.boolean().openapi({ description: 'At least one subscriber, and every subscriber succeeded or failed.' }),
    subscribers: z.array(
      z.object({
        host: z.string(),
        reconciler: z.string(),
        reconcilerType: z.string(),
        status: EffectiveStatusSchema,
        statusMessage: z.string(),
        appliedCommit: z.string(),
        observedAt: Timestamp,
        lastSeenAt: Timestamp,
        supersededBy: z.string().nullable(),
      }),
    ),
  })
  .openapi('RolloutState');

const deploymentState = createRoute({
  method: 'get',
  path: '/deployment-state',
  summary: 'Rollout gate: has this commit of this manifests endpoint been applied everywhere?',
  request: {
    query: z.object({
      manifestsEndpoint: TextParam()
        .min(1)
        .max(2_048)
        .openapi({ description: 'repo/branch/path', example: 'https://github.com/contoso/gitops/dev/hello-world' }),
      commit: TextParam().min(1).max(256).openapi({ description: 'GitOps commit, in any of the accepted spellings' }),
      wait: TextParam()
        .max(32)
        .optional()
        .openapi({ description: 'Wait up to this long (e.g. 30s, 5m) for every subscriber to settle', example: '60s' }),
    }),
  },
  responses: { ...jsonResponse(RolloutSchema, 'Totals and per-subscriber status'), ...errorResponses },
});

export function deploymentStateRoutes(app: OpenAPIHono, deps: ApiV1Deps): void {
  app.openapi(deploymentState, async (c) => {
    const query = c.req.valid('query');
    const waitMs = query.wait === undefined ? 0 : durationParamMs('wait', query.wait, deps.maxWaitMs, '30s or 5m');
    const endpoint = normalizeManifestsEndpoint(query.manifestsEndpoint);
    const commit = canonicalCommitId(query.commit);
    const read = (): Promise<RolloutState> => rolloutGateReport(deps.db, reportContext(deps), endpoint, commit);

    const deadline = Date.now() + waitMs;
    const stop = AbortSignal.any([deps.shutdown, c.req.raw.signal]);
    let state = await read();
    while (!state.settled && Date.now() < deadline && !stop.aborted) {
      await deps.stateChanges.next(endpoint, Math.min(POLL_INTERVAL_MS, deadline - Date.now()), stop);
      state = await read();
    }
    return c.json(serialized(state), 200);
  });
}
