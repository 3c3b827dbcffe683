// One hub per data directory. A second `npm start` on the same directory once took the running
// hub's embedded PostgreSQL for a left-over and stopped it. Now the running hub holds
// `<dataDir>/hub.lock` (who, since when, where it listens); another hub reads it and refuses to
// start, touching nothing, unless the owner is provably gone.
//
// "Provably gone", on Linux: the lock names the owner's pid, the kernel's boot id and the process's
// start time (/proc/<pid>/stat field 22). Same boot and that pid no longer running that process:
// gone (a recreated container on the same machine included, whatever its host name). Another boot
// of the same host: gone. Another host and another boot: maybe a live hub on a shared volume —
// refused, with the file to delete if it is not.
import { link, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export interface LockOwner {
  readonly pid: number;
  readonly host: string;
  readonly bootId: string | undefined;
  /** The process's start time in clock ticks since boot: with the pid, names one process. */
  readonly processStart: string | undefined;
  readonly startedAt: string;
  /** Where the hub listens, once it does. */
  readonly ports?: Readonly<Record<string, number>>;
}

export class DataDirInUseError extends Error {
  override readonly name = 'DataDirInUseError';
}

export const LOCK_FILE = 'hub.lock';

export class DataDirLock {
  readonly #file: string;
  readonly #owner: LockOwner;

  private constructor(file: string, owner: LockOwner) {
    this.#file = file;
    this.#owner = owner;
  }

  get file(): string {
    return this.#file;
  }

  /** Takes the directory for this process, or throws DataDirInUseError naming its owner. */
  static async acquire(dataDir: string, onTakeOver: (previous: LockOwner | undefined) => void = () => undefined): Promise<DataDirLock> {
    const directory = path.resolve(dataDir);
    await mkdir(directory, { recursive: true, mode: 0o755 });
    const file = path.join(directory, LOCK_FILE);
    const owner = await currentProcess();
    // Written whole to a private file first, then linked into place: link fails if the lock
    // exists, so two hubs starting together cannot both succeed, and no reader sees half a file.
    const draft = `${file}.${process.pid}`;
    await writeFile(draft, `${JSON.stringify(owner, null, 2)}\n`, { mode: 0o644 });
    try {
      for (let attempt = 0; ; attempt += 1) {
        try {
          await link(draft, file);
          return new DataDirLock(file, owner);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw inUse(directory, file, await readOwner(file), error);
        }
        const previous = await readOwner(file);
        if (previous !== undefined && !(await isGone(previous, owner))) throw inUse(directory, file, previous);
        // The owner is gone (or left an unreadable file): its lock is stale. Two hubs taking
        // over the same stale lock at the same instant is not guarded against.
        onTakeOver(previous);
        await rm(file, { force: true });
      }
    } finally {
      await rm(draft, { force: true });
    }
  }

  /** Records where the hub listens, for the message another hub gives. */
  async describe(ports: Readonly<Record<string, number>>): Promise<void> {
    const draft = `${this.#file}.${process.pid}`;
    await writeFile(draft, `${JSON.stringify({ ...this.#owner, ports }, null, 2)}\n`, { mode: 0o644 });
    await rename(draft, this.#file);
  }

  /** Gives the directory up, if the lock is still this process's. */
  async release(): Promise<void> {
    const owner = await readOwner(this.#file);
    if (owner?.pid === this.#owner.pid && owner.processStart === this.#owner.processStart) await rm(this.#file, { force: true });
  }
}

function inUse(directory: string, file: string, owner: LockOwner | undefined, cause?: unknown): DataDirInUseError {
  if (owner === undefined) return new DataDirInUseError(`data directory ${directory} is locked (${file}), by an owner the lock does not name`, { cause });
  const ui = owner.ports?.['http'] === undefined ? '' : `, UI on port ${owner.ports['http']}`;
  return new DataDirInUseError(
    `data directory ${directory} is in use by the hub with pid ${owner.pid} on ${owner.host}, started ${owner.startedAt}${ui}. ` +
      `Stop that hub first, or give this one another --data-dir. If that hub is gone, delete ${file}.`,
    { cause },
  );
}

async function readOwner(file: string): Promise<LockOwner | undefined> {
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as Partial<LockOwner>;
    return typeof parsed.pid === 'number' && typeof parsed.host === 'string' && typeof parsed.startedAt === 'string' ? (parsed as LockOwner) : undefined;
  } catch {
    return undefined;
  }
}

async function isGone(owner: LockOwner, self: LockOwner): Promise<boolean> {
  // Without /proc (macOS): the same host and no process with that pid is as far as proof goes.
  if (owner.bootId === undefined && self.bootId === undefined) return owner.host === self.host && !isRunning(owner.pid);
  const sameBoot = owner.bootId === self.bootId;
  if (!sameBoot) return owner.host === self.host && owner.bootId !== undefined && self.bootId !== undefined;
  const running = await processStartOf(owner.pid);
  return running === undefined || (owner.processStart !== undefined && running !== owner.processStart);
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function currentProcess(): Promise<LockOwner> {
  return {
    pid: process.pid,
    host: os.hostname(),
    bootId: await readFile('/proc/sys/kernel/random/boot_id', 'utf8').then(
      (text) => text.trim(),
      () => undefined,
    ),
    processStart: await processStartOf(process.pid),
    startedAt: new Date().toISOString(),
  };
}

/** Field 22 of /proc/<pid>/stat (after the parenthesised command name, which may hold spaces). */
async function processStartOf(pid: number): Promise<string | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}
