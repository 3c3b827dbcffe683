// A hub for benchmarks: its own embedded PostgreSQL (default settings, as `npm start` runs it) in
// a temporary directory, and the hub as a separate process, so that the load generator and the
// hub do not share an event loop.
import { type ChildProcess, spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../src/log/logger.ts';
import { EmbeddedPostgres } from '../src/store/embedded/embedded-postgres.ts';
import { freePort } from '../test/support/ports.ts';

export interface BenchHub {
  readonly ports: { readonly http: number; readonly otlpGrpc: number; readonly otlpHttp: number };
  readonly databaseUrl: string;
  readonly pid: number;
  /** Resident set size of the hub process, in MiB. */
  rssMiB(): Promise<number>;
  stop(): Promise<void>;
}

export async function startBenchHub(): Promise<BenchHub> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'kalypso-bench-'));
  await chmod(directory, 0o755);
  const server = new EmbeddedPostgres(
    { dataDir: directory, port: await freePort(), password: 'bench', database: 'kalypso' },
    createLogger('warn'),
  );
  await server.start();
  const ports = { http: await freePort(), otlpGrpc: await freePort(), otlpHttp: await freePort() };
  const child: ChildProcess = spawn(
    process.execPath,
    [
      path.resolve(import.meta.dirname, '../src/cli/main.ts'),
      'serve',
      '--database-url', server.url,
      '--listen-host', '127.0.0.1',
      '--http-port', String(ports.http),
      '--otlp-grpc-port', String(ports.otlpGrpc),
      '--otlp-http-port', String(ports.otlpHttp),
      '--log-level', 'warn',
    ],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
  for (let attempt = 0; ; attempt += 1) {
    const ready = await fetch(`http://127.0.0.1:${ports.http}/readyz`).then((r) => r.ok, () => false);
    if (ready) break;
    if (attempt > 300 || child.exitCode !== null) throw new Error('benchmark hub did not start');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    ports,
    databaseUrl: server.url,
    pid: child.pid!,
    async rssMiB() {
      const status = await readFile(`/proc/${child.pid}/status`, 'utf8').catch(() => '');
      const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      return Math.round(kib / 1024);
    },
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      await server.stop();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
