// Grafana's alerting provisioning for Kalypso as Grafana would load it, without a Grafana here:
// deploy/grafana/select-alerting.sh is run with KALYPSO_ALERT_WEBHOOK_URL unset, empty and set (the
// init container's job), and what it leaves in the directory is read the way Grafana reads it —
// variables expanded where Grafana expands them — and held to the shape Grafana documents and
// enforces. Grafana fails its start-up on any provisioning error, so "silent when unset" means: with
// the variable unset, no provisioned field that Grafana requires is empty and no rule names a contact
// point that is not there.
//
// Sources of the shape checks (grafana/grafana):
// - docs/sources/alerting/set-up/provision-alerting-resources/file-provisioning/index.md — the file
//   format: groups (name, folder, interval required), rules (uid, title, condition, data required;
//   noDataState NoData|Alerting|OK; execErrState Error|Alerting|OK), contactPoints (name; receivers
//   with uid, type, settings required), per-type required settings (webhook url; slack url or token
//   + recipient; teams url), policies (which replace the whole tree: never ours);
// - pkg/services/provisioning/alerting/config_reader.go — any file but .yaml/.yml/.json in the
//   directory fails provisioning;
// - pkg/services/provisioning/alerting/rules_types.go — which fields are expanded (everything but
//   annotations and the query model), uid and title required, `for` a Prometheus duration,
//   notification_settings.receiver not empty;
// - pkg/services/provisioning/values/values.go — the expansion: split on `$$`, then os.ExpandEnv
//   (an unset variable is ""), joined with `$`;
// - pkg/services/ngalert/models/alert_rule.go (ValidateAlertRule) and util.ValidateUID — uid
//   [A-Za-z0-9_-] of at most 40, reserved labels, NoData/Error states incl. KeepLast;
// - pkg/services/ngalert/provisioning/alert_rules.go — a rule's notification_settings are validated
//   against the contact points that exist; models/notifications.go — group_by without duplicates,
//   alertname and grafana_folder being the labels it always groups by (required by older versions).
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { anchors } from '../docs/markdown.ts';
import { ALERT_RULES, ALERTING_DIR, ALERTING_WEBHOOK_DIR, alertingFiles, CONTACT_POINT, DEFAULT_HUB_URL, DEFAULT_RUNBOOKS } from '../../scripts/grafana-alerts.ts';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const PROVISIONING = path.join(ROOT, 'deploy/grafana/provisioning');
const SCRIPT = path.join(ROOT, 'deploy/grafana/select-alerting.sh');
const URL_VARIABLES = ['KALYPSO_PUBLIC_URL', 'KALYPSO_ALERT_RUNBOOK_URL', 'KALYPSO_ALERT_WEBHOOK_URL', 'KALYPSO_ALERT_WEBHOOK_TYPE'];

type Env = Record<string, string>;
type Json = Record<string, any>;

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'kalypso-alerting-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** Runs the init container's script into a fresh directory (or `into`) with only `env` of ours set. */
async function select(env: Env, into?: string): Promise<{ dir: string; stdout: string; stderr: string; code: number }> {
  const dir = into ?? (await mkdtemp(path.join(scratch, 'out-')));
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !URL_VARIABLES.includes(name))) as Env;
  try {
    const { stdout, stderr } = await run('sh', [SCRIPT, PROVISIONING, dir], { env: { ...inherited, ...env } });
    return { dir, stdout, stderr, code: 0 };
  } catch (error) {
    const failed = error as { stdout: string; stderr: string; code: number };
    return { dir, stdout: failed.stdout, stderr: failed.stderr, code: failed.code };
  }
}

// ── Grafana's reading of the files ──────────────────────────────────────────────────────────

/** values.go interpolateValue: `$$` is a literal `$`; elsewhere os.ExpandEnv, an unset variable being "". */
function interpolate(value: string, env: Env): string {
  return value
    .split('$$')
    .map((part) => {
      if (/\$__(env|file|vault)\{/.test(part)) throw new Error(`${value}: $__env/$__file/$__vault are not used by Kalypso's files`);
      return part.replace(/\$\{([^}]*)\}|\$([A-Za-z0-9_]+)/g, (_whole, braced: string | undefined, bare: string | undefined) => env[braced ?? bare!] ?? '');
    })
    .join('$');
}

