// The rollout gate's route, per manifests endpoint or per environment (Check Promote).
import { createRoute, z } from '@hono/zod-openapi';
import { MIN_COMMIT_PREFIX } from '../../model/commit-id.ts';
import { GateAnswer } from '../answer-schemas.ts';
import { TextParam, NameParam, errorResponses, notFoundResponse, jsonResponse } from '../request-params.ts';

/**
 * Subscribers (and an environment's targets) per page unless asked. An answer up to this size is
 * whole, as it always was (CONTRACT section 5 lists every subscriber); a larger one is paged, so
 * that an environment of 80,000 subscribers is never one answer of 80,000 rows.
 */
export const GATE_PAGE_SIZE = 1_000;
/** The most a caller may ask for in one page. */
export const GATE_MAX_PAGE_SIZE = 5_000;

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
      limit: z.coerce
        .number()
        .int()
        .min(1)
        .max(GATE_MAX_PAGE_SIZE)
        .default(GATE_PAGE_SIZE)
        .openapi({
          description:
            `Subscribers (and, per environment, targets) listed per page, those holding the rollout up first; ${GATE_PAGE_SIZE.toLocaleString('en')} unless asked ` +
            '(an answer within it is whole). The counts are always over every subscriber.',
        }),
      cursor: TextParam().max(2_000).optional().openapi({ description: 'nextCursor of the previous answer: the next page of subscribers' }),
      targetsCursor: TextParam()
        .max(2_000)
        .optional()
        .openapi({ description: 'nextTargetsCursor of the previous answer: the next page of an environment’s targets' }),
    }),
  },
  responses: {
    ...jsonResponse(GateAnswer, 'Totals and per-subscriber status (and, per environment, per target)'),
    ...errorResponses,
    ...notFoundResponse,
  },
});
