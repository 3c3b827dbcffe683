// Promotion order (--environment-order): the configured environments first, in the configured
// order; all others after them, in the order the hub first saw them — in the API, in the reporting
// views and in Grafana's queries alike, and as published by the hub that started last.
//
// Environment names are random, and every expected order below is reverse alphabetical, so neither
// name order nor the ids (a write inserts new environments in name order) can pass by accident.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_DIR } from '../../scripts/grafana-dashboards.ts';
import { expandGrafanaSql } from '../../scripts/grafana-sql.ts';
import type { RunningHub } from '../../src/hub.ts';
import type { Dashboard } from '../support/grafana.ts';
import { descriptorLog, stateLog } from '../support/kalypso-logs.ts';
import { buildLogRecords, createExporter, ExportResultCode, exportLogs, type LogSpec } from '../support/otlp-client.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';

/** `count` random environment names, in reverse alphabetical order. */
function randomEnvironments(count: number): string[] {
  return Array.from({ length: count }, () => `env-${randomUUID().slice(0, 8)}`).sort().reverse();
}

// L1, L2: listed in the setting (L1 first). U1…U4: not listed; first seen in this order.
const [L1, L2, U1, U2, U3, U4] = randomEnvironments(6) as [string, string, string, string, string, string];
const T0 = Date.now() - 60 * 60_000;
const minutes = (n: number): Date => new Date(T0 + n * 60_000);

let testDb: TestDatabase;
const hubs: RunningHub[] = [];

async function start(flags: readonly string[] = []): Promise<RunningHub> {
  const hub = await startTestHub(testDb.url, flags);
  hubs.push(hub);
  return hub;
}

async function stop(hub: RunningHub): Promise<void> {
  await hub.stop();
  hubs.splice(hubs.indexOf(hub), 1);
}

async function get(hub: RunningHub, route: string): Promise<any> {
  const response = await fetch(`http://127.0.0.1:${hub.ports.http}/api/v1${route}`);
  expect(response.status, route).toBe(200);
  return response.json();
}

/** One OTLP/HTTP request carrying all `logs`, in this order. */
async function send(hub: RunningHub, logs: LogSpec[]): Promise<void> {
  const exporter = createExporter('http-protobuf', { otlpGrpc: hub.ports.otlpGrpc, otlpHttp: hub.ports.otlpHttp });
  try {
    const result = await exportLogs(exporter, await buildLogRecords(logs));
    expect(result.code, String(result.error)).toBe(ExportResultCode.SUCCESS);
  } finally {
    await exporter.shutdown();
  }
}

// hello-world/functional-test in each environment, on that environment's branch.
const commitOf = (environment: string, version: string) => `c-${environment}-${version}`;
const descriptor = (environment: string, version: string, at: Date): LogSpec =>
  descriptorLog({ environment, endpointBranch: environment, version, commit: commitOf(environment, version), at });
const endpointOf = (environment: string) => `https://github.com/contoso/hello-world-gitops/${environment}/functional-test`;

const environmentNames = async (hub: RunningHub): Promise<string[]> =>
  (await get(hub, '/environments')).items.map((environment: { name: string }) => environment.name);

beforeAll(async () => {
  testDb = await createTestDatabase();
});

afterAll(async () => {
  for (const hub of [...hubs].reverse()) await hub.stop();
  await testDb.drop();
});

