// The hub's settings, composed from the tables its components declare beside their tunables and
// options (each `*-settings.ts`). The configuration, `--help` and docs/configuration.md are all
// made from this one table, so none of them can name a setting the hub does not have.
import { API_SETTINGS } from './api/api-settings.ts';
import { resolveConfig } from './config/config.ts';
import type { ConfigOf, SettingGroup } from './config/setting.ts';
import { type SettingsOfGroup, settingsByGroup } from './config/setting-groups.ts';
import { settingsMarkdown } from './config/settings-markdown.ts';
import { DEMO_SETTINGS } from './demo/demo-settings.ts';
import { HTTP_SETTINGS } from './http/http-settings.ts';
import { LOG_SETTINGS } from './log/log-settings.ts';
import { NOTIFY_SETTINGS } from './notify/notify-settings.ts';
import { IDENTITY_SETTINGS } from './security/identity-settings.ts';
import { TLS_SETTINGS, tlsFilesPaired } from './security/tls-settings.ts';
import { KUBE_SETTINGS } from './sources/kube/kube-settings.ts';
import { OTLP_SETTINGS } from './sources/otlp/otlp-settings.ts';
import { RESOURCE_GRAPH_SETTINGS } from './sources/resource-graph/resource-graph-settings.ts';
import { DATABASE_SETTINGS } from './store/database-settings.ts';
import { STATE_SETTINGS } from './store/state-settings.ts';

/** In this order, so that each group lists its settings as the components declare them. */
export const HUB_SETTINGS = {
  ...HTTP_SETTINGS,
  ...DATABASE_SETTINGS,
  ...OTLP_SETTINGS,
  ...API_SETTINGS,
  ...IDENTITY_SETTINGS,
  ...TLS_SETTINGS,
  ...KUBE_SETTINGS,
  ...RESOURCE_GRAPH_SETTINGS,
  ...DEMO_SETTINGS,
  ...NOTIFY_SETTINGS,
  ...STATE_SETTINGS,
  ...LOG_SETTINGS,
} as const;

export type HubConfig = ConfigOf<typeof HUB_SETTINGS>;
export type HubSettingName = keyof typeof HUB_SETTINGS;

/** Every setting of the hub from flags (`argv`, after the command name) and the environment. */
export function resolveHubConfig(argv: readonly string[], env: NodeJS.ProcessEnv): HubConfig {
  return resolveConfig(HUB_SETTINGS, argv, env, [tlsFilesPaired]);
}

/** The hub's settings group by group (or the groups named), for help. */
export function hubSettingsByGroup(only?: readonly SettingGroup[]): SettingsOfGroup[] {
  return settingsByGroup(HUB_SETTINGS, only);
}

/** The configuration reference's tables (docs/configuration.md). */
export function hubSettingsMarkdown(): string {
  return settingsMarkdown(HUB_SETTINGS);
}
