// Statements marked PREPARED_MARK go out as named prepared statements, so the connection keeps
// their plans (kept-plans.ts); others stay unnamed. The reports' connection (Database.reports) marks
// every statement written as SQL text. Seen from the session itself: pg_prepared_statements.
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/store/connect.ts';
import { MAX_PREPARED_PER_CONNECTION, PREPARED_MARK } from '../../src/store/kept-plans.ts';
import { historyReport } from '../../src/store/reports/history-report.ts';
import { hostStateReport } from '../../src/store/reports/hosts-report.ts';
import { writeKnownFleet } from '../support/known-fleet.ts';
import { closeTestDatabase, openTestDatabase, type TestDatabase } from '../support/test-database.ts';

let testDb: TestDatabase;
let database: Database;

// One connection: every statement below runs in the same session.
beforeAll(async () => ({ testDb, database } = await openTestDatabase(1)));

afterAll(() => closeTestDatabase({ testDb, database }));

const prepared = async () =>
  (await sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements ORDER BY prepare_time`.execute(database.db)).rows.map((row) => row.statement);

it('prepares a marked statement once per text, answers as an unmarked one, and leaves others unnamed', async () => {
  const marked = (n: number) => sql<{ n: number }>`${sql.raw(PREPARED_MARK)} SELECT ${n}::int + 1 AS n`.execute(database.db);
  expect((await sql<{ n: number }>`SELECT ${1}::int + 1 AS n`.execute(database.db)).rows).toEqual([{ n: 2 }]);
  expect(await prepared()).toEqual([]);
  for (const n of [1, 2, 3]) expect((await marked(n)).rows).toEqual([{ n: n + 1 }]);
  expect(await prepared()).toEqual([`${PREPARED_MARK} SELECT $1::int + 1 AS n`]);
  // Another text: another statement, beside the first.
  expect((await sql<{ n: number }>`${sql.raw(PREPARED_MARK)} SELECT ${5}::int * 2 AS n`.execute(database.db)).rows).toEqual([{ n: 10 }]);
  expect(await prepared()).toHaveLength(2);
  // The pool's own query() passes a callback to the connection's: kept as it came.
  expect((await database.pool.query<{ n: number }>('SELECT 1 AS n')).rows).toEqual([{ n: 1 }]);
});

it('prepares what the reports run through their connection, a report as it answers elsewhere, and leaves builder statements unnamed', async () => {
  await writeKnownFleet(database.db);
  const before = await prepared();
  const context = { asOf: new Date(), staleAfterMs: 15 * 60_000 };
  const answered = await hostStateReport(database.db, context, 'dev-1');
  expect(await prepared()).toEqual(before);
  expect(answered?.reconcilers.length).toBeGreaterThan(0);
  // Twice: the second run takes the statement prepared by the first (one name for the text).
  for (const _ of [1, 2]) expect(await hostStateReport(database.reports, context, 'dev-1')).toEqual(answered);
  // The host's row comes from the query builder (no text to mark); its reconcilers' from SQL text.
  const statements = (await prepared()).filter((text) => !before.includes(text));
  expect(statements).toHaveLength(1);
  expect(statements[0]).toMatch(/^\/\* prepared \*\/\s*SELECT r\.id AS reconciler_id/);
  // Marked already (the rollout gate's own statements): not marked twice.
  expect((await sql<{ n: number }>`${sql.raw(PREPARED_MARK)} SELECT ${2}::int AS n`.execute(database.reports)).rows).toEqual([{ n: 2 }]);
  expect(await prepared()).toContain(`${PREPARED_MARK} SELECT $1::int AS n`);
});

it('keeps one plan for a page of history: its row limit is in the text, so the generic plan is taken', async () => {
  // Bound, the limit left the generic plan to guess a tenth of the rows; PostgreSQL rejected it and
  // planned the statement again at every call (the custom_plans count grew with every call).
  const page = () => historyReport(database.reports, { environment: 'dev', limit: 2 });
  const first = await page();
  expect(first.items).toHaveLength(2);
  for (let call = 0; call < 9; call += 1) expect(await page()).toEqual(first);
  const plans = await sql<{ generic_plans: string; custom_plans: string }>`
    SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE '%FROM deployment_state_history h%'`.execute(database.db);
  expect(plans.rows).toHaveLength(1);
  expect(Number(plans.rows[0]!.generic_plans)).toBeGreaterThan(0);
  expect(Number(plans.rows[0]!.custom_plans)).toBeLessThan(10);
});

it(`prepares no more than ${MAX_PREPARED_PER_CONNECTION} texts on a connection, and answers the others unnamed`, async () => {
  const texts = MAX_PREPARED_PER_CONNECTION + 20;
  for (let n = 0; n < texts; n += 1) {
    expect((await sql<{ n: number }>`SELECT ${n}::int + ${sql.lit(n)} AS n`.execute(database.reports)).rows).toEqual([{ n: 2 * n }]);
  }
  expect(await prepared()).toHaveLength(MAX_PREPARED_PER_CONNECTION);
});
