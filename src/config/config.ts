// Flags + environment → one frozen, typed configuration. A bad value stops start-up with a message
// that names the setting and where it came from. Which settings there are is the caller's table
// (the hub's is composed in src/settings.ts from its components' tables).
import { parseArgs } from 'node:util';
import { describeArgvError } from './argv-errors.ts';
import type { ConfigOf, Setting, SettingsCheck, SettingsTable } from './setting.ts';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Resolves every setting of `table`; `argv` are the flags after the command name. */
export function resolveConfig<S extends SettingsTable>(
  table: S,
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  checks: readonly SettingsCheck<S>[] = [],
): ConfigOf<S> {
  const flags = parseFlags(Object.values(table), argv);
  const config: Record<string, unknown> = {};
  for (const [name, setting] of Object.entries(table)) config[name] = resolveSetting(setting, flags[setting.flag], env);
  const resolved = Object.freeze(config) as ConfigOf<S>;
  for (const check of checks) {
    const problem = check(resolved);
    if (problem !== undefined) throw new ConfigError(problem);
  }
  return resolved;
}

function parseFlags(settings: readonly Setting<unknown>[], argv: readonly string[]): Record<string, string | boolean | undefined> {
  try {
    return parseArgs({
      args: [...argv],
      options: Object.fromEntries(settings.map((setting) => [setting.flag, { type: setting.boolean === true ? ('boolean' as const) : ('string' as const) }])),
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    throw new ConfigError(describeArgvError(error, settings.map((setting) => setting.flag)));
  }
}

function resolveSetting(setting: Setting<unknown>, flag: string | boolean | undefined, env: NodeJS.ProcessEnv): unknown {
  const flagValue = typeof flag === 'boolean' ? String(flag) : flag;
  const envName = setting.env.find((variable) => env[variable] !== undefined && env[variable] !== '');
  const [source, raw] =
    flagValue !== undefined ? [`--${setting.flag}`, flagValue] : envName !== undefined ? [envName, env[envName]!] : [undefined, undefined];
  if (raw === undefined) return setting.default;
  const parsed = setting.parse(raw);
  if (!parsed.ok) {
    const shown = setting.secret === true ? '(hidden)' : JSON.stringify(raw);
    throw new ConfigError(`invalid ${source}: ${parsed.reason} (got ${shown})`);
  }
  return parsed.value;
}
