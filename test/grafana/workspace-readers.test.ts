// Grafana scoped to workspaces: kalypso_workspace_reader (schema/0030) gives a team's login a schema
// of views cut to its workspaces and puts it first on the login's search_path, so the provisioned
// dashboards run unchanged. Logged in as such a role, every panel of every dashboard runs and none
// shows another workspace's names: the functions the dashboards call with a workspace filter (the
// Delivery dashboard's kalypso_delivery_*, State transitions' counts) are the team's own copies
// (schema/0034), asking the hub's for the team's workspaces only; the unscoped views and the tables
// are out of its reach.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARDS } from '../../scripts/grafana-dashboards.ts';
import type { TimeRange } from '../../scripts/grafana-sql.ts';
import { publishHubSettings } from '../../src/store/hub-settings.ts';
import { refreshRollouts } from '../../src/store/rollout-refresh.ts';
import { refreshSummaries } from '../../src/store/summary-refresh.ts';
import type { Dashboard } from '../support/grafana.ts';
import { panelRows } from '../support/grafana.ts';
import { FleetBuilder } from '../support/known-fleet.ts';
import { randomCommit, randomName } from '../support/random-ids.ts';
import { closeTestDatabase, openTestDatabase, type PooledTestDatabase } from '../support/test-database.ts';

let opened: PooledTestDatabase;
let team: pg.Client;
const ROLE = `team_${randomBytes(4).toString('hex')}`;
const PASSWORD = randomBytes(12).toString('hex');
const A = { workspace: randomName('ws-a'), application: randomName('app-a'), workload: randomName('wl-a'), target: 'main' };
const B = { workspace: randomName('ws-b'), application: randomName('app-b'), workload: randomName('wl-b'), target: randomName('tgt-b') };
const HOST_B = randomName('host-b');
const range: TimeRange = { from: new Date(Date.now() - 7 * 86_400_000), to: new Date(Date.now() + 60_000) };

beforeAll(async () => {
  opened = await openTestDatabase(2);
  const { testDb, database } = opened;
  await publishHubSettings(database.db, { staleAfterMs: 15 * 60_000, environmentOrder: [] });
  const f = new FleetBuilder(database.db);
  const [aDev, bDev, aProd, bProd] = [randomCommit(), randomCommit(), randomCommit(), randomCommit()];
  await f.write([f.descriptor(A, 'dev', '1.0.0', aDev, 60), f.descriptor(B, 'dev', '2.0.0', bDev, 50)]);
  await f.write([f.descriptor(A, 'prod', '0.9.0', aProd, 40), f.descriptor(B, 'prod', '1.9.0', bProd, 30)]);
  await f.write([
    f.state('host-a1', A, 'dev', aDev, 'success', 5),
    f.state(HOST_B, B, 'dev', bDev, 'failure', 4, 'failed'),
    f.state('host-a2', A, 'prod', aProd, 'success', 3),
    f.state(HOST_B, B, 'prod', bProd, 'in_progress', 2),
  ]);
  await refreshRollouts(database.db, { wait: true });
  await refreshSummaries(database.db, { wait: true, at: new Date() });
  await testDb.query(`CREATE ROLE ${ROLE} LOGIN PASSWORD '${PASSWORD}'`);
  await testDb.query('SELECT kalypso_workspace_reader($1, $2)', [ROLE, [A.workspace]]);
  const url = new URL(testDb.url);
  url.username = ROLE;
  url.password = PASSWORD;
  team = new pg.Client({ connectionString: url.toString() });
  await team.connect();
}, 60_000);

afterAll(async () => {
  await team?.end();
  await opened?.testDb.query(`DROP OWNED BY ${ROLE}`);
  await closeTestDatabase(opened);
  // The role is the cluster's: dropped once its database is gone.
  const { inject } = await import('vitest');
  const admin = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
  await admin.connect();
  await admin.query(`DROP ROLE IF EXISTS ${ROLE}`);
  await admin.end();
});

