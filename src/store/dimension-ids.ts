// Ids of dimension rows (environments, endpoints, hosts, reconcilers, …), created on first sight.
//
// Each lookup reads the ids of the rows that exist, inserts the missing ones with ON CONFLICT DO
// NOTHING, and reads again those a concurrent writer inserted meanwhile: under READ COMMITTED
// each statement sees the rows committed before it began, so two hubs creating the same host at
// once both get its one id. Rows are inserted in key order so that concurrent inserts wait on each
// other in one order (no deadlocks). Lookups run outside the caller's transaction: a dimension row
// is harmless even if the batch that needed it fails, and an id is only cached once it is committed.
//
// Read first, because most rows asked for exist: a hub that has just started, or a fleet with more
// reconcilers than the cache holds (fleet L: 240,000), asks for known rows in every batch. An
// insert of a row that exists still checks its references, probes the key and draws an id from
// the sequence that the row never uses (a batch of 1,000 known reconcilers burned 1,000 ids).
import { type Kysely, sql } from 'kysely';
import { BoundedCache } from './bounded-cache.ts';
import type { HubDatabase } from './database-schema.ts';
import { MissingReferenceError } from './store-errors.ts';

type ColumnType = 'text' | 'bigint';
type ExtraColumnType = ColumnType | 'timestamptz' | 'integer';

export interface DimensionSpec {
  readonly table: string;
  /** The columns of the table's unique key. */
  readonly key: readonly { readonly name: string; readonly type: ColumnType }[];
  /** Further columns set when a row is created (never updated here). */
  readonly extra?: readonly { readonly name: string; readonly type: ExtraColumnType }[];
  /** Columns naming other dimensions' rows, checked by the insert itself (see `ensure`). */
  readonly references?: readonly { readonly column: string; readonly table: string }[];
}

/** A dimension whose table and column names the compiler checks against the Kysely table types. */
function dimension<T extends keyof HubDatabase>(spec: {
  readonly table: T;
  readonly key: readonly { readonly name: keyof HubDatabase[T] & string; readonly type: ColumnType }[];
  readonly extra?: readonly { readonly name: keyof HubDatabase[T] & string; readonly type: ExtraColumnType }[];
  readonly references?: readonly { readonly column: keyof HubDatabase[T] & string; readonly table: keyof HubDatabase }[];
}): DimensionSpec {
  return spec;
}

export type DimensionValue = string | number | Date | null;

export const DIMENSIONS = {
  workspace: dimension({ table: 'workspace', key: [{ name: 'name', type: 'text' }] }),
  application: dimension({
    table: 'application',
    key: [
      { name: 'workspace_id', type: 'bigint' },
      { name: 'name', type: 'text' },
    ],
  }),
  workload: dimension({
    table: 'workload',
    key: [
      { name: 'application_id', type: 'bigint' },
      { name: 'name', type: 'text' },
    ],
  }),
  // Inserted in name order like every dimension, so the id says nothing about which came first:
  // first_seen_rank carries the order within the creating write (schema/0009).
  environment: dimension({ table: 'environment', key: [{ name: 'name', type: 'text' }], extra: [{ name: 'first_seen_rank', type: 'integer' }] }),
  manifestsEndpoint: dimension({
    table: 'manifests_endpoint',
    key: [{ name: 'endpoint', type: 'text' }],
    extra: [{ name: 'storage_type', type: 'text' }],
  }),
  host: dimension({
    table: 'host',
    key: [{ name: 'name', type: 'text' }],
    extra: [
      { name: 'type', type: 'text' },
      { name: 'first_seen_at', type: 'timestamptz' },
      { name: 'last_seen_at', type: 'timestamptz' },
    ],
  }),
  reconciler: dimension({
    table: 'reconciler',
    key: [
      { name: 'host_id', type: 'bigint' },
      { name: 'name', type: 'text' },
    ],
    extra: [
      { name: 'type', type: 'text' },
      { name: 'manifests_endpoint_id', type: 'bigint' },
    ],
    // Not foreign keys (schema/0020): a burst of new hosts creates thousands of reconcilers, and a
    // key's check locks the host's row, a write, for each of them.
    references: [
      { column: 'host_id', table: 'host' },
      { column: 'manifests_endpoint_id', table: 'manifests_endpoint' },
    ],
  }),
} as const satisfies Record<string, DimensionSpec>;

export type DimensionName = keyof typeof DIMENSIONS;

/** A row to find or create: its key values, then its extra values, in spec order. */
export interface DimensionRow {
  readonly key: readonly DimensionValue[];
  readonly extra?: readonly DimensionValue[];
}

export class DimensionIds {
  readonly #db: Kysely<HubDatabase>;
  readonly #caches = new Map<DimensionName, BoundedCache<string, number>>();
  readonly #capacity: number;

  constructor(db: Kysely<HubDatabase>, capacityPerDimension = 100_000) {
    this.#db = db;
    this.#capacity = capacityPerDimension;
  }