describe('promotion order', () => {
  it('puts the configured environments first and the others in the order first seen', async () => {
    const hub = await start(['--environment-order', `${L1},${L2}`]);
    // One request creates U2, U3, L2 and U1. Within it they rank by the earliest record time naming
    // each — U1 (its second descriptor is the earliest of all), L2, then U2 and U3, which tie on
    // time and keep their positions.
    await send(hub, [
      descriptor(U2, '1.0.0', minutes(10)),
      descriptor(U3, '1.0.0', minutes(10)),
      descriptor(L2, '1.0.0', minutes(-30)),
      descriptor(U1, '2.0.0', minutes(20)),
      descriptor(U1, '1.0.0', minutes(-40)),
    ]);
    // A later request: U4 follows them although its record is older than all of theirs.
    await send(hub, [descriptor(U4, '1.0.0', minutes(-600)), descriptor(L1, '1.0.0', minutes(-45))]);

    const { items } = await get(hub, '/environments');
    expect(items.map((environment: { name: string; promotionRank: number | null }) => [environment.name, environment.promotionRank])).toEqual([
      [L1, 1],
      [L2, 2],
      [U1, null],
      [U2, null],
      [U3, null],
      [U4, null],
    ]);
  });

  it('orders the reporting views the same way, and compare’s previous environment follows it', async () => {
    const order = await testDb.query<{ environment: string; environment_order: string }>(
      'SELECT environment, environment_order FROM kalypso_environment_state ORDER BY environment_order',
    );
    expect(order.map((row) => row.environment)).toEqual([L1, L2, U1, U2, U3, U4]);
    expect(order.map((row) => Number(row.environment_order))).toEqual([1, 2, 3, 4, 5, 6]);

    const rows = await testDb.query<{ environment: string; desired_version: string; previous_environment: string | null; differs_from_previous: boolean }>(
      `SELECT environment, desired_version, previous_environment, differs_from_previous
         FROM kalypso_environment_discrepancy WHERE workload = 'hello-world' AND deployment_target = 'functional-test'
        ORDER BY environment_order`,
    );
    expect(rows).toEqual([
      { environment: L1, desired_version: '1.0.0', previous_environment: null, differs_from_previous: false },
      { environment: L2, desired_version: '1.0.0', previous_environment: L1, differs_from_previous: false },
      // U1's newest assignment is 2.0.0.
      { environment: U1, desired_version: '2.0.0', previous_environment: L2, differs_from_previous: true },
      { environment: U2, desired_version: '1.0.0', previous_environment: U1, differs_from_previous: true },
      { environment: U3, desired_version: '1.0.0', previous_environment: U2, differs_from_previous: false },
      { environment: U4, desired_version: '1.0.0', previous_environment: U3, differs_from_previous: false },
    ]);
  });

  it('lists environments in that order wherever the API and Grafana list them', async () => {
    const [hub] = hubs as [RunningHub];
    // A host pulling from three environments, reported in yet another order.
    await send(hub, [
      stateLog({ host: 'multi-env', reconciler: 'flux-system/u3', endpoint: endpointOf(U3), commit: commitOf(U3, '1.0.0'), at: minutes(50) }),
      stateLog({ host: 'multi-env', reconciler: 'flux-system/l2', endpoint: endpointOf(L2), commit: commitOf(L2, '1.0.0'), at: minutes(50) }),
      stateLog({ host: 'multi-env', reconciler: 'flux-system/u1', endpoint: endpointOf(U1), commit: commitOf(U1, '1.0.0'), at: minutes(50) }),
    ]);
    const host = (await get(hub, '/hosts')).items.find((item: { name: string }) => item.name === 'multi-env');
    expect(host.environments).toEqual([L2, U1, U3]);
    const compare = await get(hub, `/compare?environments=${[U4, L1, U1].join(',')}`);
    expect(compare.environments).toEqual([U4, L1, U1]); // compare keeps the order asked for

    const reader = new pg.Client({ connectionString: testDb.url });
    await reader.connect();
    try {
      await reader.query('SET ROLE kalypso_reader');
      const range = { from: minutes(-24 * 60), to: new Date(Date.now() + 60_000) };
      for (const file of ['deployment-observability.json', 'cluster-state.json', 'environment-state-and-history.json', 'drift.json', 'delivery.json']) {
        const dashboard = JSON.parse(await readFile(path.join(DASHBOARD_DIR, file), 'utf8')) as Dashboard;
        const variable = dashboard.templating.list.find((candidate) => candidate.name === 'environment')!;
        const offered = (await reader.query<{ environment: string }>(expandGrafanaSql(variable.query, new Map(), range))).rows;
        expect(offered.map((row) => row.environment), file).toEqual([L1, L2, U1, U2, U3, U4]);
      }
      const clusterState = JSON.parse(await readFile(path.join(DASHBOARD_DIR, 'cluster-state.json'), 'utf8')) as Dashboard;
      const hostsPanel = clusterState.panels.find((panel) => panel.title === 'Hosts')!;
      const hosts = await reader.query<{ host: string; environments: string }>(
        expandGrafanaSql(hostsPanel.targets[0]!.rawSql, new Map([['host', ['multi-env']], ['environment', [L2]]]), range),
      );
      expect(hosts.rows.map((row) => [row.host, row.environments])).toEqual([['multi-env', [L2, U1, U3].join(', ')]]);
    } finally {
      await reader.end();
    }
  });

  it('takes the order of the hub that started last, and falls back to the order first seen without one', async () => {
    const [first] = hubs as [RunningHub];
    // A second replica with another order: both now answer with it (they read it from the database).
    const second = await start(['--environment-order', `${U3},${L2}`]);
    const expected = [U3, L2, U1, U2, U4, L1];
    expect(await environmentNames(second)).toEqual(expected);
    expect(await environmentNames(first)).toEqual(expected);
    expect((await get(second, '/environments')).items.map((environment: { promotionRank: number | null }) => environment.promotionRank)).toEqual([
      1,
      2,
      null,
      null,
      null,
      null,
    ]);
    const [settings] = await testDb.query<{ environment_order: string[] }>('SELECT environment_order FROM kalypso_settings');
    expect(settings!.environment_order).toEqual([U3, L2]);
    const previous = await testDb.query<{ environment: string; previous_environment: string | null }>(
      `SELECT environment, previous_environment FROM kalypso_environment_discrepancy WHERE workload = 'hello-world' ORDER BY environment_order`,
    );
    expect(previous.map((row) => row.previous_environment)).toEqual([null, U3, L2, U1, U2, U4]);

    // Restarted without the setting: no explicit order, every environment in the order first seen
    // (the first request created U1, L2, U2, U3 — by record time, then position —; the second U4, then L1).
    await stop(first);
    await stop(second);
    const third = await start();
    expect(await environmentNames(third)).toEqual([U1, L2, U2, U3, U4, L1]);
    expect((await testDb.query<{ environment_order: string[] }>('SELECT environment_order FROM kalypso_settings'))[0]!.environment_order).toEqual([]);
  });
});
