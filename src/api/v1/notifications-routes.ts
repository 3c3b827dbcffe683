import type { OpenAPIHono } from '@hono/zod-openapi';
import { notifications } from '../../contract/routes/notifications.ts';
import { channelQueues, undeliveredMessages } from '../../store/reports/notifications-report.ts';
import { isoTimeOrNull } from '../../store/reports/report-context.ts';
import type { ApiV1Deps } from './api-deps.ts';
import { WorkspaceScope } from './workspace-scope.ts';

export function notificationsRoutes(app: OpenAPIHono, deps: ApiV1Deps): void {
  app.openapi(notifications, async (c) => {
    const { limit } = c.req.valid('query');
    const now = deps.clock();
    // A scoped caller sees the messages about its workspaces (the report cuts them before `limit`);
    // the channels are the hub's, their queues counted over the fleet (numbers, never names).
    const scope = WorkspaceScope.of(c, deps);
    const workspaces = scope === undefined ? undefined : [...scope.workspaces];
    const [queues, items] = await Promise.all([channelQueues(deps.db, now), undeliveredMessages(deps.db, now, limit, workspaces)]);
    const channels = deps.notifications.channels.map((channel) => {
      const queue = queues.find((found) => found.channel === channel.name);
      return {
        ...channel,
        queued: queue?.queued ?? 0,
        failed: queue?.failed ?? 0,
        sentLastDay: queue?.sentLastDay ?? 0,
        oldestQueuedAt: isoTimeOrNull(queue?.oldestQueuedAt ?? null),
        pausedUntil: isoTimeOrNull(queue?.pausedUntil ?? null),
        pauseReason: queue?.pauseReason ?? null,
      };
    });
    return c.json({ publicUrl: deps.notifications.publicUrl ?? null, channels, items: items.map(({ id: _id, key: _key, ...item }) => item) }, 200);
  });
}
