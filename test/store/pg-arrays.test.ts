// The ingest path's array literals (src/store/pg-arrays.ts) read back by PostgreSQL as the values
// they were made of, whatever the text holds.
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/store/connect.ts';
import { idArray, textArray, timestamps } from '../../src/store/pg-arrays.ts';
import { closeTestDatabase, openTestDatabase, type TestDatabase } from '../support/test-database.ts';

let testDb: TestDatabase;
let client: pg.Client;
let database: Database;

beforeAll(async () => {
  ({ testDb, database } = await openTestDatabase(1));
  client = new pg.Client({ connectionString: testDb.url });
  await client.connect();
});

afterAll(async () => {
  await client.end();
  await closeTestDatabase({ testDb, database });
});

describe('array literals', () => {
  it('text: quotes, backslashes, braces, commas, spaces, NULL and the word NULL', async () => {
    const values = ['plain', 'say "hi"', 'C:\\path\\', '{a,b}', ' padded ', '', 'NULL', null, 'ünïcødé ✓', '\\"', 'x\ny'];
    // Without anything to escape the literal is joined in one go: the same values must come back.
    const plain = ['plain', '{a,b}', ' padded ', '', 'NULL', 'ünïcødé ✓', 'x\ny', "it's"];
    for (const list of [values, plain]) {
      const { rows } = await client.query<{ v: (string | null)[] }>('SELECT $1::text[] AS v', [textArray(list)]);
      expect(rows[0]!.v).toEqual(list);
    }
  });

  it('times to the millisecond, whatever the session time zone, those a broken clock sends too', async () => {
    const random = Array.from({ length: 200 }, () => new Date(Math.round((Math.random() - 0.3) * 8e12)));
    const ordinary = [new Date('2026-11-23T22:00:00.123Z'), new Date(0), null, new Date('1999-12-31T23:59:59.999Z'), new Date(-1), new Date(9_007_199_254_740), new Date(-9_007_199_254_740), ...random];
    // Past 2^53 µs (the year 2255) the times go as text.
    const far = [new Date('2255-06-05T23:47:34.741Z'), new Date('9999-12-31T23:59:59.999Z'), null, new Date('2026-01-01T00:00:00.001Z')];
    for (const values of [ordinary, far, []]) {
      const rows = await database.db.connection().execute(async (connection) => {
        await sql`SET TIME ZONE 'Pacific/Chatham'`.execute(connection);
        const { rows } = await sql<{ v: (Date | null)[] }>`SELECT ${timestamps(values)} AS v`.execute(connection);
        await sql`RESET TIME ZONE`.execute(connection);
        return rows;
      });
      expect(rows[0]!.v).toEqual(values);
    }
  });

  it('ids, and empty arrays of each kind', async () => {
    const { rows } = await client.query<{ ids: string[]; none: string[]; texts: string[] }>(
      'SELECT $1::bigint[] AS ids, $2::bigint[] AS none, $3::text[] AS texts',
      [idArray([1, 42, 9_007_199_254_740_991]), idArray([]), textArray([])],
    );
    expect(rows[0]).toEqual({ ids: ['1', '42', '9007199254740991'], none: [], texts: [] });
  });
});
