// The notifications route: where the hub reports to, and what it has not delivered yet.
import { createRoute, z } from '@hono/zod-openapi';
import { NotificationsAnswer } from '../answer-schemas.ts';
import { errorResponses, jsonResponse } from '../request-params.ts';

export const notifications = createRoute({
  method: 'get',
  path: '/notifications',
  summary: 'Where the hub reports to (commit statuses, webhooks), and what waits, is retried or was refused there',
  description:
    'The channels of the notifications file (--notifications) with their queues, and the undelivered messages with the receiver’s last answer. ' +
    'Tokens, secrets and webhook URLs are never shown.',
  request: {
    query: z.object({
      limit: z.coerce.number().int().min(1).max(1_000).default(100).openapi({ description: 'Undelivered messages listed at most' }),
    }),
  },
  responses: { ...jsonResponse(NotificationsAnswer, 'Channels and undelivered messages'), ...errorResponses },
});
