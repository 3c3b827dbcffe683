// The hub as users and production run it: `kalypso-hub <command>` in a child process, so that
// tests can read its output, stop it with signals, crash it with SIGKILL and run several at once.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { freePort } from './ports.ts';

const CLI = path.resolve(import.meta.dirname, '../../src/cli/main.ts');

export interface CliProcess {
  readonly process: ChildProcess;
  /** Everything written to stdout and stderr so far. */
  readonly output: () => string;
  /** Exit code, or the signal's name when a signal ended it. */
  readonly exited: Promise<number | string>;
}

export interface HubPorts {
  readonly http: number;
  readonly otlpGrpc: number;
  readonly otlpHttp: number;
}

export interface HubProcess extends CliProcess {
  readonly ports: HubPorts;
  /** Resident set size of the hub process in bytes (from /proc). */
  rss(): Promise<number>;
}

/** Runs `kalypso-hub <args>` with extra environment variables and Node options. */
export function runCli(args: readonly string[], env: NodeJS.ProcessEnv = {}, nodeOptions: readonly string[] = []): CliProcess {
  const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', ...nodeOptions, CLI, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  return { process: child, output: () => output, exited };
}

export async function freeHubPorts(): Promise<HubPorts> {
  return { http: await freePort(), otlpGrpc: await freePort(), otlpHttp: await freePort() };
}

export interface EmbeddedHubPorts extends HubPorts {
  /** The embedded PostgreSQL's port. */
  readonly pg: number;
}

export async function freeEmbeddedHubPorts(): Promise<EmbeddedHubPorts> {
  return { ...(await freeHubPorts()), pg: await freePort() };
}

/** The flags of `kalypso-hub serve` on the embedded PostgreSQL in `dataDir`, as `npm start` runs it, on `ports`. */
export function embeddedServeFlags(dataDir: string, ports: EmbeddedHubPorts): string[] {
  return [
    '--data-dir', dataDir,
    '--listen-host', '127.0.0.1',
    '--http-port', String(ports.http),
    '--otlp-grpc-port', String(ports.otlpGrpc),
    '--otlp-http-port', String(ports.otlpHttp),
    '--embedded-pg-port', String(ports.pg),
  ];
}

/** `kalypso-hub serve` against `databaseUrl` on `ports`, with the Kubernetes watcher off. */
export function spawnHub(databaseUrl: string, ports: HubPorts, flags: readonly string[] = [], nodeOptions: readonly string[] = []): HubProcess {
  const cli = runCli(
    [
      'serve',
      '--listen-host', '127.0.0.1',
      '--http-port', String(ports.http),
      '--otlp-grpc-port', String(ports.otlpGrpc),
      '--otlp-http-port', String(ports.otlpHttp),
      '--kube', 'off',
      '--log-level', 'info',
      ...flags,
    ],
    { DATABASE_URL: databaseUrl },
    nodeOptions,
  );
  return {
    ...cli,
    ports,
    rss: async () => {
      const status = await readFile(`/proc/${cli.process.pid}/status`, 'utf8');
      return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1]) * 1024;
    },
  };
}

export async function readyzStatus(port: number): Promise<number> {
  return fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(3_000) }).then(
    (response) => response.status,
    () => 0,
  );
}

/** Waits until /readyz on `port` answers 200; fails at once if the process exits meanwhile. */
export async function waitReady(port: number, cli: CliProcess, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await readyzStatus(port)) === 200) return;
    if (cli.process.exitCode !== null || cli.process.signalCode !== null) throw new Error(`hub exited:\n${cli.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`hub not ready after ${timeoutMs} ms:\n${cli.output()}`);
}

export function waitHubReady(hub: HubProcess, timeoutMs = 30_000): Promise<void> {
  return waitReady(hub.ports.http, hub, timeoutMs);
}

/** Ends a hub that a test may have left running (after a failed assertion). */
export async function killHub(hub: HubProcess | undefined): Promise<void> {
  if (hub === undefined || hub.process.exitCode !== null || hub.process.signalCode !== null) return;
  hub.process.kill('SIGKILL');
  await hub.exited;
}