/** Every string inside `value`, interpolated (JSONValue / StringMapValue: all nested strings). */
function interpolateAll(value: unknown, env: Env): any {
  if (typeof value === 'string') return interpolate(value, env);
  if (Array.isArray(value)) return value.map((item) => interpolateAll(item, env));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, interpolateAll(item, env)]));
  return value;
}

/** A file as Grafana maps it: interpolated fields expanded, annotations and query models raw. */
function asGrafanaReadsIt(file: Json, env: Env): Json {
  return {
    ...file,
    groups: (file['groups'] ?? []).map((group: Json) => ({
      ...interpolateAll({ ...group, rules: undefined }, env),
      rules: group['rules'].map((rule: Json) => ({
        ...interpolateAll({ ...rule, annotations: undefined, data: undefined }, env),
        annotations: rule['annotations'],
        data: rule['data'].map((query: Json) => ({ ...interpolateAll({ ...query, model: undefined }, env), model: query['model'] })),
      })),
    })),
    contactPoints: interpolateAll(file['contactPoints'] ?? [], env),
  };
}

/** Prometheus' model.ParseDuration, which Grafana uses for interval and for. */
const isDuration = (text: unknown): boolean => typeof text === 'string' && (text === '0' || /^((\d+)(y|w|d|h|m|s|ms))+$/.test(text));
const seconds = (text: string): number =>
  [...text.matchAll(/(\d+)(ms|y|w|d|h|m|s)/g)].reduce(
    (sum, [, n, unit]) => sum + Number(n) * ({ ms: 0.001, s: 1, m: 60, h: 3600, d: 86_400, w: 604_800, y: 31_536_000 } as Record<string, number>)[unit!]!,
    0,
  );
const isHttpUrl = (text: unknown): boolean => {
  try {
    return typeof text === 'string' && ['http:', 'https:'].includes(new URL(text).protocol);
  } catch {
    return false;
  }
};
const TOP_LEVEL = ['apiVersion', 'groups', 'deleteRules', 'contactPoints', 'deleteContactPoints', 'policies', 'resetPolicies', 'templates', 'deleteTemplates', 'muteTimes', 'deleteMuteTimes'];
const RESERVED_LABELS = ['grafana_folder', '__alert_rule_uid__', '__alert_rule_namespace_uid__'];

