// Statements marked PREPARED_MARK go out as named prepared statements, so the connection keeps
// their plans (connect.ts); others stay unnamed. Seen from the session itself: pg_prepared_statements.
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Database, PREPARED_MARK } from '../../src/store/connect.ts';
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