describe('per-workspace readers for Grafana', () => {
  it('runs every panel of every dashboard as the team, showing none of another workspace’s names', async () => {
    let panels = 0;
    let rowsSeen = 0;
    const refused: string[] = [];
    for (const dashboard of Object.values(DASHBOARDS) as unknown as Dashboard[]) {
      for (const panel of dashboard.panels.filter((candidate) => candidate.targets?.[0]?.rawSql !== undefined)) {
        const rows = await panelRows(team, dashboard, panel.title, range).catch((error: Error) => {
          refused.push(`${dashboard.uid} / ${panel.title}: ${error.message}`);
          return [];
        });
        panels += 1;
        rowsSeen += rows.length;
        const text = JSON.stringify(rows);
        for (const name of [B.workspace, B.application, B.workload, B.target, HOST_B]) expect(text, `${dashboard.uid} / ${panel.title}`).not.toContain(name);
      }
    }
    expect(refused).toEqual([]);
    expect(panels).toBeGreaterThan(10);
    expect(rowsSeen).toBeGreaterThan(0);
    const own = await team.query('SELECT DISTINCT workspace FROM kalypso_environment_state');
    expect(own.rows).toEqual([{ workspace: A.workspace }]);
  });

  it('counts the State transitions panel’s transitions over the team’s workspaces only, whatever the variable asks', async () => {
    const SUMS = `SELECT coalesce(sum(success), 0) AS success, coalesce(sum(failure), 0) AS failure, coalesce(sum(in_progress), 0) AS in_progress
                    FROM kalypso_transition_counts($1, $2, NULL, $3::text[], NULL)`;
    type Sums = { success: string; failure: string; in_progress: string };
    const numbers = (row: Sums): number[] => [Number(row.success), Number(row.failure), Number(row.in_progress)];
    const sums = async (client: pg.Client, workspaces: string[] | null): Promise<number[]> =>
      numbers((await client.query<Sums>(SUMS, [range.from, range.to, workspaces])).rows[0]!);
    // The fleet: A's two successes, B's failure and B's rollout in progress.
    expect(numbers((await opened.testDb.query<Sums>(SUMS, [range.from, range.to, null]))[0]!)).toEqual([2, 1, 1]);
    // The team: All is A's; asking for B gives nothing, asking for both gives A's.
    expect(await sums(team, null)).toEqual([2, 0, 0]);
    expect(await sums(team, [B.workspace])).toEqual([0, 0, 0]);
    expect(await sums(team, [A.workspace, B.workspace])).toEqual([2, 0, 0]);
  });

  it('answers the Delivery dashboard’s functions over the team’s workspaces only, whatever the variable asks', async () => {
    const ROLLOUTS = 'SELECT coalesce(sum(rollouts), 0)::int AS rollouts FROM kalypso_delivery_outcomes($1, $2, NULL, $3::text[])';
    const rollouts = async (client: pg.Client, workspaces: string[] | null): Promise<number> =>
      (await client.query<{ rollouts: number }>(ROLLOUTS, [range.from, range.to, workspaces])).rows[0]!.rollouts;
    // The fleet: A's two rollouts (dev, prod) and B's two.
    expect((await opened.testDb.query<{ rollouts: number }>(ROLLOUTS, [range.from, range.to, null]))[0]!.rollouts).toBe(4);
    expect(await rollouts(team, null)).toBe(2);
    expect(await rollouts(team, [B.workspace])).toBe(0);
    expect(await rollouts(team, [A.workspace, B.workspace])).toBe(2);
    // The newest rollouts, named: the team's alone, called as the dashboard calls it (defaults for the rest).
    const named = await team.query<{ workspace: string }>('SELECT workspace FROM kalypso_delivery_rollouts($1, $2)', [range.from, range.to]);
    expect(named.rows.map((row) => row.workspace)).toEqual([A.workspace, A.workspace]);
    // The hub's own functions stay Grafana's role's, not the team's.
    const home = (await opened.testDb.query<{ s: string }>('SELECT current_schema() AS s'))[0]!.s;
    await expect(team.query(`SELECT * FROM ${home}.kalypso_delivery_totals($1, $2)`, [range.from, range.to])).rejects.toThrow(/permission denied/);
  });

  it('keeps the unscoped views and the tables out of the team’s reach', async () => {
    const schema = (await team.query<{ s: string }>('SELECT current_schemas(false)::text AS s')).rows[0]!.s;
    expect(schema).toContain(`kalypso_ws_${ROLE}`);
    const home = (await opened.testDb.query<{ s: string }>('SELECT current_schema() AS s'))[0]!.s;
    for (const relation of [`${home}.kalypso_environment_state`, `${home}.deployment_target`, `${home}.host`]) {
      await expect(team.query(`SELECT 1 FROM ${relation} LIMIT 1`), relation).rejects.toThrow(/permission denied/);
    }
    await expect(team.query(`SELECT kalypso_workspace_reader('x'::name, ARRAY['y'])`)).rejects.toThrow(/permission denied/);
  });
});
