// The rollout gate's route, per manifests endpoint or per environment (Check Promote).
import { createRoute, z } from '@hono/zod-openapi';
import { MIN_COMMIT_PREFIX } from '../../model/commit-id.ts';
import { GateAnswer } from '../answer-schemas.ts';
import { TextParam, NameParam, errorResponses, notFoundResponse, jsonResponse } from '../request-params.ts';

const commitDescription =
  `GitOps commit: the full id, a unique prefix of at least ${MIN_COMMIT_PREFIX} hex digits among the commits the hub has seen ` +
  'there, or another accepted spelling (main@sha1:…)';

export const deploymentState = createRoute({
  method: 'get',
  path: '/deployment-state',
  summary: 'Rollout gate: has this commit been applied everywhere — on a manifests endpoint, or across an environment (Check Promote)?',
  request: {
    query: z.object({
      manifestsEndpoint: TextParam()
        .min(1)
        .max(2_048)
        .optional()
        .openapi({ description: 'repo/branch/path (or give environment)', example: 'https://github.com/contoso/gitops/dev/hello-world' }),
      environment: NameParam('environment', 'query', 'Every deployment target of this environment (or give manifestsEndpoint)').optional(),
      commit: TextParam().min(1).max(256).openapi({ description: commitDescription }),
      wait: TextParam()
        .max(32)
        .optional()
        .openapi({ description: 'Wait up to this long (e.g. 30s, 5m) for every subscriber to settle', example: '60s' }),
    }),
  },
  responses: {
    ...jsonResponse(GateAnswer, 'Totals and per-subscriber status (and, per environment, per target)'),
    ...errorResponses,
    ...notFoundResponse,
  },
});
