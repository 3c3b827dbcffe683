// Dimension rows (hosts, reconcilers, …) are found by key and created on first sight
// (src/store/dimension-ids.ts). A hub that starts cold, or a fleet with more reconcilers than the
// cache holds, asks again for rows that exist: they are read, not inserted again — an insert that
// conflicts still draws an id from the sequence, and checked every reference on the way.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/store/connect.ts';
import { DimensionIds, type DimensionRow } from '../../src/store/dimension-ids.ts';
import { randomName } from '../support/random-ids.ts';
import { closeTestDatabase, openTestDatabase, type TestDatabase } from '../support/test-database.ts';

let testDb: TestDatabase;
let database: Database;

beforeAll(async () => {
  ({ testDb, database } = await openTestDatabase(6));
});

afterAll(() => closeTestDatabase({ testDb, database }));

/** The ids the sequence of `table` has handed out so far (drawn, used or not). */
async function idsDrawn(table: string): Promise<number> {
  const [row] = await testDb.query<{ drawn: string }>(`SELECT last_value + CASE WHEN is_called THEN 0 ELSE -1 END AS drawn FROM ${table}_id_seq`);
  return Number(row!.drawn);
}

/** Hosts, and a reconciler on each (rows to create or find). */
async function hostsAndReconcilers(ids: DimensionIds, names: readonly string[]): Promise<{ hosts: Map<string, number>; reconcilers: Map<string, number> }> {
  const hosts = await ids.ensure(
    'host',
    names.map((name): DimensionRow => ({ key: [name], extra: ['kubernetes', new Date(), new Date()] })),
  );
  const endpoint = await ids.ensure('manifestsEndpoint', [{ key: ['https://github.com/org/gitops@main:prod/app'], extra: ['git'] }]);
  const endpointId = [...endpoint.values()][0]!;
  const reconcilers = await ids.ensure(
    'reconciler',
    names.map((name): DimensionRow => ({ key: [hosts.get(name)!, 'flux-system/app'], extra: ['flux', endpointId] })),
  );
  return { hosts, reconcilers };
}

describe('dimension ids', () => {
  it('reads the rows that exist, without drawing ids for them', async () => {
    const names = Array.from({ length: 50 }, () => randomName('host'));
    const created = await hostsAndReconcilers(new DimensionIds(database.db), names);
    expect(new Set(created.reconcilers.values()).size).toBe(names.length);

    // A cold cache (a hub just started) asks for all of them again.
    const [hostsBefore, reconcilersBefore] = [await idsDrawn('host'), await idsDrawn('reconciler')];
    const again = await hostsAndReconcilers(new DimensionIds(database.db), names);
    expect(again).toEqual(created);
    expect([await idsDrawn('host'), await idsDrawn('reconciler')]).toEqual([hostsBefore, reconcilersBefore]);
  });

  it('creates what is new beside what exists, in one call', async () => {
    const known = Array.from({ length: 20 }, () => randomName('host'));
    const fresh = Array.from({ length: 20 }, () => randomName('host'));
    const created = await hostsAndReconcilers(new DimensionIds(database.db), known);
    const before = await idsDrawn('reconciler');
    const mixed = await hostsAndReconcilers(new DimensionIds(database.db), [...known, ...fresh]);
    for (const [key, id] of created.reconcilers) expect(mixed.reconcilers.get(key)).toBe(id);
    // Only the new ones drew ids.
    expect((await idsDrawn('reconciler')) - before).toBe(fresh.length);
    const [stored] = await testDb.query<{ n: number }>(`SELECT count(*)::int AS n FROM reconciler r JOIN host h ON h.id = r.host_id WHERE h.name = ANY ($1)`, [
      [...known, ...fresh],
    ]);
    expect(stored!.n).toBe(known.length + fresh.length);
  });

  it('gives writers creating the same rows at once the same ids', async () => {
    const names = Array.from({ length: 200 }, () => randomName('host'));
    const writers = Array.from({ length: 4 }, () => new DimensionIds(database.db));
    const results = await Promise.all(writers.map((ids) => hostsAndReconcilers(ids, names)));
    for (const result of results.slice(1)) expect(result).toEqual(results[0]);
    const [stored] = await testDb.query<{ n: number }>(`SELECT count(*)::int AS n FROM host WHERE name = ANY ($1)`, [names]);
    expect(stored!.n).toBe(names.length);
  });
});
