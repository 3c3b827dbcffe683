// Each Grafana alert rule's query (deploy/grafana/provisioning/alerting/kalypso-alerts.yaml), run as
// kalypso_reader the way Grafana's "alert on numeric data" reads it — text columns are an instance's
// labels, the one numeric column its value, no row is no data — against a fleet where every rule must
// fire, for rows known from how the fleet was built (test/support/alert-fleet.ts), and against a
// healthy fleet where none may. The thresholds the hub publishes (--rollout-window,
// --off-commit-after) move what fires.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { ALERT_RULES, ALERTING_DIR } from '../../scripts/grafana-alerts.ts';
import { DATASOURCE } from '../../scripts/grafana-dashboards.ts';
import { expandGrafanaSql } from '../../scripts/grafana-sql.ts';
import type { Database } from '../../src/store/connect.ts';
import { publishHubSettings } from '../../src/store/hub-settings.ts';
import { refreshRollouts } from '../../src/store/rollout-refresh.ts';
import { refreshSummaries } from '../../src/store/summary-refresh.ts';
import { type AlertFleet, writeFiringFleet, writeHealthyFleet } from '../support/alert-fleet.ts';
import { closeTestDatabase, openTestDatabase, type TestDatabase } from '../support/test-database.ts';

const STALE_AFTER_MS = 15 * 60_000;
const FLOAT8 = 701;
const TEXT = 25;

interface Opened {
  testDb: TestDatabase;
  database: Database;
  reader: pg.Client;
  fleet: AlertFleet;
}

let firing: Opened;
let healthy: Opened;

async function open(write: (db: Database['db']) => Promise<AlertFleet>): Promise<Opened> {
  const { testDb, database } = await openTestDatabase(2);
  await publishHubSettings(database.db, { staleAfterMs: STALE_AFTER_MS, environmentOrder: [] });
  const fleet = await write(database.db);
  // As a hub's refreshers would, before Grafana reads.
  await refreshRollouts(database.db, { wait: true });
  await refreshSummaries(database.db, { wait: true, at: new Date() });
  const reader = new pg.Client({ connectionString: testDb.url });
  await reader.connect();
  await reader.query('SET ROLE kalypso_reader');
  return { testDb, database, reader, fleet };
}

beforeAll(async () => {
  firing = await open((db) => writeFiringFleet(db));
  healthy = await open((db) => writeHealthyFleet(db));
});

afterAll(async () => {
  for (const opened of [firing, healthy]) {
    await opened.reader.end();
    await closeTestDatabase(opened);
  }
});

interface ProvisionedRule {
  uid: string;
  title: string;
  condition: string;
  data: { refId: string; datasourceUid: string; model: { rawSql?: string; format?: string; expression?: string; type?: string } }[];
}

const provisioned: ProvisionedRule[] = (YAML.parse(await readFile(path.join(ALERTING_DIR, 'kalypso-alerts.yaml'), 'utf8')) as { groups: { rules: ProvisionedRule[] }[] }).groups.flatMap(
  (group) => group.rules,
);

/** An alert instance as Grafana makes it from a row: its labels and its value. */
interface Instance {
  readonly labels: Record<string, string>;
  readonly value: number;
}

/** The instances rule `uid` finds, read as kalypso_reader from the provisioned file's query. */
async function instances(reader: pg.Client, uid: string): Promise<Instance[]> {
  const rule = provisioned.find((candidate) => candidate.uid === uid)!;
  const query = rule.data.find((entry) => entry.datasourceUid === DATASOURCE.uid)!;
  expect(query.model.format).toBe('table');
  const result = await reader.query(expandGrafanaSql(query.model.rawSql!, new Map(), { from: new Date(Date.now() - 600_000), to: new Date() }));
  const spec = ALERT_RULES.find((candidate) => candidate.uid === uid)!;
  // One numeric column, every other one text: Grafana's shape for one alert instance per row.
  expect(result.fields.filter((field) => field.dataTypeID === FLOAT8).map((field) => field.name), uid).toEqual([spec.value]);
  expect(result.fields.filter((field) => field.dataTypeID === TEXT).map((field) => field.name), uid).toEqual(spec.labels);
  expect(result.fields).toHaveLength(spec.labels.length + 1);
  const found = result.rows.map((row: Record<string, unknown>) => ({
    labels: Object.fromEntries(spec.labels.map((label) => [label, row[label] as string])),
    value: row[spec.value] as number,
  }));
  // Two rows with one label set would be one instance twice: Grafana fails the evaluation.
  expect(new Set(found.map((instance) => JSON.stringify(instance.labels))).size, uid).toBe(found.length);
  for (const instance of found) for (const [label, value] of Object.entries(instance.labels)) expect(value, `${uid} ${label}`).toEqual(expect.any(String));
  return found.sort((a, b) => JSON.stringify(a.labels).localeCompare(JSON.stringify(b.labels)));
}

/** The labels of a rollout's instance. */
function rollout(fleet: AlertFleet, environment: string, workload: string, version: string, commit: string): Record<string, string> {
  return {
    environment,
    workspace: fleet.workspace,
    application: fleet.application,
    workload,
    deployment_target: 'main',
    version,
    commit: fleet.commits[commit]!,
  };
}