  static cacheKey(key: readonly DimensionValue[]): string {
    // NUL never occurs in stored text (the normalizer rejects it), so it separates safely. Called
    // for every record on the ingest path: keys of one or two parts are joined without arrays.
    const part = (value: DimensionValue): string => (typeof value === 'string' ? value : value instanceof Date ? value.toISOString() : String(value));
    if (key.length === 1) return part(key[0]!);
    if (key.length === 2) return `${part(key[0]!)}\u0000${part(key[1]!)}`;
    return key.map(part).join('\u0000');
  }

  /** Ids for the given rows, keyed by `DimensionIds.cacheKey(row.key)`. */
  async ensure(dimension: DimensionName, rows: readonly DimensionRow[]): Promise<Map<string, number>> {
    const cache = this.#cache(dimension);
    const ids = new Map<string, number>();
    const missing = new Map<string, DimensionRow>();
    for (const row of rows) {
      const key = DimensionIds.cacheKey(row.key);
      const id = cache.get(key);
      if (id !== undefined) ids.set(key, id);
      else missing.set(key, row);
    }
    if (missing.size === 0) return ids;

    const spec: DimensionSpec = DIMENSIONS[dimension];
    const pending = [...missing.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const keyColumns = spec.key.map((column) => column.name);
    const columns = [...spec.key, ...(spec.extra ?? [])];
    const table = sql.table(spec.table);
    const columnList = sql.join(columns.map((column) => sql.ref(column.name)));
    const keyList = sql.join(keyColumns.map((column) => sql.ref(column)));
    const orderList = sql.join(keyColumns.map((_, index) => sql.raw(String(index + 1))));
    // A row naming another that is not there is not inserted: a cached id whose row vanished (a
    // database restored from a backup) must make the caller look its ids up again, as a foreign
    // key's failure would. Rows named are never deleted, so a check without a lock suffices.
    const references = (spec.references ?? []).map(
      (reference) => sql`EXISTS (SELECT 1 FROM ${sql.table(reference.table)} r WHERE r.id = x.${sql.ref(reference.column)})`,
    );
    const where = references.length === 0 ? sql`` : sql`WHERE ${sql.join(references, sql` AND `)}`;

    // One array per column (the key's first, then the extra ones), of the rows' values.
    const arraysOf = (rows: readonly (readonly [string, DimensionRow])[], of: readonly { readonly type: ExtraColumnType }[]) =>
      of.map((column, index) => sql`${rows.map(([, row]) => (index < spec.key.length ? row.key[index] : row.extra?.[index - spec.key.length]) ?? null)}::${sql.raw(column.type)}[]`);
    const found = new Map<string, number>();
    const remember = (rows: readonly (Record<string, DimensionValue> & { id: number })[]) => {
      for (const row of rows) found.set(DimensionIds.cacheKey(keyColumns.map((column) => row[column] ?? null)), row.id);
    };
    const select = async (rows: readonly (readonly [string, DimensionRow])[]) => {
      const existing = await sql<Record<string, DimensionValue> & { id: number }>`
        SELECT id, ${keyList} FROM ${table}
        WHERE (${keyList}) IN (SELECT * FROM unnest(${sql.join(arraysOf(rows, spec.key))}))`.execute(this.#db);
      remember(existing.rows);
    };
    await select(pending);
    const absent = pending.filter(([key]) => !found.has(key));
    if (absent.length > 0) {
      const inserted = await sql<Record<string, DimensionValue> & { id: number }>`
        INSERT INTO ${table} (${columnList})
        SELECT * FROM unnest(${sql.join(arraysOf(absent, columns))}) AS x(${columnList}) ${where} ORDER BY ${orderList}
        ON CONFLICT (${keyList}) DO NOTHING
        RETURNING id, ${keyList}`.execute(this.#db);
      remember(inserted.rows);
      // Inserted by another writer since the first read (a conflict returns nothing): read again.
      const raced = absent.filter(([key]) => !found.has(key));
      if (raced.length > 0) await select(raced);
    }
    for (const [key] of pending) {
      const id = found.get(key);
      if (id === undefined && spec.references !== undefined) {
        throw new MissingReferenceError(`a ${spec.table} row ${JSON.stringify(key)} names a row that is not there`);
      }
      if (id === undefined) throw new Error(`${spec.table} row ${JSON.stringify(key)} was neither inserted nor found`);
      cache.set(key, id);
      ids.set(key, id);
    }
    return ids;
  }

  /** The id cached for a key (`DimensionIds.cacheKey`), without asking the database. */
  cached(dimension: DimensionName, key: string): number | undefined {
    return this.#cache(dimension).get(key);
  }

  /** Forget cached ids (tests that reset the database use this). */
  clear(): void {
    this.#caches.clear();
  }

  #cache(dimension: DimensionName): BoundedCache<string, number> {
    let cache = this.#caches.get(dimension);
    if (cache === undefined) {
      cache = new BoundedCache(this.#capacity);
      this.#caches.set(dimension, cache);
    }
    return cache;
  }
}