/** What Grafana would refuse (and so not start) in the provisioned files, empty when nothing. */
function grafanaRefusals(files: Map<string, Json>): string[] {
  const problems: string[] = [];
  const fail = (where: string, what: string): void => void problems.push(`${where}: ${what}`);
  const receivers = new Set([...files.values()].flatMap((file) => (file['contactPoints'] ?? []).map((point: Json) => point['name'])));
  const titles = new Set<string>();
  for (const [name, file] of files) {
    if (!/\.(ya?ml|json)$/.test(name)) fail(name, 'not .yaml/.yml/.json: Grafana refuses the directory');
    if (file['apiVersion'] !== 1) fail(name, 'apiVersion must be 1');
    for (const key of Object.keys(file)) if (!TOP_LEVEL.includes(key)) fail(name, `unknown key ${key}`);
    if (file['policies'] !== undefined || file['resetPolicies'] !== undefined) fail(name, 'policies replace the org’s whole routing tree');
    for (const group of file['groups'] ?? []) {
      const where = `${name} group ${group['name']}`;
      if (group['orgId'] !== undefined && !(Number.isInteger(group['orgId']) && group['orgId'] >= 1)) fail(where, 'orgId');
      if (typeof group['name'] !== 'string' || group['name'].trim() === '' || group['name'].length > 190) fail(where, 'name required, at most 190');
      if (typeof group['folder'] !== 'string' || group['folder'].trim() === '') fail(where, 'folder required');
      if (!isDuration(group['interval']) || seconds(group['interval']) % 10 !== 0 || seconds(group['interval']) === 0) fail(where, 'interval: a duration, a multiple of the 10 s scheduler');
      if (!Array.isArray(group['rules']) || group['rules'].length === 0) fail(where, 'rules required');
      for (const rule of group['rules'] ?? []) {
        const at = `${where} rule ${rule['uid']}`;
        if (typeof rule['uid'] !== 'string' || !/^[A-Za-z0-9_-]{1,40}$/.test(rule['uid'])) fail(at, 'uid: [A-Za-z0-9_-], 1 to 40');
        if (typeof rule['title'] !== 'string' || rule['title'] === '' || rule['title'].length > 190) fail(at, 'title required, at most 190');
        if (titles.has(`${group['folder']}/${rule['title']}`)) fail(at, 'title not unique in its folder');
        titles.add(`${group['folder']}/${rule['title']}`);
        const refIds = (rule['data'] ?? []).map((query: Json) => query['refId']);
        if (refIds.length === 0) fail(at, 'data required');
        if (new Set(refIds).size !== refIds.length) fail(at, 'refIds not unique');
        if (typeof rule['condition'] !== 'string' || !refIds.includes(rule['condition'])) fail(at, 'condition must name a refId of data');
        for (const query of rule['data'] ?? []) {
          if (typeof query['refId'] !== 'string' || query['refId'] === '') fail(at, 'refId required');
          if (typeof query['datasourceUid'] !== 'string' || query['datasourceUid'] === '') fail(at, `${query['refId']}: datasourceUid required`);
          if (query['model']?.['refId'] !== query['refId']) fail(at, `${query['refId']}: model.refId differs`);
          if (query['datasourceUid'] !== '__expr__') {
            const range = query['relativeTimeRange'];
            if (!(Number.isInteger(range?.['from']) && Number.isInteger(range?.['to']) && range['from'] >= range['to'] && range['to'] >= 0)) fail(at, 'relativeTimeRange');
          } else if (query['model']?.['expression'] !== undefined && !refIds.includes(query['model']['expression'])) fail(at, 'expression must name a refId');
        }
        if (rule['for'] !== undefined && rule['for'] !== '' && !isDuration(rule['for'])) fail(at, 'for: a duration');
        if (!['', undefined, 'NoData', 'Alerting', 'OK', 'KeepLast'].includes(rule['noDataState'])) fail(at, 'noDataState');
        if (!['', undefined, 'Alerting', 'Error', 'OK', 'KeepLast'].includes(rule['execErrState'])) fail(at, 'execErrState');
        if (rule['panelId'] !== undefined && (typeof rule['dashboardUid'] !== 'string' || rule['dashboardUid'] === '')) fail(at, 'panelId without dashboardUid');
        for (const [label, value] of Object.entries(rule['labels'] ?? {})) {
          if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(label) || RESERVED_LABELS.includes(label)) fail(at, `label ${label}`);
          if (typeof value !== 'string') fail(at, `label ${label} is not a string`);
        }
        for (const [key, value] of Object.entries(rule['annotations'] ?? {})) if (typeof value !== 'string') fail(at, `annotation ${key} is not a string`);
        const routing = rule['notification_settings'];
        if (routing !== undefined) {
          if (typeof routing['receiver'] !== 'string' || routing['receiver'] === '') fail(at, 'notification_settings.receiver must not be empty');
          else if (!receivers.has(routing['receiver'])) fail(at, `notification_settings.receiver ${routing['receiver']} is not a provisioned contact point`);
          const groupBy: string[] = routing['group_by'] ?? [];
          if (groupBy.length > 0 && !(groupBy.includes('alertname') && groupBy.includes('grafana_folder'))) fail(at, 'group_by must keep alertname and grafana_folder');
          if (new Set(groupBy).size !== groupBy.length) fail(at, 'group_by duplicates');
        }
      }
    }
    for (const point of file['contactPoints'] ?? []) {
      const where = `${name} contact point ${point['name']}`;
      if (typeof point['name'] !== 'string' || point['name'] === '') fail(where, 'name required');
      if (!Array.isArray(point['receivers']) || point['receivers'].length === 0) fail(where, 'receivers: file provisioning makes nothing of none');
      for (const receiver of point['receivers'] ?? []) {
        const settings = receiver['settings'] ?? {};
        if (typeof receiver['uid'] !== 'string' || !/^[A-Za-z0-9_-]{1,40}$/.test(receiver['uid'])) fail(where, 'receiver uid');
        if (Object.keys(settings).length === 0) fail(where, 'settings required');
        const required = { webhook: ['url'], slack: settings['token'] === undefined ? ['url'] : ['token', 'recipient'], teams: ['url'] }[receiver['type'] as string];
        if (required === undefined) fail(where, `type ${receiver['type']}`);
        for (const key of required ?? []) if (typeof settings[key] !== 'string' || settings[key] === '') fail(where, `${receiver['type']} ${key} is required and empty`);
        if (settings['url'] !== undefined && !isHttpUrl(settings['url'])) fail(where, `url ${settings['url']} is not an http(s) URL`);
      }
    }
  }
  return problems;
}

