// Telling people and systems, as the hub starts it: the notifications file read and checked before
// the hub listens (a mistake stops start-up), then — once the database is migrated — the notifier,
// which judges and queues, and the sender, which delivers. Every hub runs both; the database
// decides which hub judges (a lock) and which hub sends each message (SKIP LOCKED).
import type { Kysely } from 'kysely';
import type { Registry } from 'prom-client';
import { ConfigError } from '../config/config.ts';
import type { ConfigOf } from '../config/setting.ts';
import type { Logger } from '../log/logger.ts';
import type { HubDatabase } from '../store/database-schema.ts';
import { databaseNow } from '../store/notify/subjects.ts';
import type { ChannelClient } from './messages.ts';
import { type Channel, loadNotifications, type ProviderType } from './notifications-file.ts';
import { Notifier } from './notifier.ts';
import { createNotifyMetrics } from './notify-metrics.ts';
import { type NOTIFY_SETTINGS, NOTIFY_TUNING, type NotifyTuning } from './notify-settings.ts';
import { azureDevOpsClient } from './providers/azure-devops.ts';
import { githubClient } from './providers/github.ts';
import { gitlabClient } from './providers/gitlab.ts';
import type { ProviderTiming } from './providers/provider-common.ts';
import { webhookClient } from './providers/webhook.ts';
import { Sender } from './sender.ts';

export type NotifyConfig = ConfigOf<typeof NOTIFY_SETTINGS>;

/** The file's channels (none without one); links need the hub's public address, so a file without it is refused. */
export async function loadChannels(config: NotifyConfig, env: NodeJS.ProcessEnv): Promise<readonly Channel[]> {
  if (config.notifications === undefined) return [];
  const channels = await loadNotifications(config.notifications, env);
  if (channels.length > 0 && config.publicUrl === undefined) {
    throw new ConfigError('--notifications needs --public-url (KALYPSO_PUBLIC_URL): the address people reach the hub at, for the links in statuses and events');
  }
  return channels;
}

/** What the API may show of a channel: its name and kind, never a URL or a secret. */
export function channelSetup(channel: Channel): { name: string; kind: Channel['kind']; type: ProviderType | 'webhook' } {
  return { name: channel.name, kind: channel.kind, type: channel.kind === 'webhook' ? 'webhook' : channel.type };
}

export function channelClient(channel: Channel, timing: ProviderTiming): ChannelClient {
  if (channel.kind === 'webhook') return webhookClient(channel, timing);
  switch (channel.type) {
    case 'github':
      return githubClient(channel, timing);
    case 'gitlab':
      return gitlabClient(channel, timing);
    case 'azuredevops':
      return azureDevOpsClient(channel, timing);
  }
}

export interface RunningNotifications {
  stop(): Promise<void>;
}

export async function startNotifications(
  db: Kysely<HubDatabase>,
  channels: readonly Channel[],
  options: { readonly publicUrl: string; readonly staleAfterMs: number; readonly clock: () => Date; readonly registry: Registry; readonly tuning?: NotifyTuning },
  log: Logger,
): Promise<RunningNotifications> {
  const tuning = options.tuning ?? NOTIFY_TUNING;
  const notifyLog = log.child({ source: 'notifications' });
  const metrics = createNotifyMetrics(options.registry, db, channels.map((channel) => channel.name), options.clock);
  const clients = new Map(channels.map((channel) => [channel.name, channelClient(channel, tuning)]));
  const startedAt = await databaseNow(db);
  const notifier = new Notifier(db, channels, { publicUrl: options.publicUrl, staleAfterMs: options.staleAfterMs, clock: options.clock, tuning, startedAt }, notifyLog);
  const sender = new Sender(db, clients, { clock: options.clock, tuning }, metrics, notifyLog);
  notifier.start();
  sender.start();
  notifyLog.info({ channels: channels.map((channel) => `${channel.name} (${channel.kind === 'webhook' ? 'webhook' : channel.type})`) }, 'notifications on');
  return {
    stop: async () => {
      await notifier.stop();
      await sender.stop();
    },
  };
}
