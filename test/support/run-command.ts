// A command run to its end, as a person or a pipeline step runs it: exit code, stdout and stderr
// apart (help goes to stdout, mistakes to stderr).
import { spawn } from 'node:child_process';
import path from 'node:path';

export const REPO = path.resolve(import.meta.dirname, '../..');
export const CLI = path.join(REPO, 'src/cli/main.ts');

export interface CommandResult {
  readonly code: number | string;
  readonly stdout: string;
  readonly stderr: string;
}

export function runCommand(
  command: string,
  args: readonly string[],
  options: { readonly cwd?: string; readonly env?: NodeJS.ProcessEnv; readonly timeoutMs?: number } = {},
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? REPO,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: options.timeoutMs ?? 60_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code: code ?? signal ?? 'unknown', stdout, stderr }));
  });
}

/** `kalypso-hub <args>` with the Node that runs the tests (the pinned one). */
export function runKalypsoHub(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CommandResult> {
  return runCommand(process.execPath, ['--disable-warning=ExperimentalWarning', CLI, ...args], { env });
}
