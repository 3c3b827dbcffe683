// The hub as a separate process (`kalypso-hub serve`), so that tests can crash it with SIGKILL,
// stop it with signals, and run several at once — as production does, unlike an in-process hub.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { freePort } from './ports.ts';

const CLI = path.resolve(import.meta.dirname, '../../src/cli/main.ts');

export interface HubPorts {
  readonly http: number;
  readonly otlpGrpc: number;
  readonly otlpHttp: number;
}

export interface HubProcess {
  readonly process: ChildProcess;
  readonly ports: HubPorts;
  /** Everything the hub logged so far (stdout and stderr). */
  readonly output: () => string;
  /** Exit code, or the signal's name when a signal ended it. */
  readonly exited: Promise<number | string>;
  /** Resident set size of the hub process in bytes (from /proc). */
  rss(): Promise<number>;
}

export async function freeHubPorts(): Promise<HubPorts> {
  return { http: await freePort(), otlpGrpc: await freePort(), otlpHttp: await freePort() };
}

export function spawnHub(
  databaseUrl: string,
  ports: HubPorts,
  flags: readonly string[] = [],
  nodeOptions: readonly string[] = [],
): HubProcess {
  const child = spawn(
    process.execPath,
    [
      '--disable-warning=ExperimentalWarning',
      ...nodeOptions,
      CLI,
      'serve',
      '--listen-host', '127.0.0.1',
      '--http-port', String(ports.http),
      '--otlp-grpc-port', String(ports.otlpGrpc),
      '--otlp-http-port', String(ports.otlpHttp),
      '--kube', 'off',
      '--log-level', 'info',
      ...flags,
    ],
    { env: { ...process.env, DATABASE_URL: databaseUrl }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  return {
    process: child,
    ports,
    output: () => output,
    exited,
    rss: async () => {
      const { readFile } = await import('node:fs/promises');
      const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
      const kib = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1]);
      return kib * 1024;
    },
  };
}

export async function readyzStatus(port: number): Promise<number> {
  return fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(3_000) }).then(
    (response) => response.status,
    () => 0,
  );
}

/** Waits until the hub answers /readyz with 200; fails at once if it exits meanwhile. */
export async function waitHubReady(hub: HubProcess, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await readyzStatus(hub.ports.http)) === 200) return;
    if (hub.process.exitCode !== null || hub.process.signalCode !== null) throw new Error(`hub exited:\n${hub.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`hub not ready after ${timeoutMs} ms:\n${hub.output()}`);
}

/** Ends a hub that a test may have left running (after a failed assertion). */
export async function killHub(hub: HubProcess | undefined): Promise<void> {
  if (hub === undefined || hub.process.exitCode !== null || hub.process.signalCode !== null) return;
  hub.process.kill('SIGKILL');
  await hub.exited;
}
