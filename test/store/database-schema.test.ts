// The Kysely table types (src/store/database-schema.ts) against the schema the migrations build:
// every typed table has exactly the typed columns, each nullable, of the kind and with a default
// (insertable without a value) exactly where the type says. The types are read by the TypeScript
// compiler, as the code that uses them sees them; the schema by information_schema.
import path from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TABLES_WITHOUT_TYPES } from '../../src/store/database-schema.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

type Kind = 'number' | 'string' | 'boolean' | 'Date' | 'unknown';

interface ColumnShape {
  readonly kind: Kind;
  /** A string column of a fixed set of values (a union of literals; an enum). */
  readonly values?: readonly string[];
  readonly nullable: boolean;
  /** A NOT NULL column that may be left out of an INSERT. */
  readonly defaulted: boolean;
}

const SCHEMA_FILE = path.resolve(import.meta.dirname, '../../src/store/database-schema.ts');

/** Each table of HubDatabase, each column's select and insert types as the compiler has them. */
function typedTables(): Map<string, Map<string, ColumnShape>> {
  const program = ts.createProgram([SCHEMA_FILE], {
    strict: true,
    noEmit: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2023,
    allowImportingTsExtensions: true,
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(SCHEMA_FILE)!;
  const hubDatabase = checker.getSymbolAtLocation(source)!.exports!.get(ts.escapeLeadingUnderscores('HubDatabase'))!;
  const typeOf = (symbol: ts.Symbol) => checker.getTypeOfSymbolAtLocation(symbol, source);
  const parts = (type: ts.Type): readonly ts.Type[] => (type.isUnion() ? type.types : [type]);
  const kindOf = (type: ts.Type, where: string): Kind => {
    const kinds = new Set(
      parts(type)
        .filter((part) => (part.flags & ts.TypeFlags.Null) === 0)
        .map((part): Kind => {
          if (part.flags & ts.TypeFlags.NumberLike) return 'number';
          if (part.flags & ts.TypeFlags.StringLike) return 'string';
          if (part.flags & ts.TypeFlags.BooleanLike) return 'boolean';
          if (part.flags & ts.TypeFlags.Unknown) return 'unknown';
          if (part.getSymbol()?.getName() === 'Date') return 'Date';
          throw new Error(`${where}: cannot tell the kind of ${checker.typeToString(part)}`);
        }),
    );
    if (kinds.size !== 1) throw new Error(`${where}: mixes ${[...kinds].join(', ')}`);
    return [...kinds][0]!;
  };
  const tables = new Map<string, Map<string, ColumnShape>>();
  for (const table of checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(hubDatabase))) {
    const columns = new Map<string, ColumnShape>();
    for (const column of checker.getPropertiesOfType(typeOf(table))) {
      const declared = typeOf(column);
      // ColumnType<Select, Insert, Update> (Generated, GeneratedAlways among them) carries its types as phantom properties.
      const select = declared.getProperty('__select__');
      const insert = declared.getProperty('__insert__');
      const selectType = select === undefined ? declared : typeOf(select);
      const insertType = insert === undefined ? declared : typeOf(insert);
      const where = `${table.getName()}.${column.getName()}`;
      const literals = parts(selectType).filter((part) => part.isStringLiteral());
      columns.set(column.getName(), {
        kind: kindOf(selectType, where),
        ...(literals.length === 0 ? {} : { values: literals.map((part) => part.value).sort() }),
        // (unknown admits null too.)
        nullable: parts(selectType).some((part) => (part.flags & (ts.TypeFlags.Null | ts.TypeFlags.Unknown)) !== 0),
        defaulted: (insertType.flags & ts.TypeFlags.Never) !== 0 || parts(insertType).some((part) => (part.flags & ts.TypeFlags.Undefined) !== 0),
      });
    }
    tables.set(table.getName(), columns);
  }
  return tables;
}

const KIND_OF_DATA_TYPE: Record<string, Kind> = {
  bigint: 'number',
  integer: 'number',
  smallint: 'number',
  text: 'string',
  'character varying': 'string',
  boolean: 'boolean',
  'timestamp with time zone': 'Date',
  jsonb: 'unknown',
};

interface ColumnRow {
  table_name: string;
  column_name: string;
  data_type: string;
  enum_values: string[] | null;
  is_nullable: 'YES' | 'NO';
  column_default: string | null;
  is_identity: 'YES' | 'NO';
  is_generated: 'ALWAYS' | 'NEVER';
}

let testDb: TestDatabase;
let migrated: Map<string, Map<string, ColumnShape>>;
let typed: Map<string, Map<string, ColumnShape>>;

beforeAll(async () => {
  testDb = await createTestDatabase();
  typed = typedTables();
  // Tables only: partitions of the history are its own, and views are read through SQL.
  const rows = await testDb.query<ColumnRow>(`
    SELECT c.table_name, c.column_name, c.data_type, c.is_nullable, c.column_default, c.is_identity, c.is_generated,
           (SELECT array_agg(e.enumlabel::text ORDER BY e.enumlabel::text) FROM pg_enum e WHERE e.enumtypid = to_regtype(c.udt_name)) AS enum_values
      FROM information_schema.columns c
      JOIN pg_class k ON k.relname = c.table_name AND k.relnamespace = to_regnamespace(c.table_schema)
     WHERE c.table_schema = current_schema() AND k.relkind IN ('r', 'p') AND NOT k.relispartition
     ORDER BY c.table_name, c.ordinal_position`);
  // A text column held to a list of values by a CHECK (… IN (…)) is as closed as an enum.
  const checks = await testDb.query<{ table_name: string; def: string }>(`
    SELECT conrelid::regclass::text AS table_name, pg_get_constraintdef(oid) AS def
      FROM pg_constraint WHERE contype = 'c' AND connamespace = current_schema()::regnamespace`);
  const checkedValues = new Map<string, string[]>();
  for (const check of checks) {
    const match = /^CHECK \(\((\w+) = ANY \(ARRAY\[(.*)\]\)\)\)$/.exec(check.def);
    if (match === null) continue;
    const values = [...match[2]!.matchAll(/'((?:[^']|'')*)'::text/g)].map((value) => value[1]!.replaceAll("''", "'")).sort();
    checkedValues.set(`${check.table_name}.${match[1]!}`, values);
  }
  migrated = new Map();
  for (const row of rows) {
    const columns = migrated.get(row.table_name) ?? new Map<string, ColumnShape>();
    const generated = row.is_generated === 'ALWAYS';
    const values = row.enum_values ?? checkedValues.get(`${row.table_name}.${row.column_name}`);
    columns.set(row.column_name, {
      kind: row.enum_values === null ? (KIND_OF_DATA_TYPE[row.data_type] ?? (`(${row.data_type})` as Kind)) : 'string',
      ...(values === undefined ? {} : { values }),
      // PostgreSQL calls a generated column nullable unless declared NOT NULL; its type says what
      // its expression yields (never null when its inputs are not), so the type's word is taken.
      nullable: generated ? (typed.get(row.table_name)?.get(row.column_name)?.nullable ?? true) : row.is_nullable === 'YES',
      defaulted: generated || row.column_default !== null || row.is_identity === 'YES',
    });
    migrated.set(row.table_name, columns);
  }
}, 120_000);

afterAll(async () => {
  await testDb.drop();
});

describe('the Kysely table types', () => {
  it('cover every table the migrations create, but those left to hand-written SQL on purpose', () => {
    const untyped = [...migrated.keys()].filter((table) => !typed.has(table)).sort();
    expect(untyped).toEqual([...TABLES_WITHOUT_TYPES].sort());
    expect([...typed.keys()].filter((table) => !migrated.has(table))).toEqual([]);
  });

  it('name exactly the columns of each table, with their kind, values, nullability and defaults', () => {
    // Nullable columns may always be left out of an INSERT: defaults are compared for NOT NULL ones.
    const shapeOf = (tables: Map<string, Map<string, ColumnShape>>) =>
      Object.fromEntries(
        [...typed.keys()].sort().map((table) => [
          table,
          Object.fromEntries(
            [...(tables.get(table) ?? [])].sort(([a], [b]) => a.localeCompare(b)).map(([name, shape]) => [name, { ...shape, defaulted: !shape.nullable && shape.defaulted }]),
          ),
        ]),
      );
    expect(shapeOf(typed)).toEqual(shapeOf(migrated));
  });
});
