// The notifications' part of /metrics: messages sent, retried and refused per channel, and the
// queue per channel as it stands when scraped (read from the outbox, so every hub reports the
// same shared queue).
import type { Kysely } from 'kysely';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { HubDatabase } from '../store/database-schema.ts';
import { channelQueues } from '../store/reports/notifications-report.ts';

export interface NotifyMetrics {
  readonly sent: Counter<'channel' | 'kind'>;
  readonly retried: Counter<'channel' | 'kind' | 'reason'>;
  readonly failed: Counter<'channel' | 'kind'>;
}

export function createNotifyMetrics(registry: Registry, db: Kysely<HubDatabase>, channels: readonly string[], clock: () => Date): NotifyMetrics {
  const read = async (set: (channel: string, queue: { queued: number; oldestSeconds: number }) => void): Promise<void> => {
    // A scrape while the database is down keeps the last values rather than failing /metrics.
    const queues = await channelQueues(db, clock()).catch(() => undefined);
    if (queues === undefined) return;
    const now = clock().getTime();
    for (const channel of channels) {
      const queue = queues.find((found) => found.channel === channel);
      set(channel, { queued: queue?.queued ?? 0, oldestSeconds: queue?.oldestQueuedAt === undefined || queue.oldestQueuedAt === null ? 0 : (now - queue.oldestQueuedAt.getTime()) / 1_000 });
    }
  };
  new Gauge({
    name: 'kalypso_notifications_queued',
    help: 'Messages waiting to be delivered (or retried), per channel.',
    labelNames: ['channel'],
    registers: [registry],
    async collect() {
      await read((channel, queue) => this.set({ channel }, queue.queued));
    },
  });
  new Gauge({
    name: 'kalypso_notifications_queue_age_seconds',
    help: 'Age of the oldest message waiting to be delivered, per channel (0 when none waits).',
    labelNames: ['channel'],
    registers: [registry],
    async collect() {
      await read((channel, queue) => this.set({ channel }, queue.oldestSeconds));
    },
  });
  return {
    sent: new Counter({ name: 'kalypso_notifications_sent_total', help: 'Messages the receiver acknowledged (or already showed), per channel and kind.', labelNames: ['channel', 'kind'], registers: [registry] }),
    retried: new Counter({
      name: 'kalypso_notifications_retried_total',
      help: 'Attempts that failed and will be tried again, per channel, kind and reason (rate_limited, error).',
      labelNames: ['channel', 'kind', 'reason'],
      registers: [registry],
    }),
    failed: new Counter({ name: 'kalypso_notifications_failed_total', help: 'Messages refused for good (a 4xx other than a rate limit), per channel and kind.', labelNames: ['channel', 'kind'], registers: [registry] }),
  };
}
