// The Grafana dashboards: the committed JSON is what the generator writes, every variable, panel and
// annotation query runs as kalypso_reader against a seeded database (macros and variables expanded
// as Grafana does), and returns the columns the panel refers to. The alert rules: alerts.test.ts.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { DASHBOARD_DIR, DASHBOARDS, DATASOURCE, dashboardText } from '../../scripts/grafana-dashboards.ts';
import type { Database } from '../../src/store/connect.ts';
import { publishHubSettings } from '../../src/store/hub-settings.ts';
import { refreshRollouts } from '../../src/store/rollout-refresh.ts';
import { type Dashboard, type Panel, resolveVariables } from '../support/grafana.ts';
import { foldTransitionCounts, refreshSummaries } from '../../src/store/summary-refresh.ts';
import { writeKnownFleet } from '../support/known-fleet.ts';
import { closeTestDatabase, openTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { customValues, expandGrafanaSql, type TimeRange } from '../../scripts/grafana-sql.ts';

const GRAFANA_DIR = path.dirname(DASHBOARD_DIR);
let testDb: TestDatabase;
let database: Database;
let reader: pg.Client;
let range: TimeRange;

beforeAll(async () => {
  ({ testDb, database } = await openTestDatabase(2));
  await publishHubSettings(database.db, { staleAfterMs: 15 * 60_000, environmentOrder: [] });
  await writeKnownFleet(database.db);
  await refreshRollouts(database.db, { wait: true }); // the Delivery dashboard reads the rollouts
  await refreshSummaries(database.db, { wait: true, at: new Date() }); // as a hub's refresher would
  reader = new pg.Client({ connectionString: testDb.url });
  await reader.connect();
  await reader.query('SET ROLE kalypso_reader');
  range = { from: new Date(Date.now() - 7 * 86_400_000), to: new Date(Date.now() + 60_000) };
});

afterAll(async () => {
  await reader.end();
  await closeTestDatabase({ testDb, database });
});

const dashboards = Object.values(DASHBOARDS) as unknown as Dashboard[];
const uids = new Set(dashboards.map((dashboard) => dashboard.uid));

/** Every column a panel names: overrides, transformations, x fields and data links. */
function referencedColumns(panel: Panel): string[] {
  const names = new Set<string>();
  for (const override of panel.fieldConfig.overrides) {
    expect(override.matcher.id, `${panel.title}: overrides match columns by name`).toBe('byName');
    names.add(override.matcher.options);
    for (const property of override.properties) {
      if (property.id !== 'links') continue;
      for (const link of property.value as { url: string }[]) {
        for (const match of link.url.matchAll(/\$\{__data\.fields\.(\w+)\}/g)) names.add(match[1]!);
      }
    }
  }
  for (const transformation of panel.transformations ?? []) {
    for (const key of ['columnField', 'rowField', 'valueField']) if (typeof transformation.options[key] === 'string') names.add(transformation.options[key]);
  }
  if (typeof panel.options['xField'] === 'string') names.add(panel.options['xField']);
  return [...names];
}

describe('Grafana dashboards', () => {
  it('are committed exactly as scripts/grafana-dashboards.ts writes them', async () => {
    const files = (await readdir(DASHBOARD_DIR)).filter((file) => file.endsWith('.json')).sort();
    expect(files).toEqual(Object.keys(DASHBOARDS).sort());
    for (const [file, json] of Object.entries(DASHBOARDS)) {
      expect(await readFile(path.join(DASHBOARD_DIR, file), 'utf8'), `${file} is stale: run npm run grafana:dashboards`).toBe(dashboardText(json));
    }
  });

  it('use the provisioned datasource, link to each other and lay panels out on the grid', async () => {
    const provisioning = YAML.parse(await readFile(path.join(GRAFANA_DIR, 'provisioning/datasources/kalypso.yaml'), 'utf8'));
    expect(provisioning.datasources[0]).toMatchObject({ uid: DATASOURCE.uid, type: DATASOURCE.type });
    expect(dashboards.map((dashboard) => dashboard.title)).toEqual([
      'Kalypso · Deployment Observability',
      'Kalypso · Cluster State',
      'Kalypso · Environment State and History',
      'Kalypso · Drift',
      'Kalypso · Delivery',
    ]);
    for (const dashboard of dashboards) {
      expect(dashboard.tags).toContain('kalypso');
      expect(dashboard.links).toEqual([expect.objectContaining({ type: 'dashboards', tags: ['kalypso'], includeVars: true })]);
      expect(new Set(dashboard.panels.map((panel) => panel.id)).size).toBe(dashboard.panels.length);
      for (const variable of dashboard.templating.list.filter((candidate) => candidate.type === 'custom')) {
        // The options Grafana lists before it parses the query again, and the default among them.
        const values = customValues(variable.query);
        expect(variable.options?.map((option) => option.value), variable.name).toEqual(values);
        expect(values, variable.name).toContain(variable.current?.value);
        expect(variable.options?.filter((option) => option.selected).map((option) => option.value), variable.name).toEqual([variable.current?.value]);
      }
      for (const panel of dashboard.panels) {
        expect(panel.gridPos.x + panel.gridPos.w, panel.title).toBeLessThanOrEqual(24);
        expect(panel.datasource.uid).toBe(DATASOURCE.uid);
        for (const target of panel.targets) expect(target.datasource.uid).toBe(DATASOURCE.uid);
        for (const override of panel.fieldConfig.overrides) {
          for (const link of override.properties.filter((property) => property.id === 'links').flatMap((property) => property.value as { url: string }[])) {
            const uid = /^\/d\/([\w-]+)\//.exec(link.url)?.[1];
            expect(uids.has(uid!), `${panel.title} links to ${link.url}`).toBe(true);
            for (const match of link.url.matchAll(/var-(\w+)=/g)) {
              const linked = dashboards.find((candidate) => candidate.uid === uid)!;
              expect(linked.templating.list.map((variable) => variable.name), link.url).toContain(match[1]);
            }
          }
        }
      }
    }
  });

  it('count state transitions per minute as the history holds them: every host from the counts kept on write, some hosts from their history', async () => {
    const dashboard = dashboards.find((candidate) => candidate.uid === 'kalypso-environment-history')!;
    const panel = dashboard.panels.find((candidate) => candidate.title === 'State transitions')!;
    const fromHistory = async (host: string | undefined) =>
      (
        await reader.query(
          `SELECT floor(extract(epoch from observed_at)/60)*60 AS time, count(*) FILTER (WHERE status = 'success') AS success,
                  count(*) FILTER (WHERE status = 'failure') AS failure, count(*) FILTER (WHERE status = 'in_progress') AS in_progress
             FROM kalypso_environment_history
            WHERE observed_at BETWEEN $1 AND $2 AND environment IS NOT NULL AND ($3::text IS NULL OR host = $3)
            GROUP BY 1 ORDER BY 1`,
          [range.from, range.to, host ?? null],
        )
      ).rows;
    const numbers = (rows: Record<string, unknown>[]) => rows.map((row) => [row['time'], row['success'], row['failure'], row['in_progress']].map(Number));
    const hosts = (await reader.query<{ host: string }>('SELECT DISTINCT host FROM kalypso_environment_history ORDER BY 1')).rows.map((row) => row.host);
    // The counts still queued, then folded in (as the refresh timer does).
    for (const folded of [false, true]) {
      if (folded) expect(await foldTransitionCounts(database.db, null)).toBeGreaterThan(0);
      for (const host of [undefined, hosts[0]!, hosts[hosts.length - 1]!]) {
        const variables = await resolveVariables(reader, dashboard, range, host === undefined ? {} : { host: [host] });
        const drawn = (await reader.query(expandGrafanaSql(panel.targets[0]!.rawSql, variables, range))).rows;
        const expected = numbers(await fromHistory(host));
        expect(expected.length, `history of ${host ?? 'every host'}`).toBeGreaterThan(0);
        expect(numbers(drawn), `State transitions of ${host ?? 'every host'}${folded ? ', folded' : ''}`).toEqual(expected);
      }
    }
  });

  it('show the problems of the tables that grow with the fleet first: targets not settled, hosts in trouble, reconcilers failing, stale, in progress', async () => {
    const rowsOf = async (uid: string, title: string) => {
      const dashboard = dashboards.find((candidate) => candidate.uid === uid)!;
      const panel = dashboard.panels.find((candidate) => candidate.title === title)!;
      const variables = await resolveVariables(reader, dashboard, range);
      return (await reader.query<Record<string, unknown>>(expandGrafanaSql(panel.targets[0]!.rawSql, variables, range))).rows;
    };
    // Each table's rows against the same rows from the view, ordered by the rule the description states.
    const targets = await rowsOf('kalypso-deployment-observability', 'Environment state');
    const expectedTargets = (
      await reader.query<{ environment: string; deployment_target: string; workload: string; status: string }>(
        'SELECT environment, workload, deployment_target, status FROM kalypso_environment_state ORDER BY environment_order, workspace, application, workload, deployment_target',
      )
    ).rows;
    const settled = (row: { status: unknown }) => row.status === 'success';
    expect(expectedTargets.some(settled) && !expectedTargets.every(settled), 'the known fleet has targets settled and not').toBe(true);
    expect(targets.map((row) => [row['environment'], row['workload'], row['status']])).toEqual(
      [...expectedTargets.filter((row) => !settled(row)), ...expectedTargets.filter(settled)].map((row) => [row.environment, row.workload, row.status]),
    );

    const hosts = await rowsOf('kalypso-cluster-state', 'Hosts');
    const troubled = (row: Record<string, unknown>) => row['offline'] === true || [row['failed'], row['stale'], row['drifting']].some((n) => Number(n) > 0);
    const expectedHosts = (await reader.query<Record<string, unknown>>('SELECT host, offline, failed, stale, drifting FROM kalypso_host_summary ORDER BY host')).rows;
    expect(expectedHosts.some(troubled) && !expectedHosts.every(troubled), 'the known fleet has hosts in trouble and not').toBe(true);
    expect(hosts.map((row) => row['host'])).toEqual([...expectedHosts.filter(troubled), ...expectedHosts.filter((row) => !troubled(row))].map((row) => row['host']));

    const reconcilers = await rowsOf('kalypso-cluster-state', 'Reconcilers');
    const rank = ['failure', 'stale', 'in_progress', 'success'];
    const expectedReconcilers = (await reader.query<Record<string, unknown>>('SELECT host, reconciler, status FROM kalypso_host_state ORDER BY host, reconciler, environment_order')).rows;
    expect(new Set(expectedReconcilers.map((row) => row['status'])), 'the known fleet has reconcilers of every status').toEqual(new Set(rank));
    const ranked = rank.flatMap((status) => expectedReconcilers.filter((row) => row['status'] === status));
    expect(reconcilers.map((row) => [row['host'], row['reconciler'], row['status']])).toEqual(ranked.map((row) => [row['host'], row['reconciler'], row['status']]));
  });

  it('count the rollouts assigned per environment as the rollout events list them, for every environment or one', async () => {
    const dashboard = dashboards.find((candidate) => candidate.uid === 'kalypso-environment-history')!;
    const panel = dashboard.panels.find((candidate) => candidate.title === 'Rollouts per environment')!;
    for (const chosen of [{}, { environment: ['prod'] }] as Record<string, string[]>[]) {
      const variables = await resolveVariables(reader, dashboard, range, chosen);
      const drawn = (await reader.query(expandGrafanaSql(panel.targets[0]!.rawSql, variables, range))).rows;
      const events = await reader.query(
        `SELECT floor(extract(epoch from time)/60)*60 AS time, environment, count(*) AS rollouts
           FROM kalypso_rollout_event
          WHERE event = 'assigned' AND time BETWEEN $1 AND $2 AND ($3::text IS NULL OR environment = $3)
          GROUP BY 1, environment, environment_order ORDER BY 1, environment_order`,
        [range.from, range.to, chosen['environment']?.[0] ?? null],
      );
      const numbers = (rows: Record<string, unknown>[]) => rows.map((row) => [Number(row['time']), row['environment'], Number(row['rollouts'])]);
      expect(events.rows.length, JSON.stringify(chosen)).toBeGreaterThan(0);
      expect(numbers(drawn), JSON.stringify(chosen)).toEqual(numbers(events.rows));
    }
  });

  it('narrow Cluster State to the hosts of the environments chosen when every host is, and name no host in the SQL at All', async () => {
    const dashboard = dashboards.find((candidate) => candidate.uid === 'kalypso-cluster-state')!;
    const sqlOf = (title: string) => dashboard.panels.find((candidate) => candidate.title === title)!.targets[0]!.rawSql;
    const everyHost = (await reader.query<{ host: string }>('SELECT host FROM kalypso_host_summary ORDER BY 1')).rows.map((row) => row.host);
    for (const environment of [undefined, 'dev', 'prod']) {
      const variables = await resolveVariables(reader, dashboard, range, environment === undefined ? {} : { environment: [environment] });
      const expanded = expandGrafanaSql(sqlOf('Hosts'), variables, range);
      // At All and All no host is named: the planner is handed no list of the fleet.
      if (environment === undefined) for (const host of everyHost) expect(expanded).not.toContain(`'${host}'`);
      const hosts = (await reader.query<{ host: string }>(expanded)).rows.map((row) => row.host).sort();
      const expected = environment === undefined
        ? everyHost
        : (await reader.query<{ host: string }>(
            'SELECT DISTINCT host FROM kalypso_host_state WHERE environment = $1 OR environment IS NULL ORDER BY 1', [environment])).rows.map((row) => row.host);
      expect(expected.length).toBeGreaterThan(0);
      if (environment !== undefined) expect(expected.length, `the known fleet has hosts outside ${environment}`).toBeLessThan(everyHost.length);
      expect(hosts, environment ?? 'every environment').toEqual(expected);
      const reconcilers = (await reader.query<{ host: string }>(expandGrafanaSql(sqlOf('Reconcilers'), variables, range))).rows;
      const expectedReconcilers = await reader.query('SELECT count(*)::int AS n FROM kalypso_host_state WHERE host = ANY ($1)', [expected]);
      expect(reconcilers.length).toBe(expectedReconcilers.rows[0].n);
    }
    // One host chosen: that host.
    const [host] = (await reader.query<{ host: string }>("SELECT host FROM kalypso_host_state WHERE environment = 'prod' ORDER BY 1 LIMIT 1")).rows.map((row) => row.host);
    const one = await resolveVariables(reader, dashboard, range, { environment: ['prod'], host: [host!] });
    expect((await reader.query<{ host: string }>(expandGrafanaSql(sqlOf('Hosts'), one, range))).rows.map((row) => row.host)).toEqual([host]);
  });

  describe.each(dashboards.map((dashboard) => [dashboard.title, dashboard] as const))('%s', (_title, dashboard) => {
    it.each(dashboard.panels.map((panel) => [panel.title, panel] as const))(
      'panel "%s" runs as kalypso_reader and returns the columns it names',
      async (_panelTitle, panel) => {
        for (const chosen of [{}, { environment: ['prod'] }] as Record<string, string[]>[]) {
          const variables = await resolveVariables(reader, dashboard, range, dashboard.templating.list.some((v) => v.name === 'environment') ? chosen : {});
          for (const target of panel.targets) {
            const result = await reader.query(expandGrafanaSql(target.rawSql, variables, range));
            const columns = result.fields.map((field) => field.name);
            expect(result.rows.length, `${panel.title} returns rows for ${JSON.stringify(chosen)}`).toBeGreaterThan(0);
            for (const name of referencedColumns(panel)) expect(columns, `${panel.title} names ${name}`).toContain(name);
            if (target.format === 'time_series') {
              expect(columns[0]).toBe('time');
              for (const row of result.rows) expect(Number.isFinite(Number(row.time))).toBe(true);
            }
          }
        }
      },
    );

    it.each(dashboard.annotations.list.map((annotation) => [annotation.name, annotation] as const))(
      'annotation "%s" runs as kalypso_reader and returns Grafana’s annotation columns',
      async (_name, annotation) => {
        expect(annotation.datasource.uid).toBe(DATASOURCE.uid);
        expect(annotation.target.datasource.uid).toBe(DATASOURCE.uid);
        for (const chosen of [{}, { environment: ['prod'] }] as Record<string, string[]>[]) {
          const variables = await resolveVariables(reader, dashboard, range, chosen);
          const result = await reader.query(expandGrafanaSql(annotation.target.rawSql, variables, range));
          const columns = result.fields.map((field) => field.name);
          expect(columns).toEqual(expect.arrayContaining(['time', 'text', 'tags']));
          for (const row of result.rows) {
            expect(row.time, annotation.name).toBeInstanceOf(Date);
            if (columns.includes('timeend')) expect((row.timeend as Date).getTime()).toBeGreaterThanOrEqual((row.time as Date).getTime());
            expect(typeof row.text).toBe('string');
            expect(String(row.tags).split(',')).toEqual(expect.arrayContaining(['rollout']));
            if (chosen['environment'] !== undefined) expect(String(row.tags).split(',')).toContain('prod');
          }
          // The known fleet has rollouts assigned, converged and failed (greeter-api in dev) in range.
          if (chosen['environment'] === undefined) expect(result.rows.length, `${annotation.name} finds rollouts`).toBeGreaterThan(0);
        }
      },
    );
  });

  it('mark rollouts assigned, converged and failed on every dashboard', () => {
    for (const dashboard of dashboards) {
      expect(dashboard.annotations.list.map((annotation) => annotation.name), dashboard.title).toEqual(['Rollouts assigned', 'Rollouts converged', 'Rollouts failed']);
    }
  });
});
