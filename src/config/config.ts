// Flags + environment → one frozen, typed Config. A bad value stops start-up with a message
// that names the setting and where it came from.
import { parseArgs } from 'node:util';
import { describeArgvError } from './argv-errors.ts';
import type { Result } from '../model/result.ts';
import { type Setting, SETTINGS, type SettingName } from './settings.ts';

type SettingValue<S> = S extends { parse: (text: string) => Result<infer T> } ? T : never;
export type HubConfig = { readonly [K in SettingName]: SettingValue<(typeof SETTINGS)[K]> };

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Resolves every setting; `argv` are the flags after the command name. */
export function resolveConfig(argv: readonly string[], env: NodeJS.ProcessEnv): HubConfig {
  let flags: Record<string, string | boolean | undefined>;
  try {
    flags = parseArgs({
      args: [...argv],
      options: Object.fromEntries(
        Object.values(SETTINGS).map((setting: Setting<unknown>) => [setting.flag, { type: setting.boolean === true ? ('boolean' as const) : ('string' as const) }]),
      ),
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    throw new ConfigError(describeArgvError(error, Object.values(SETTINGS).map((setting: Setting<unknown>) => setting.flag)));
  }

  const config: Record<string, unknown> = {};
  for (const [name, setting] of Object.entries(SETTINGS) as [SettingName, Setting<unknown>][]) {
    const flagValue = typeof flags[setting.flag] === 'boolean' ? String(flags[setting.flag]) : flags[setting.flag];
    const envName = setting.env.find((variable) => env[variable] !== undefined && env[variable] !== '');
    const [source, raw] =
      typeof flagValue === 'string'
        ? [`--${setting.flag}`, flagValue]
        : envName !== undefined
          ? [envName, env[envName]!]
          : [undefined, undefined];
    if (raw === undefined) {
      config[name] = setting.default;
      continue;
    }
    const parsed = setting.parse(raw);
    if (!parsed.ok) {
      const shown = setting.secret === true ? '(hidden)' : JSON.stringify(raw);
      throw new ConfigError(`invalid ${source}: ${parsed.reason} (got ${shown})`);
    }
    config[name] = parsed.value;
  }
  if ((config.tlsCertFile === undefined) !== (config.tlsKeyFile === undefined)) {
    throw new ConfigError('--tls-cert-file and --tls-key-file go together: set both, or neither for plain text');
  }
  return Object.freeze(config) as HubConfig;
}
