// schema/current/ is what the migrations build: generated from this file's freshly migrated
// database (a clone of the suite's template), the files must equal the committed ones byte for
// byte. The comparison is shown to bite: a changed function body, a revoked grant, a dropped
// index or an extra view each change exactly their own file (and the index in the README for a new
// object), while the partitions the hub makes at run time change nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.ts';
import { connectDatabase } from '../../src/store/connect.ts';
import { committedSchemaFiles, currentSchemaFiles, README, type SchemaDifferences, schemaDifferences } from '../../src/store/current-schema.ts';
import { renderedByMajor } from '../../src/store/current-schema/readme-file.ts';
import { withServerRoles } from '../support/server-roles.ts';
import { closeTestDatabase, createTestDatabase, openTestDatabase, type PooledTestDatabase } from '../support/test-database.ts';

let opened: Partial<PooledTestDatabase> = {};
/** The files generated from the untouched migrated database. */
let fresh: Map<string, string>;

beforeAll(async () => {
  opened = await openTestDatabase(1);
  fresh = await withServerRoles('read', () => currentSchemaFiles(opened.database!.db));
});

afterAll(() => closeTestDatabase(opened));

/** What the stale check says: every file that differs, and what to do about it. */
function staleReport({ stale, missing, extra }: SchemaDifferences, generated: ReadonlyMap<string, string>, committed: ReadonlyMap<string, string>): string {
  const lines = [
    ...stale.map((file) => `stale:   schema/current/${file} (${firstDifference(committed.get(file)!, generated.get(file)!)})`),
    ...missing.map((file) => `missing: schema/current/${file}`),
    ...extra.map((file) => `extra:   schema/current/${file} (no such object any more)`),
  ];
  return lines.length === 0
    ? ''
    : `schema/current/ is not what the migrations build. Run \`npm run schema:current\` and commit the result.\n${lines.join('\n')}`;
}

function firstDifference(committed: string, generated: string): string {
  const [was, is] = [committed.split('\n'), generated.split('\n')];
  const line = was.findIndex((text, index) => text !== is[index]);
  const at = line === -1 ? was.length : line;
  return `line ${at + 1}: committed ${JSON.stringify(was[at] ?? '')}, generated ${JSON.stringify(is[at] ?? '')}`;
}

/** The files generated from a clone of the migrated database after `statements`. */
async function generatedAfter(statements: string): Promise<Map<string, string>> {
  const testDb = await createTestDatabase();
  const database = connectDatabase({ url: testDb.url, poolSize: 1, applicationName: 'test' }, createLogger('silent'));
  try {
    await testDb.query(statements);
    return await withServerRoles('read', () => currentSchemaFiles(database.db));
  } finally {
    await closeTestDatabase({ testDb, database });
  }
}

