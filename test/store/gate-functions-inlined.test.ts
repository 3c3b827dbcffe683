// The endpoint gate's prepared statement is planned once per connection only if PostgreSQL writes
// the gate's functions into it (schema/0045): a function that is SECURITY DEFINER, has its own
// search_path, or is given a sub-select as an argument is planned again at every call. Seen in the
// plan of the FROM item the gate reads (judgedFrom), prepared and not.
import { type RawBuilder, sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/store/connect.ts';
import { judgedFrom } from '../../src/store/reports/rollout-gate-report.ts';
import { randomCommit } from '../support/random-ids.ts';
import { closeTestDatabase, openTestDatabase, type TestDatabase } from '../support/test-database.ts';

let testDb: TestDatabase;
let database: Database;

beforeAll(async () => ({ testDb, database } = await openTestDatabase(1)));

afterAll(() => closeTestDatabase({ testDb, database }));

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Function Name'?: string;
  readonly Plans?: readonly PlanNode[];
}

/** The functions the plan of `from` still calls (a Function Scan each). */
async function functionsCalled(from: RawBuilder<unknown>): Promise<string[]> {
  const result = await sql<{ 'QUERY PLAN': { Plan: PlanNode }[] }>`EXPLAIN (FORMAT JSON) SELECT g.* FROM ${from}`.execute(database.db);
  const called: string[] = [];
  const walk = (node: PlanNode): void => {
    if (node['Node Type'] === 'Function Scan' && node['Function Name'] !== undefined) called.push(node['Function Name']);
    node.Plans?.forEach(walk);
  };
  walk(result.rows[0]!['QUERY PLAN'][0]!.Plan);
  return called.sort();
}

it('writes the gate functions into the endpoint gate’s statement, and calls them for an environment’s', async () => {
  const endpoint = sql`ARRAY(SELECT id FROM manifests_endpoint WHERE endpoint = ${'https://github.com/contoso/gitops/dev'})`;
  const context = { asOf: new Date(), staleAfterMs: 15 * 60_000 };
  // unnest is the asked ids' own Function Scan, in either form.
  expect((await functionsCalled(judgedFrom(endpoint, randomCommit(), context, true))).filter((name) => name !== 'unnest')).toEqual([]);
  expect(await functionsCalled(judgedFrom(endpoint, randomCommit(), context, false))).toEqual(['kalypso_gate_endpoints']);
});
