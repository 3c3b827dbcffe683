// Benchmarks run against their own embedded PostgreSQL (default settings, as `npm start` runs it)
// in a temporary directory, and against the hub as a separate process, so that the load
// generator and the hub do not share an event loop.
import { type ChildProcess, spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createLogger } from '../src/log/logger.ts';
import { connectDatabase, type Database } from '../src/store/connect.ts';
import { EmbeddedPostgres } from '../src/store/embedded/embedded-postgres.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { freePort } from '../test/support/ports.ts';

export interface BenchServer {
  /** A new, migrated database on the server. */
  createDatabase(name: string): Promise<{ url: string; database: Database }>;
  /** A new database without the schema: for a hub of another checkout, which migrates it to its own. */
  createEmptyDatabase(name: string): Promise<string>;
  stop(): Promise<void>;
}

export async function startBenchServer(settings: Readonly<Record<string, string>> = {}): Promise<BenchServer> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'kalypso-bench-'));
  await chmod(directory, 0o755);
  const log = createLogger('warn');
  const server = new EmbeddedPostgres({ dataDir: directory, port: await freePort(), password: 'bench', database: 'postgres', settings }, log);
  await server.start();
  const createEmptyDatabase = async (name: string): Promise<string> => {
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    return server.url.replace(/\/postgres$/, `/${name}`);
  };
  return {
    createEmptyDatabase,
    async createDatabase(name) {
      const url = await createEmptyDatabase(name);
      const database = connectDatabase({ url, poolSize: 4, connectTimeoutMs: 5_000, applicationName: 'bench' }, log);
      const { error } = await migrateToLatest(database.db);
      if (error !== undefined) throw error;
      return { url, database };
    },
    async stop() {
      await server.stop();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

export interface BenchHub {
  readonly ports: { readonly http: number; readonly otlpGrpc: number; readonly otlpHttp: number };
  readonly baseUrl: string;
  readonly pid: number;
  /** Resident set size of the hub process, in MiB. */
  rssMiB(): Promise<number>;
  stop(): Promise<void>;
}

/** The heap limits `npm start` and the image run the hub with (docs/benchmarks.md). */
export const HUB_NODE_ARGS = ['--max-semi-space-size=32', '--max-old-space-size=256'] as const;

/** This checkout: the hub a benchmark runs unless told to run another one's (`--against`). */
export const THIS_CHECKOUT = path.resolve(import.meta.dirname, '..');

export async function startBenchHub(
  databaseUrl: string,
  flags: readonly string[] = [],
  nodeArgs: readonly string[] = HUB_NODE_ARGS,
  checkout: string = THIS_CHECKOUT,
): Promise<BenchHub> {
  const ports = { http: await freePort(), otlpGrpc: await freePort(), otlpHttp: await freePort() };
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...nodeArgs,
      // KALYPSO_BENCH_CPU_PROF=<directory>: each hub writes a V8 CPU profile there when it stops.
      ...(process.env['KALYPSO_BENCH_CPU_PROF'] ? ['--cpu-prof', `--cpu-prof-dir=${process.env['KALYPSO_BENCH_CPU_PROF']}`] : []),
      path.join(checkout, 'src/cli/main.ts'),
      'serve',
      '--database-url', databaseUrl,
      '--listen-host', '127.0.0.1',
      '--http-port', String(ports.http),
      '--otlp-grpc-port', String(ports.otlpGrpc),
      '--otlp-http-port', String(ports.otlpHttp),
      '--log-level', 'warn',
      ...flags,
    ],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
  const baseUrl = `http://127.0.0.1:${ports.http}`;
  for (let attempt = 0; ; attempt += 1) {
    const ready = await fetch(`${baseUrl}/readyz`).then((r) => r.ok, () => false);
    if (ready) break;
    if (attempt > 300 || child.exitCode !== null) throw new Error('benchmark hub did not start');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    ports,
    baseUrl,
    pid: child.pid!,
    async rssMiB() {
      const status = await readFile(`/proc/${child.pid}/status`, 'utf8').catch(() => '');
      return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
    },
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
