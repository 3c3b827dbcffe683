// What a setting is. Each component declares its own settings in a table of these, beside its
// tunables and the function that turns them into its options (for instance
// sources/otlp/otlp-settings.ts); src/settings.ts composes the tables into the hub's, from which
// the configuration, `--help` and docs/configuration.md are all made. Precedence, everywhere:
// command-line flag > KALYPSO_* variable > generic variable (DATABASE_URL) > default.
import type { Result } from '../model/result.ts';

/** The groups help and the docs list the settings in, in this order, with their titles. */
export const SETTING_GROUPS = {
  network: 'Network',
  database: 'Database',
  security: 'Security',
  sources: 'Sources',
  notifications: 'Notifications',
  state: 'State and history',
  limits: 'Limits',
  logging: 'Logging and shutdown',
} as const;
export type SettingGroup = keyof typeof SETTING_GROUPS;

export interface Setting<T> {
  readonly flag: string;
  readonly group: SettingGroup;
  readonly env: readonly string[];
  readonly default: T;
  /** Shown in help and in the configuration reference. */
  readonly description: string;
  readonly parse: (text: string) => Result<T>;
  /** The default as users would write it. */
  readonly shownDefault?: string;
  /** Secret values are never printed. */
  readonly secret?: boolean;
  /** A switch: `--flag` alone means true (the environment variable takes true/false). */
  readonly boolean?: true;
}

/** A component's settings, by the name its configuration calls them. */
export type SettingsTable = Readonly<Record<string, Setting<unknown>>>;

type SettingValue<S> = S extends { parse: (text: string) => Result<infer T> } ? T : never;

/** The values of a table's settings, as resolved: what a component's options are made from. */
export type ConfigOf<S extends SettingsTable> = { readonly [K in keyof S]: SettingValue<S[K]> };

/**
 * A check across settings, made once each of them is parsed: a message naming the settings when
 * they do not go together, else undefined.
 */
export type SettingsCheck<S extends SettingsTable> = (config: ConfigOf<S>) => string | undefined;
