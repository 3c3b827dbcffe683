import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/config.ts';
import { HUB_SETTINGS, hubSettingsByGroup, hubSettingsMarkdown, resolveHubConfig } from '../../src/settings.ts';
import { parseDuration, parseSize } from '../../src/config/units.ts';

describe('units', () => {
  it('parses durations', () => {
    expect(parseDuration('15m')).toBe(900_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('30')).toBe(30_000);
    expect(parseDuration('soon')).toBeUndefined();
  });

  it('parses sizes', () => {
    expect(parseSize('64MiB')).toBe(67_108_864);
    expect(parseSize('1kb')).toBe(1_000);
    expect(parseSize('512')).toBe(512);
    expect(parseSize('lots')).toBeUndefined();
  });
});

describe('resolveConfig', () => {
  it('uses the documented defaults', () => {
    const config = resolveHubConfig([], {});
    expect(config).toMatchObject({
      databaseUrl: undefined,
      dataDir: './.kalypso-hub',
      embeddedPgPort: 5433,
      embeddedPgPassword: 'kalypso',
      httpPort: 8080,
      otlpGrpcPort: 4317,
      otlpHttpPort: 4318,
      staleAfter: 900_000,
      maxRequestSize: 67_108_864,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('takes flags over KALYPSO_* variables over generic variables', () => {
    const env = { DATABASE_URL: 'postgres://generic/db', KALYPSO_DATABASE_URL: 'postgres://specific/db', KALYPSO_HTTP_PORT: '9000' };
    expect(resolveHubConfig([], env).databaseUrl).toBe('postgres://specific/db');
    expect(resolveHubConfig([], { DATABASE_URL: 'postgres://generic/db' }).databaseUrl).toBe('postgres://generic/db');
    expect(resolveHubConfig(['--database-url', 'postgres://flag/db'], env).databaseUrl).toBe('postgres://flag/db');
    expect(resolveHubConfig([], env).httpPort).toBe(9000);
    expect(resolveHubConfig(['--http-port', '9100'], env).httpPort).toBe(9100);
  });

  it('stops on a bad value, naming the setting and where it came from', () => {
    expect(() => resolveHubConfig([], { KALYPSO_HTTP_PORT: 'eighty' })).toThrow(
      new ConfigError('invalid KALYPSO_HTTP_PORT: must be a port number from 0 to 65535 (got "eighty")'),
    );
    expect(() => resolveHubConfig(['--stale-after', 'forever'], {})).toThrow(/invalid --stale-after: must be a duration/);
    expect(() => resolveHubConfig([], { DATABASE_URL: 'mysql://x' })).toThrow(/invalid DATABASE_URL: must be a postgres/);
  });

  it('keeps history forever unless a retention of at least a day is set', () => {
    expect(resolveHubConfig([], {}).historyRetention).toBe(0);
    expect(resolveHubConfig(['--history-retention', '400d'], {}).historyRetention).toBe(400 * 86_400_000);
    expect(resolveHubConfig([], { KALYPSO_HISTORY_RETENTION: '0' }).historyRetention).toBe(0);
    expect(() => resolveHubConfig(['--history-retention', '12h'], {})).toThrow(/invalid --history-retention: must be 0 \(keep forever\) or a duration of at least 1d/);
  });

  it('takes a promotion order of environment names, and none by default', () => {
    expect(resolveHubConfig([], {}).environmentOrder).toEqual([]);
    expect(resolveHubConfig(['--environment-order', 'dev, qa ,prod'], {}).environmentOrder).toEqual(['dev', 'qa', 'prod']);
    expect(resolveHubConfig([], { KALYPSO_ENVIRONMENT_ORDER: 'qa,dev' }).environmentOrder).toEqual(['qa', 'dev']);
    expect(resolveHubConfig(['--environment-order', 'prod'], { KALYPSO_ENVIRONMENT_ORDER: 'qa,dev' }).environmentOrder).toEqual(['prod']);
    // An empty flag says "no explicit order" (and overrides the variable).
    expect(resolveHubConfig(['--environment-order', ''], { KALYPSO_ENVIRONMENT_ORDER: 'qa,dev' }).environmentOrder).toEqual([]);
    expect(resolveHubConfig(['--environment-order', 'e'.repeat(253)], {}).environmentOrder).toEqual(['e'.repeat(253)]);
  });

  it('stops on a bad promotion order, naming the setting', () => {
    expect(() => resolveHubConfig(['--environment-order', 'dev,,prod'], {})).toThrow(
      new ConfigError('invalid --environment-order: must be environment names separated by commas, none empty (got "dev,,prod")'),
    );
    expect(() => resolveHubConfig([], { KALYPSO_ENVIRONMENT_ORDER: 'dev,qa,' })).toThrow(/^invalid KALYPSO_ENVIRONMENT_ORDER: must be environment names separated by commas, none empty/);
    expect(() => resolveHubConfig([], { KALYPSO_ENVIRONMENT_ORDER: 'dev, ,qa' })).toThrow(/^invalid KALYPSO_ENVIRONMENT_ORDER: .*none empty/);
    expect(() => resolveHubConfig(['--environment-order', 'dev,qa, dev'], {})).toThrow(
      new ConfigError('invalid --environment-order: environment "dev" is listed twice (got "dev,qa, dev")'),
    );
    expect(() => resolveHubConfig([], { KALYPSO_ENVIRONMENT_ORDER: `dev,${'e'.repeat(254)}` })).toThrow(
      /^invalid KALYPSO_ENVIRONMENT_ORDER: environment names are at most 253 characters/,
    );
  });

  it('never echoes a secret in an error', () => {
    expect(() => resolveHubConfig([], { DATABASE_URL: 'http://user:s3cret@db' })).toThrow(/\(got \(hidden\)\)/);
  });

  it('rejects unknown flags', () => {
    expect(() => resolveHubConfig(['--htp-port', '1'], {})).toThrow(ConfigError);
  });

  it('puts every setting in one group, and leaves no group empty', () => {
    const grouped = hubSettingsByGroup();
    expect(grouped.flatMap((group) => group.settings).map((setting) => setting.flag).sort()).toEqual(
      Object.values(HUB_SETTINGS).map((setting) => setting.flag).sort(),
    );
    for (const group of grouped) expect(group.settings.length, group.title).toBeGreaterThan(0);
  });

  it('takes each setting from one component: no name, flag or variable declared twice', async () => {
    const tables = await Promise.all(
      [
        ['../../src/http/http-settings.ts', 'HTTP_SETTINGS'],
        ['../../src/store/database-settings.ts', 'DATABASE_SETTINGS'],
        ['../../src/sources/otlp/otlp-settings.ts', 'OTLP_SETTINGS'],
        ['../../src/api/api-settings.ts', 'API_SETTINGS'],
        ['../../src/security/tls-settings.ts', 'TLS_SETTINGS'],
        ['../../src/security/identity-settings.ts', 'IDENTITY_SETTINGS'],
        ['../../src/sources/kube/kube-settings.ts', 'KUBE_SETTINGS'],
        ['../../src/sources/resource-graph/resource-graph-settings.ts', 'RESOURCE_GRAPH_SETTINGS'],
        ['../../src/demo/demo-settings.ts', 'DEMO_SETTINGS'],
        ['../../src/notify/notify-settings.ts', 'NOTIFY_SETTINGS'],
        ['../../src/store/state-settings.ts', 'STATE_SETTINGS'],
        ['../../src/log/log-settings.ts', 'LOG_SETTINGS'],
      ].map(async ([module, name]) => ((await import(module!)) as Record<string, Record<string, { flag: string; env: string[] }>>)[name!]!),
    );
    // A name declared by two components would be taken silently from the later one.
    expect(tables.flatMap((table) => Object.keys(table)).sort()).toEqual(Object.keys(HUB_SETTINGS).sort());
    const flags = Object.values(HUB_SETTINGS).map((setting) => setting.flag);
    expect(new Set(flags).size).toBe(flags.length);
    const variables = Object.values(HUB_SETTINGS).flatMap((setting) => setting.env);
    expect(new Set(variables).size).toBe(variables.length);
  });

  it('describes every setting in a table under its group', () => {
    const markdown = hubSettingsMarkdown();
    const network = markdown.slice(markdown.indexOf('**Network**'), markdown.indexOf('**Database**'));
    expect(network).toContain('| `--http-port` | `KALYPSO_HTTP_PORT` | `8080` |');
    expect(network).not.toContain('`--database-url`');
    expect(markdown).toContain('`KALYPSO_EMBEDDED_PG_PASSWORD`');
    expect(markdown).toContain('| `--environment-order` | `KALYPSO_ENVIRONMENT_ORDER` | `(none)` |');
    for (const setting of Object.values(HUB_SETTINGS)) expect(markdown.split(`| \`--${setting.flag}\` |`)).toHaveLength(2);
  });
});