/** The files of a provisioning directory, as Grafana reads them with `env`. */
async function provisionedAs(dir: string, env: Env): Promise<Map<string, Json>> {
  const files = new Map<string, Json>();
  for (const name of (await readdir(dir)).sort()) files.set(name, asGrafanaReadsIt(YAML.parse(await readFile(path.join(dir, name), 'utf8')) as Json, env));
  return files;
}

// ── The annotations' templates ──────────────────────────────────────────────────────────────

/**
 * The subset of Grafana's annotation templates (Go text/template with Prometheus' functions) that
 * Kalypso's rules use, evaluated for one instance: `$labels.x`, `$values.A.Value`, string literals,
 * parentheses, and the functions `or` and `urlquery` (text/template built-ins) and `reReplaceAll`
 * (Grafana's template functions). Anything else throws: a rule may not use what this cannot check.
 */
function render(template: string, labels: Record<string, string>, value: number): string {
  const evaluate = (tokens: string[]): string => {
    const argument = (): string => {
      const token = tokens.shift();
      if (token === undefined) throw new Error(`${template}: missing argument`);
      if (token === '(') {
        const inner: string[] = [];
        for (let depth = 1; ; ) {
          const next = tokens.shift();
          if (next === undefined) throw new Error(`${template}: unclosed (`);
          depth += next === '(' ? 1 : next === ')' ? -1 : 0;
          if (depth === 0) break;
          inner.push(next);
        }
        return evaluate(inner);
      }
      if (token.startsWith('"')) return JSON.parse(token) as string;
      if (token === '$values.A.Value') return String(value);
      if (token.startsWith('$labels.')) return labels[token.slice('$labels.'.length)] ?? '';
      throw new Error(`${template}: ${token} is not used by Kalypso's templates`);
    };
    const head = tokens[0];
    if (head === 'or') {
      tokens.shift();
      const values: string[] = [];
      while (tokens.length > 0) values.push(argument());
      return values.find((candidate) => candidate !== '') ?? values.at(-1)!;
    }
    if (head === 'urlquery') {
      tokens.shift();
      // Go's url.QueryEscape.
      return encodeURIComponent(argument())
        .replaceAll('%20', '+')
        .replace(/[!'()*]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`);
    }
    if (head === 'reReplaceAll') {
      tokens.shift();
      const [pattern, replacement, text] = [argument(), argument(), argument()];
      return text.replace(new RegExp(pattern, 'g'), replacement);
    }
    const result = argument();
    if (tokens.length > 0) throw new Error(`${template}: unexpected ${tokens.join(' ')}`);
    return result;
  };
  return template.replace(/\{\{(.*?)\}\}/g, (_whole, action: string) => evaluate(action.match(/"(?:[^"\\]|\\.)*"|[()]|[^\s()]+/g) ?? []));
}

/** A label set for each rule's instance: its query's labels, with values that need escaping. */
function sampleLabels(labels: readonly string[]): Record<string, string> {
  return Object.fromEntries(labels.map((label) => [label, label === 'commit' ? 'a'.repeat(40) : `${label} & co/1`]));
}

// ── The tests ───────────────────────────────────────────────────────────────────────────────

describe('Grafana alerting provisioning files', () => {
  it('are committed exactly as scripts/grafana-alerts.ts writes them, and nothing else is in their directories', async () => {
    const files = alertingFiles();
    for (const [file, text] of files) expect(await readFile(file, 'utf8'), `${path.relative(ROOT, file)} is stale: run npm run grafana:alerts`).toBe(text);
    for (const dir of [ALERTING_DIR, ALERTING_WEBHOOK_DIR]) {
      expect((await readdir(dir)).sort()).toEqual([...files.keys()].filter((file) => path.dirname(file) === dir).map((file) => path.basename(file)).sort());
    }
  });

  it('the checks below refuse what Grafana refuses', () => {
    const rule = (patch: Json): Map<string, Json> =>
      new Map([['r.yaml', { apiVersion: 1, groups: [{ name: 'g', folder: 'f', interval: '1m', rules: [{ uid: 'u', title: 't', condition: 'A', data: [{ refId: 'A', datasourceUid: 'd', relativeTimeRange: { from: 600, to: 0 }, model: { refId: 'A' } }], ...patch }] }] }]]);
    expect(grafanaRefusals(rule({}))).toEqual([]);
    expect(grafanaRefusals(rule({ uid: 'x'.repeat(41) }))).toHaveLength(1);
    expect(grafanaRefusals(rule({ notification_settings: { receiver: '' } }))).toEqual([expect.stringContaining('receiver must not be empty')]);
    expect(grafanaRefusals(rule({ notification_settings: { receiver: 'Kalypso' } }))).toEqual([expect.stringContaining('not a provisioned contact point')]);
    expect(grafanaRefusals(rule({ noDataState: 'Ok' }))).toHaveLength(1);
    const webhook = (url: string): Map<string, Json> =>
      new Map([['c.yaml', { apiVersion: 1, contactPoints: [{ orgId: 1, name: 'c', receivers: [{ uid: 'c', type: 'webhook', settings: { url } }] }] }]]);
    expect(grafanaRefusals(webhook(''))).toEqual([expect.stringContaining('url is required and empty'), expect.stringContaining('not an http(s) URL')]);
    expect(grafanaRefusals(new Map([['README.md', { apiVersion: 1 }]]))).toHaveLength(1);
    expect(interpolate('${UNSET}/x $$labels $SET', { SET: 'v' })).toBe('/x $labels v');
  });

  describe.each([
    ['unset', {}],
    ['empty', { KALYPSO_ALERT_WEBHOOK_URL: '', KALYPSO_PUBLIC_URL: '', KALYPSO_ALERT_RUNBOOK_URL: '' }],
  ] as [string, Env][])('with KALYPSO_ALERT_WEBHOOK_URL %s', (_case, env) => {
    it('provisions the rules alone, routed nowhere, and Grafana would start: nothing required is empty', async () => {
      const { dir, code, stdout } = await select(env);
      expect(code).toBe(0);
      expect(stdout).toContain('no contact point is provisioned');
      expect(await readdir(dir)).toEqual(['kalypso-alerts.yaml']);
      expect(await readFile(path.join(dir, 'kalypso-alerts.yaml'), 'utf8')).toBe(await readFile(path.join(ALERTING_DIR, 'kalypso-alerts.yaml'), 'utf8'));
      const files = await provisionedAs(dir, env);
      expect(grafanaRefusals(files)).toEqual([]);
      const rules = files.get('kalypso-alerts.yaml')!['groups'].flatMap((group: Json) => group['rules']);
      expect(rules).toHaveLength(ALERT_RULES.length);
      for (const rule of rules) {
        expect(rule['notification_settings']).toBeUndefined();
        // The URL labels are empty: the links fall back to the defaults.
        expect(rule['labels']).toMatchObject({ kalypso_hub_url: '', kalypso_runbooks: '' });
        const spec = ALERT_RULES.find((candidate) => candidate.uid === rule['uid'])!;
        const labels = { ...rule['labels'], ...sampleLabels(spec.labels) };
        expect(render(rule['annotations']['runbook_url'], labels, 1)).toBe(`${DEFAULT_RUNBOOKS}#${spec.runbook}`);
        expect(render(rule['annotations']['hub_url'], labels, 1)).toMatch(new RegExp(`^${DEFAULT_HUB_URL}/`));
      }
    });
  });

  it('with KALYPSO_ALERT_WEBHOOK_URL set: the rules sent to the Kalypso webhook contact point, its URL from the environment and never printed', async () => {
    const env = { KALYPSO_ALERT_WEBHOOK_URL: 'https://hooks.example/kalypso?token=s3cret', KALYPSO_PUBLIC_URL: 'https://kalypso.example/', KALYPSO_ALERT_RUNBOOK_URL: 'https://wiki.example/kalypso' };
    const { dir, code, stdout, stderr } = await select(env);
    expect(code).toBe(0);
    expect(`${stdout}${stderr}`).not.toContain('s3cret');
    expect((await readdir(dir)).sort()).toEqual(['kalypso-alerts.yaml', 'kalypso-contact-point.yaml']);
    expect(await readFile(path.join(dir, 'kalypso-contact-point.yaml'), 'utf8')).not.toContain('s3cret');
    const files = await provisionedAs(dir, env);
    expect(grafanaRefusals(files)).toEqual([]);
    expect(files.get('kalypso-contact-point.yaml')!['contactPoints']).toEqual([
      { orgId: 1, name: CONTACT_POINT, receivers: [{ uid: 'kalypso-alerts', type: 'webhook', settings: { url: env.KALYPSO_ALERT_WEBHOOK_URL, httpMethod: 'POST' }, disableResolveMessage: false }] },
    ]);
    const rules = files.get('kalypso-alerts.yaml')!['groups'].flatMap((group: Json) => group['rules']);
    for (const rule of rules) {
      expect(rule['notification_settings']).toEqual({ receiver: CONTACT_POINT, group_by: ['grafana_folder', 'alertname'] });
      const spec = ALERT_RULES.find((candidate) => candidate.uid === rule['uid'])!;
      const labels = { ...rule['labels'], ...sampleLabels(spec.labels) };
      expect(render(rule['annotations']['runbook_url'], labels, 1)).toBe(`https://wiki.example/kalypso#${spec.runbook}`);
      // The trailing slash of the public URL is not doubled.
      expect(render(rule['annotations']['hub_url'], labels, 1)).toMatch(/^https:\/\/kalypso\.example\/[a-z]/);
    }
    // The routed rules are the same rules.
    const silent = (await provisionedAs(ALERTING_DIR, env)).get('kalypso-alerts.yaml')!;
    const withoutRouting = (file: Json): Json =>
      file['groups'].map((group: Json) => ({ ...group, rules: group['rules'].map((rule: Json) => ({ ...rule, notification_settings: undefined })) }));
    expect(withoutRouting(files.get('kalypso-alerts.yaml')!)).toEqual(withoutRouting(silent));
  });

  it.each([
    ['https://hooks.slack.com/services/T0/B0/x', {}, 'slack'],
    ['https://contoso.webhook.office.com/webhookb2/x', {}, 'teams'],
    ['https://prod-01.westeurope.logic.azure.com/workflows/x', {}, 'teams'],
    ['https://alerts.example/hook', { KALYPSO_ALERT_WEBHOOK_TYPE: 'slack' }, 'slack'],
    ['https://hooks.slack.com/services/T0/B0/x', { KALYPSO_ALERT_WEBHOOK_TYPE: 'webhook' }, 'webhook'],
  ] as [string, Env, string][])('sends to %s as %s → a %s integration', async (url, extra, type) => {
    const env = { KALYPSO_ALERT_WEBHOOK_URL: url, ...extra };
    const { dir, code } = await select(env);
    expect(code).toBe(0);
    const files = await provisionedAs(dir, env);
    expect(grafanaRefusals(files)).toEqual([]);
    expect(files.get('kalypso-contact-point.yaml')!['contactPoints'][0].receivers[0]).toMatchObject({ type, settings: { url } });
  });

  it('stops, saying why, on a URL or a type that is set but wrong — rather than dropping alerts silently', async () => {
    const notUrl = await select({ KALYPSO_ALERT_WEBHOOK_URL: 'hooks.example/kalypso' });
    expect(notUrl.code).toBe(1);
    expect(notUrl.stderr).toContain('must be an http(s) URL');
    const badType = await select({ KALYPSO_ALERT_WEBHOOK_URL: 'https://hooks.example/kalypso', KALYPSO_ALERT_WEBHOOK_TYPE: 'pagerduty' });
    expect(badType.code).toBe(1);
    expect(badType.stderr).toContain('must be webhook, slack or teams');
  });

  it('takes the contact point away again when the URL is unset on the next start', async () => {
    const first = await select({ KALYPSO_ALERT_WEBHOOK_URL: 'https://hooks.example/kalypso' });
    await writeFile(path.join(first.dir, 'left-over.yaml'), 'apiVersion: 1\n');
    const second = await select({}, first.dir);
    expect(second.code).toBe(0);
    expect(await readdir(first.dir)).toEqual(['kalypso-alerts.yaml']);
  });
});

describe('Kalypso alert rules, as provisioned', () => {
  const rules = (YAML.parse(alertingFiles().get(path.join(ALERTING_DIR, 'kalypso-alerts.yaml'))!) as Json)['groups'].flatMap((group: Json) => group['rules']) as Json[];

  it.each(ALERT_RULES.map((rule) => [rule.title, rule] as const))('%s: a runbook, a link into the hub and a summary from its own labels', (_title, spec) => {
    const rule = rules.find((candidate) => candidate['uid'] === spec.uid)!;
    expect(Object.keys(rule['annotations']).sort()).toEqual(['description', 'hub_url', 'runbook_url', 'summary']);
    expect(rule).toMatchObject({ noDataState: 'OK', execErrState: 'Error', for: spec.for, labels: { app: 'kalypso', severity: spec.severity } });
    // Templates name only labels the instance has: the query's and the rule's own.
    const known = new Set([...spec.labels, ...Object.keys(rule['labels'])]);
    for (const [key, template] of Object.entries(rule['annotations'] as Record<string, string>)) {
      for (const [, label] of template.matchAll(/\$labels\.(\w+)/g)) expect(known, `${spec.uid} ${key} names ${label}`).toContain(label);
      for (const [, ref] of template.matchAll(/\$values\.(\w+)/g)) expect(ref).toBe('A');
    }
    // Labels are expanded by provisioning: a `$` in them is a variable of ours or written `$$`.
    for (const value of Object.values(rule['labels'] as Record<string, string>)) {
      for (const [reference] of value.replaceAll('$$', '').matchAll(/\$\{?\w+\}?/g)) expect(['${KALYPSO_PUBLIC_URL}', '${KALYPSO_ALERT_RUNBOOK_URL}']).toContain(reference);
    }
    expect(render(rule['annotations']['summary'], sampleLabels(spec.labels), 3)).not.toMatch(/\{\{|\}\}/);
  });

  it('each runbook is a section of docs/alerts.md, where the default runbook URL points', async () => {
    const doc = anchors({ path: 'docs/alerts.md', text: await readFile(path.join(ROOT, 'docs/alerts.md'), 'utf8') });
    for (const spec of ALERT_RULES) expect(doc, spec.uid).toContain(spec.runbook);
    expect(DEFAULT_RUNBOOKS).toMatch(/\/blob\/main\/docs\/alerts\.md$/);
  });

  it('link into the hub’s web UI at the pages and query parameters it reads', async () => {
    const labels = { kalypso_hub_url: 'https://kalypso.example', ...sampleLabels(['environment', 'commit', 'host']) };
    const links: Record<string, string> = Object.fromEntries(rules.map((rule) => [rule['uid'] as string, render(rule['annotations']['hub_url'], labels, 1)]));
    expect(links).toEqual({
      'kalypso-rollout-failed': `https://kalypso.example/rollout?environment=environment+%26+co%2F1&commit=${'a'.repeat(40)}`,
      'kalypso-rollout-not-converged': `https://kalypso.example/rollout?environment=environment+%26+co%2F1&commit=${'a'.repeat(40)}`,
      'kalypso-reconciler-off-commit': 'https://kalypso.example/drift?environment=environment+%26+co%2F1',
      'kalypso-host-offline': 'https://kalypso.example/hosts/host+%26+co%2F1',
      'kalypso-source-silent': 'https://kalypso.example/hosts?offline=true',
    });
    // The UI's router and the parameters its pages read (src/ui/app/).
    const main = await readFile(path.join(ROOT, 'src/ui/app/main.ts'), 'utf8');
    const routes = [...main.matchAll(/\[\/(\^[^\n]*?\$)\/,/g)].map(([, pattern]) => new RegExp(pattern!.replaceAll('\\/', '/')));
    const pages = (await Promise.all((await readdir(path.join(ROOT, 'src/ui/app/pages'))).map((file) => readFile(path.join(ROOT, 'src/ui/app/pages', file), 'utf8')))).join('\n');
    for (const link of Object.values(links)) {
      const url = new URL(link);
      expect(routes.some((route) => route.test(url.pathname)), `${url.pathname} is a page of the UI`).toBe(true);
      for (const name of url.searchParams.keys()) expect(pages, `a page reads ?${name}`).toMatch(new RegExp(`param\\('${name}'\\)|'${name}'`));
    }
  });
});
