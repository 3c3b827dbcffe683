// The hub as users run it: `kalypso-hub <command>` in a child process, its output collected.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

const CLI = path.resolve(import.meta.dirname, '../../src/cli/main.ts');

export interface HubProcess {
  readonly process: ChildProcess;
  /** Everything written to stdout and stderr so far. */
  readonly output: () => string;
  readonly exited: Promise<number | null>;
}

export function runCli(args: readonly string[], env: NodeJS.ProcessEnv = {}): HubProcess {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { process: child, output: () => output, exited };
}

/** Waits until the hub's /readyz answers 200 (migrated, database reachable). */
export async function waitReady(port: number, hub: HubProcess): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt += 1) {
    const status = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) return;
    if (hub.process.exitCode !== null) throw new Error(`hub exited: ${hub.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`hub not ready: ${hub.output()}`);
}
