// The ingest path's array literals (src/store/pg-arrays.ts) read back by PostgreSQL as the values
// they were made of, whatever the text holds.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idArray, textArray, timeArray } from '../../src/store/pg-arrays.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

let testDb: TestDatabase;
let client: pg.Client;

beforeAll(async () => {
  testDb = await createTestDatabase();
  client = new pg.Client({ connectionString: testDb.url });
  await client.connect();
});

afterAll(async () => {
  await client.end();
  await testDb.drop();
});

describe('array literals', () => {
  it('text: quotes, backslashes, braces, commas, spaces, NULL and the word NULL', async () => {
    const values = ['plain', 'say "hi"', 'C:\\path\\', '{a,b}', ' padded ', '', 'NULL', null, 'ünïcødé ✓', '\\"', 'x\ny'];
    const { rows } = await client.query<{ v: (string | null)[] }>('SELECT $1::text[] AS v', [textArray(values)]);
    expect(rows[0]!.v).toEqual(values);
  });

  it('times to the millisecond, whatever the session time zone', async () => {
    const values = [new Date('2026-11-23T22:00:00.123Z'), new Date(0), null, new Date('1999-12-31T23:59:59.999Z')];
    await client.query(`SET TIME ZONE 'Pacific/Chatham'`);
    const { rows } = await client.query<{ v: (Date | null)[] }>('SELECT $1::timestamptz[] AS v', [timeArray(values)]);
    expect(rows[0]!.v).toEqual(values);
  });

  it('ids, and empty arrays of each kind', async () => {
    const { rows } = await client.query<{ ids: string[]; none: string[]; texts: string[]; times: Date[] }>(
      'SELECT $1::bigint[] AS ids, $2::bigint[] AS none, $3::text[] AS texts, $4::timestamptz[] AS times',
      [idArray([1, 42, 9_007_199_254_740_991]), idArray([]), textArray([]), timeArray([])],
    );
    expect(rows[0]).toEqual({ ids: ['1', '42', '9007199254740991'], none: [], texts: [], times: [] });
  });
});