describe('schema/current', () => {
  it('is what the migrations build (if not: npm run schema:current)', async (context) => {
    const committed = await committedSchemaFiles();
    // Views and function headers are PostgreSQL's rendering: compare like with like.
    const renderedBy = renderedByMajor(committed.get(README) ?? '');
    const server = renderedByMajor(fresh.get(README)!);
    if (renderedBy !== undefined && renderedBy !== server) {
      context.skip(`schema/current/ was rendered by PostgreSQL ${renderedBy}; this server is PostgreSQL ${server}`);
    }
    expect(staleReport(schemaDifferences(fresh, committed), fresh, committed)).toBe('');
  });

  it('names each stale, missing and extra file, and the command that fixes them', () => {
    const committed = new Map(fresh);
    committed.set('functions/kalypso_gate.sql', fresh.get('functions/kalypso_gate.sql')!.replace('kalypso_gate', 'kalypso_gate_was'));
    committed.delete('views/kalypso_drift.sql');
    committed.set('functions/kalypso_gone.sql', '-- dropped by a migration\n');
    const report = staleReport(schemaDifferences(fresh, committed), fresh, committed);
    expect(report.split('\n')).toEqual([
      'schema/current/ is not what the migrations build. Run `npm run schema:current` and commit the result.',
      expect.stringMatching(/^stale: {3}schema\/current\/functions\/kalypso_gate\.sql \(line 4: committed "CREATE OR REPLACE FUNCTION public\.kalypso_gate_was/),
      'missing: schema/current/views/kalypso_drift.sql',
      'extra:   schema/current/functions/kalypso_gone.sql (no such object any more)',
    ]);
  });

  it('is the same text every time: the output does not depend on when or where it was generated', async () => {
    expect(await withServerRoles('read', () => currentSchemaFiles(opened.database!.db))).toEqual(fresh);
  });

  it('has a file for every function, view, table and type in the database, and for its reader role', async () => {
    // Asked of information_schema, not of the catalogs the generator reads.
    const names = async (text: string) => (await opened.testDb!.query<{ name: string }>(text)).map((row) => row.name);
    const expected = [
      ...(await names(`SELECT DISTINCT 'functions/' || routine_name AS name FROM information_schema.routines WHERE routine_schema = 'public'`)),
      ...(await names(`SELECT 'views/' || table_name AS name FROM information_schema.views WHERE table_schema = 'public'`)),
      ...(await names(`SELECT 'tables/' || table_name AS name FROM information_schema.tables
                        WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name NOT LIKE 'kysely\\_%'
                          AND table_name !~ '^deployment_state_history_y[0-9]{4}m[0-9]{2}$'`)),
      ...(await names(`SELECT 'types/' || typname AS name FROM pg_type WHERE typnamespace = 'public'::regnamespace AND typtype = 'e'`)),
      'roles/kalypso_reader',
    ].map((name) => `${name}.sql`);
    expect([...fresh.keys()].filter((file) => file !== README).sort()).toEqual(expected.sort());
  });
});

describe('the generator sees a real change', () => {
  it('a function redefined with another body changes exactly its file', async () => {
    const changed = await generatedAfter(`
      CREATE OR REPLACE FUNCTION kalypso_seconds_between(from_time timestamptz, to_time timestamptz) RETURNS double precision
      LANGUAGE sql IMMUTABLE AS $$ SELECT greatest(date_part('epoch', to_time - from_time), 0) $$`);
    expect(schemaDifferences(changed, fresh)).toEqual({ stale: ['functions/kalypso_seconds_between.sql'], missing: [], extra: [] });
    expect(changed.get('functions/kalypso_seconds_between.sql')).toContain("SELECT greatest(date_part('epoch', to_time - from_time), 0)");
  });

  it('a revoked grant changes exactly the view it was on', async () => {
    const changed = await generatedAfter(`REVOKE SELECT ON kalypso_settings FROM kalypso_reader`);
    expect(schemaDifferences(changed, fresh)).toEqual({ stale: ['views/kalypso_settings.sql'], missing: [], extra: [] });
    expect(fresh.get('views/kalypso_settings.sql')).toContain('GRANT SELECT ON TABLE public.kalypso_settings TO kalypso_reader;');
  });

  it('a dropped index changes exactly its table', async () => {
    const changed = await generatedAfter(`DROP INDEX deployment_target_by_endpoint`);
    expect(schemaDifferences(changed, fresh)).toEqual({ stale: ['tables/deployment_target.sql'], missing: [], extra: [] });
  });

  it('an extra view gets its file and a line in the index', async () => {
    const changed = await generatedAfter(`CREATE VIEW kalypso_extra AS SELECT 1 AS one`);
    expect(schemaDifferences(changed, fresh)).toEqual({ stale: [README], missing: ['views/kalypso_extra.sql'], extra: [] });
    expect(changed.get('views/kalypso_extra.sql')).toContain('-- Not created by name in schema/NNNN_*.sql');
    expect(changed.get(README)).toContain('- [`kalypso_extra`](views/kalypso_extra.sql)');
  });

  it('partitions the hub makes at run time change nothing', async () => {
    const changed = await generatedAfter(`SELECT kalypso_ensure_history_partitions(now() + interval '2 years', now() + interval '2 years 3 months')`);
    expect(schemaDifferences(changed, fresh)).toEqual({ stale: [], missing: [], extra: [] });
  });

  it('an object it cannot render stops it, named, rather than being left out', async () => {
    await expect(generatedAfter(`CREATE DOMAIN kalypso_commit_id AS text CHECK (VALUE ~ '^[0-9a-f]+$')`)).rejects.toThrow(
      /does not render: type kalypso_commit_id\. Render them in src\/store\/current-schema\//,
    );
  });
});
