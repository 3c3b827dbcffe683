// A PostgreSQL server of a test's own (not the suite's shared one), for tests that crash it.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../../src/log/logger.ts';
import { EmbeddedPostgres } from '../../src/store/embedded/embedded-postgres.ts';
import { portOutsideEphemeralRange } from './ports.ts';

// Unlike the suite's FAST_TEST_SETTINGS, commits are synchronous: with synchronous_commit off a
// commit is acknowledged before its WAL leaves Postgres's memory, so SIGKILL loses acknowledged
// transactions and "acknowledged only after commit" could not be tested. fsync stays off: the
// server's processes crash, not the machine, so whatever reached the kernel survives.
const CRASH_SAFE_SETTINGS = { fsync: 'off', full_page_writes: 'off', synchronous_commit: 'on' } as const;

export interface OwnPostgres {
  readonly server: EmbeddedPostgres;
  /** The directory of its Unix socket, when asked for one. */
  readonly socketDirectory: string | undefined;
  /** Stops the server and removes its data. */
  remove(): Promise<void>;
}

export async function startOwnPostgres(options: { unixSocket?: boolean } = {}): Promise<OwnPostgres> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'kalypso-faults-pg-'));
  // The server may run as another user (root → postgres): let it reach the directory. Its socket
  // goes into its own data directory, the one place it can certainly write.
  await chmod(directory, 0o755);
  const socketDirectory = options.unixSocket === true ? path.join(directory, 'pgdata') : undefined;
  const server = new EmbeddedPostgres(
    {
      dataDir: directory,
      // Stopped and started again on it: a port no other test can be handed meanwhile (ports.ts).
      port: await portOutsideEphemeralRange(),
      password: 'test',
      database: 'kalypso',
      settings: { ...CRASH_SAFE_SETTINGS, ...(socketDirectory === undefined ? {} : { unix_socket_directories: socketDirectory }) },
    },
    createLogger('silent'),
  );
  await server.start();
  return {
    server,
    socketDirectory,
    remove: async () => {
      await server.stop();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
