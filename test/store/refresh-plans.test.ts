// The refreshes must not rescan a CTE of many rows once per row of another (schema/0022, 0023).
// PostgreSQL guesses one row for a CTE after a few joins, and then may plan a nested loop that reads
// the inner CTE again for every outer row: the rollout refresh of schema/0016 did that with the
// subscribers and their reports, and took minutes on a fleet of 60,000 subscribers. Whether it does
// depends on the statistics of the moment, so the time of a run cannot show it; the plan's shape can.
// Every statement a refresh runs is planned here (auto_explain, nested statements) and its nested
// loops are inspected: the inner side of a loop may scan a CTE of one row per refreshed rollout or
// host, never one of a row per report, reconciler or subscriber. The delivery report's verdicts on
// current rollouts (kalypso_current_rollouts, schema/0023) are held to the same: there a CTE of a
// row per target of the fleet is many rows.
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/store/connect.ts';
import { writeRandomFleet } from '../support/random-writes.ts';
import { refreshEveryRollout, releasedFunction, releasedRefresh } from '../support/rollout-recount.ts';
import { closeTestDatabase, openTestDatabase, type TestDatabase } from '../support/test-database.ts';

/** CTEs of the rollout refresh with a row per report, reconciler or subscriber. */
const ROLLOUT_CTES_OF_MANY_ROWS = new Set(['span_rows', 'reported', 'subscribed', 'subscribers', 'placed', 'candidates', 'laggards']);
/** CTEs of kalypso_current_rollouts (the delivery report's verdicts) with a row per target or more. */
const CURRENT_ROLLOUT_CTES = new Set(['current_rollout', 'counts', 'per_commit', 'rollout_commit', 'counted']);
/** CTEs of the summary refresh with a row per reconciler. */
const SUMMARY_CTES_OF_MANY_ROWS = new Set(['counted', 'now_state', 'moves', 'pairs', 'host_sides', 'gone', 'judged', 'sides']);
/** Nodes that pass their one input through: what they read is what the loop rescans. */
const PASS_THROUGH = new Set(['Materialize', 'Sort', 'Incremental Sort', 'Subquery Scan', 'Result', 'Limit', 'Memoize', 'Unique']);

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Parent Relationship'?: string;
  readonly 'CTE Name'?: string;
  readonly Plans?: readonly PlanNode[];
}

let testDb: TestDatabase;
let database: Database;

beforeAll(async () => {
  ({ testDb, database } = await openTestDatabase(2));
  await testDb.query((await releasedRefresh('0016_rollout_refresh_reads_once')).sql);
  await testDb.query((await releasedFunction('0014_summary_rows_in_place', 'kalypso_current_rollouts')).sql);
  await writeRandomFleet(database.db);
});

afterAll(() => closeTestDatabase({ testDb, database }));

/**
 * The CTEs of `manyRows` that a nested loop rescans, in the plans of every statement `statement`
 * runs (after `before`, unplanned, in the same transaction).
 */
async function rescannedCtes(statement: string, manyRows: ReadonlySet<string>, before?: string): Promise<string[]> {
  return await testDb.rolledBack(async (client) => {
    if (before !== undefined) await client.query(before);
    const plans = await plansOf(client, statement);
    const found: string[] = [];
    const visit = (node: PlanNode): void => {
      if (node['Node Type'] === 'Nested Loop') {
        let inner = node.Plans?.find((child) => child['Parent Relationship'] === 'Inner');
        while (inner !== undefined && PASS_THROUGH.has(inner['Node Type']) && inner.Plans?.length === 1) inner = inner.Plans[0];
        if (inner?.['Node Type'] === 'CTE Scan' && manyRows.has(inner['CTE Name'] ?? '')) found.push(inner['CTE Name']!);
      }
      for (const child of node.Plans ?? []) visit(child);
    };
    for (const plan of plans) visit(plan);
    return found;
  });
}

/** The plan of every statement `statement` runs, functions' statements included. */
async function plansOf(client: pg.Client, statement: string): Promise<PlanNode[]> {
  const plans: PlanNode[] = [];
  client.on('notice', (notice) => {
    const text = notice.message ?? '';
    const at = text.indexOf('{');
    if (text.includes('plan:') && at >= 0) plans.push((JSON.parse(text.slice(at)) as { Plan: PlanNode }).Plan);
  });
  await client.query(`LOAD 'auto_explain'`);
  await client.query(`SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on;
                      SET auto_explain.log_format = json; SET client_min_messages = log`);
  await client.query(statement);
  await client.query(`SET client_min_messages = notice`);
  if (plans.length < 2) throw new Error(`expected the statements of ${statement} to be planned, got ${plans.length} plans`);
  return plans;
}

describe('the refreshes plan', () => {
  it('no nested loop over a CTE of many rows in the rollout refresh', async () => {
    expect(await rescannedCtes(refreshEveryRollout('kalypso_refresh_rollouts'), ROLLOUT_CTES_OF_MANY_ROWS)).toEqual([]);
  });

  it('what the rollout refresh of schema/0016 planned: a loop over the reports of each subscriber', async () => {
    expect(await rescannedCtes(refreshEveryRollout('kalypso_refresh_rollouts_0016'), ROLLOUT_CTES_OF_MANY_ROWS)).toContain('reported');
  });

  it('no nested loop over a CTE of a row per target in the delivery functions', async () => {
    const delivery = `SELECT * FROM kalypso_delivery_outcomes(); SELECT * FROM kalypso_delivery_rollouts();
                      SELECT * FROM kalypso_current_rollouts(now(), NULL);
                      SELECT * FROM kalypso_current_rollouts(now(), (SELECT array_agg(id) FROM deployment_target))`;
    expect(await rescannedCtes(delivery, CURRENT_ROLLOUT_CTES, refreshEveryRollout('kalypso_refresh_rollouts'))).toEqual([]);
  });

  it('what kalypso_current_rollouts of schema/0014 planned: a loop over the current rollouts for each one counted', async () => {
    // As kalypso_delivery_rollouts calls it: for the targets of the newest rollouts.
    const old = `SELECT * FROM kalypso_current_rollouts_0014(now(), (SELECT array_agg(id) FROM deployment_target))`;
    expect(await rescannedCtes(old, CURRENT_ROLLOUT_CTES, refreshEveryRollout('kalypso_refresh_rollouts'))).toContain('current_rollout');
  });

  it('no nested loop over a CTE of many rows in the summary refresh', async () => {
    // What the writes queued (as under ingest), then everything (as after an upgrade).
    const both = `SELECT * FROM kalypso_refresh_summaries(false); SELECT * FROM kalypso_refresh_summaries(true)`;
    expect(await rescannedCtes(both, SUMMARY_CTES_OF_MANY_ROWS)).toEqual([]);
  });
});
