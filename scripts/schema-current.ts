// Writes schema/current/ (run: npm run schema:current): migrates a fresh database and renders every
// object it holds, one file each (src/store/current-schema.ts). The database is an embedded
// PostgreSQL in a temporary directory, or a scratch database on the server DATABASE_URL names
// (created and dropped here). test/store/current-schema.test.ts checks the committed files are
// what this writes.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createLogger } from '../src/log/logger.ts';
import { connectDatabase } from '../src/store/connect.ts';
import { CURRENT_SCHEMA_DIR, currentSchemaFiles } from '../src/store/current-schema.ts';
import { EmbeddedPostgres } from '../src/store/embedded/embedded-postgres.ts';
import { migrateToLatest } from '../src/store/migrate.ts';

const log = createLogger('warn');
// The pool's idle connection can still be closing when the server stops; that warning would only
// alarm. A connection lost while in use fails its query, which this script reports.
const poolLog = createLogger('error');

/** Runs `work` on a fresh, empty database, which is gone afterwards. */
async function withFreshDatabase<T>(work: (url: string) => Promise<T>): Promise<T> {
  const external = process.env.DATABASE_URL;
  if (external !== undefined && external !== '') return withScratchDatabase(external, work);
  const directory = await mkdtemp(path.join(os.tmpdir(), 'kalypso-schema-current-'));
  try {
    // The server may run as another user (root → postgres): let it reach the directory.
    await chmod(directory, 0o755);
    const server = new EmbeddedPostgres(
      { dataDir: directory, port: await freePort(), password: 'schema', database: 'kalypso', settings: { fsync: 'off' } },
      log,
    );
    console.log(`starting an embedded PostgreSQL in ${directory}…`);
    await server.start();
    try {
      return await work(server.url);
    } finally {
      await server.stop();
    }
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

async function withScratchDatabase<T>(serverUrl: string, work: (url: string) => Promise<T>): Promise<T> {
  const name = `kalypso_schema_current_${randomBytes(4).toString('hex')}`;
  const admin = async (statement: string): Promise<void> => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    await client.query(statement).finally(() => client.end());
  };
  console.log(`creating the scratch database ${name} on DATABASE_URL's server…`);
  await admin(`CREATE DATABASE ${name}`);
  try {
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    return await work(url.toString());
  } finally {
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

async function generate(url: string): Promise<Map<string, string>> {
  const database = connectDatabase({ url, poolSize: 1, applicationName: 'schema-current' }, poolLog);
  try {
    console.log('migrating…');
    const { applied, error } = await migrateToLatest(database.db);
    if (error !== undefined) throw error;
    console.log(`applied ${applied.length} migrations; reading the catalogs…`);
    return await currentSchemaFiles(database.db);
  } finally {
    await database.close();
  }
}

/** Replaces the folder's contents: a file for an object that is gone must go too. */
async function writeFiles(directory: string, files: ReadonlyMap<string, string>): Promise<void> {
  console.log(`writing ${files.size} files to ${path.relative(process.cwd(), directory) || directory}/…`);
  await rm(directory, { recursive: true, force: true });
  for (const [relative, text] of files) {
    const target = path.join(directory, relative);
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, text);
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no free port'))));
    });
  });
}

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log('usage: npm run schema:current\n\nMigrates a fresh database (embedded, or a scratch database on DATABASE_URL) and rewrites schema/current/.');
} else {
  const files = await withFreshDatabase(generate);
  await writeFiles(CURRENT_SCHEMA_DIR, files);
  const counts = ['tables', 'views', 'functions', 'types', 'roles'].map(
    (kind) => `${[...files.keys()].filter((file) => file.startsWith(`${kind}/`)).length} ${kind}`,
  );
  console.log(`done: ${counts.join(', ')}`);
}