describe('Grafana alert rules on a fleet where each must fire', () => {
  it('provisions the five rules, each with its query on the Kalypso datasource and a threshold on it', () => {
    expect(provisioned.map((rule) => rule.uid).sort()).toEqual(ALERT_RULES.map((rule) => rule.uid).sort());
    for (const rule of provisioned) {
      const threshold = rule.data.find((entry) => entry.refId === rule.condition)!;
      expect(threshold.model).toMatchObject({ type: 'threshold', expression: 'A' });
      expect(rule.data.find((entry) => entry.refId === 'A')?.datasourceUid).toBe(DATASOURCE.uid);
    }
  });

  it('rollout failed: one instance per failing rollout, labelled by environment, target, version and commit, valued by the reconcilers failing', async () => {
    const { reader, fleet } = firing;
    expect(await instances(reader, 'kalypso-rollout-failed')).toEqual([{ labels: rollout(fleet, fleet.environments.e, 'payments', '2.0', 'F1'), value: 1 }]);
  });

  it('rollout not converged: the rollouts in progress past the 30-minute window that never converged, valued by the reconcilers still pending', async () => {
    const { reader, fleet } = firing;
    const { e, e2 } = fleet.environments;
    expect(await instances(reader, 'kalypso-rollout-not-converged')).toEqual(
      [
        // aks-4 still on v1.
        { labels: rollout(fleet, e, 'catalog', '2.0', 'C1'), value: 1 },
        // aks-5 still on v1, aks-6 silent.
        { labels: rollout(fleet, e2, 'search', '2.0', 'S1'), value: 2 },
      ].sort((a, b) => JSON.stringify(a.labels).localeCompare(JSON.stringify(b.labels))),
    );
  });

  it('reconciler off its desired commit: the reporting reconcilers off it for more than an hour, one per host and reconciler, valued in minutes', async () => {
    const { reader, fleet } = firing;
    expect(await instances(reader, 'kalypso-reconciler-off-commit')).toEqual([
      {
        labels: {
          environment: fleet.environments.e2,
          workspace: fleet.workspace,
          application: fleet.application,
          workload: 'search',
          deployment_target: 'main',
          host: fleet.hosts['aks-5']!,
          reconciler: 'flux-system/search',
          desired_version: '2.0',
        },
        value: 90,
      },
    ]);
  });

  it('host offline: one instance per silent host that still has reconcilers, valued in minutes of silence', async () => {
    const { reader, fleet } = firing;
    expect(await instances(reader, 'kalypso-host-offline')).toEqual(
      [
        { labels: { host: fleet.hosts['aks-6']!, host_type: 'k8s-cluster', environments: fleet.environments.e2 }, value: 40 },
        { labels: { host: fleet.hosts['arc-7']!, host_type: 'arc-cluster', environments: fleet.environments.e }, value: 30 },
      ].sort((a, b) => JSON.stringify(a.labels).localeCompare(JSON.stringify(b.labels))),
    );
  });

  it('source failing: the Resource Graph source none of whose reconcilers was confirmed within stale-after, not the one polling', async () => {
    const { reader, fleet } = firing;
    expect(await instances(reader, 'kalypso-source-silent')).toEqual([
      { labels: { source_type: 'azure-resource-graph', source_name: fleet.sources.failing }, value: 30 },
    ]);
  });

  it('fires by the thresholds the hub published: a longer rollout window, a shorter off-commit threshold', async () => {
    const { reader, fleet, database } = firing;
    await publishHubSettings(database.db, { staleAfterMs: STALE_AFTER_MS, environmentOrder: [], rolloutWindowMs: 60 * 60_000, offCommitAfterMs: 30 * 60_000 });
    try {
      // catalog's 45 minutes are within an hour's window.
      expect((await instances(reader, 'kalypso-rollout-not-converged')).map((instance) => instance.labels['workload'])).toEqual(['search']);
      // aks-4's 45 minutes off catalog's desired commit are past half an hour.
      const off = (await instances(reader, 'kalypso-reconciler-off-commit')).map((instance) => `${instance.labels['host']}=${instance.value}`);
      expect(off.sort()).toEqual([`${fleet.hosts['aks-4']}=45`, `${fleet.hosts['aks-5']}=90`]);
    } finally {
      await publishHubSettings(database.db, { staleAfterMs: STALE_AFTER_MS, environmentOrder: [] });
    }
    expect(await instances(reader, 'kalypso-rollout-not-converged')).toHaveLength(2);
  });
});

describe('Grafana alert rules on a healthy fleet', () => {
  it.each(ALERT_RULES.map((rule) => [rule.title, rule.uid] as const))('%s: no row (no data, which the rule reads as OK)', async (_title, uid) => {
    expect(await instances(healthy.reader, uid)).toEqual([]);
  });

  it('is a fleet with rollouts, a failure on the way, a source and a removed host — not an empty one', async () => {
    const { rows } = await healthy.reader.query<{ event: string; n: number }>('SELECT event, count(*)::int AS n FROM kalypso_rollout_event GROUP BY event ORDER BY event');
    expect(rows).toEqual([
      { event: 'assigned', n: 7 },
      { event: 'converged', n: 4 },
      { event: 'failed', n: 1 },
    ]);
    expect((await healthy.reader.query('SELECT status FROM kalypso_current_rollout ORDER BY status')).rows.map((row: { status: string }) => row.status)).toEqual([
      'in_progress',
      'succeeded',
      'succeeded',
      'succeeded',
    ]);
    expect((await healthy.reader.query('SELECT source_name, silent FROM kalypso_polled_source')).rows).toEqual([{ source_name: healthy.fleet.sources.polling, silent: false }]);
    expect((await healthy.reader.query('SELECT offline, reconcilers FROM kalypso_host_summary WHERE host = $1', [healthy.fleet.hosts['aks-9']])).rows).toEqual([
      { offline: true, reconcilers: 0 },
    ]);
  });
});
