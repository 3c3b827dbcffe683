// The hub's connection to an external PostgreSQL over TLS, configured the way libpq users know:
// `sslmode=verify-full&sslrootcert=<CA file>` in DATABASE_URL. The server here is a real
// PostgreSQL with ssl=on; pg_stat_ssl shows whether the hub's connections are encrypted.
import { chmod, chown, copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { generate } from 'selfsigned';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.ts';
import { EmbeddedPostgres } from '../../src/store/embedded/embedded-postgres.ts';
import { postgresRunAs } from '../../src/store/embedded/postgres-binaries.ts';
import { FAST_TEST_SETTINGS } from '../support/global-database.ts';
import { testTls } from '../support/global-tls.ts';
import { freePort } from '../support/ports.ts';
import { startTestHub } from '../support/test-hub.ts';

let directory: string;
let server: EmbeddedPostgres;
let caFile: string;

beforeAll(async () => {
  directory = await mkdtemp(path.join(os.tmpdir(), 'kalypso-pg-tls-'));
  await chmod(directory, 0o755);
  // PostgreSQL insists that its key belongs to the server's user and nobody else can read it.
  const suite = await testTls();
  caFile = suite.certFile;
  const certFile = path.join(directory, 'server.crt');
  const keyFile = path.join(directory, 'server.key');
  await copyFile(suite.certFile, certFile);
  await copyFile(suite.keyFile, keyFile);
  await chmod(keyFile, 0o600);
  const runAs = await postgresRunAs();
  if (runAs !== undefined) {
    await chown(certFile, runAs.uid, runAs.gid);
    await chown(keyFile, runAs.uid, runAs.gid);
  }
  server = new EmbeddedPostgres(
    {
      dataDir: path.join(directory, 'server'),
      port: await freePort(),
      password: 'test',
      database: 'kalypso',
      settings: { ...FAST_TEST_SETTINGS, ssl: 'on', ssl_cert_file: certFile, ssl_key_file: keyFile },
    },
    createLogger('silent'),
  );
  await server.start();
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await rm(directory, { recursive: true, force: true });
});

describe('PostgreSQL over TLS', () => {
  it('connects with sslmode=verify-full and the CA from sslrootcert, every connection encrypted', async () => {
    const hub = await startTestHub(`${server.url}?sslmode=verify-full&sslrootcert=${encodeURIComponent(caFile)}`);
    try {
      const rows = await hub.database.pool.query<{ ssl: boolean; n: number }>(
        `SELECT s.ssl, count(*)::int AS n FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
          WHERE a.application_name = 'kalypso-hub' GROUP BY s.ssl`,
      );
      expect(rows.rows).toEqual([{ ssl: true, n: expect.any(Number) }]);
      expect((await fetch(`http://127.0.0.1:${hub.ports.http}/readyz`)).status).toBe(200);
    } finally {
      await hub.stop();
    }
  });

  it('refuses a server whose certificate the CA did not sign, instead of falling back to plain text', async () => {
    const stranger = await generate([{ name: 'commonName', value: 'stranger' }], { keySize: 2048, algorithm: 'sha256' });
    const strangerCa = path.join(directory, 'stranger.crt');
    await writeFile(strangerCa, stranger.cert);
    await expect(startTestHub(`${server.url}?sslmode=verify-full&sslrootcert=${encodeURIComponent(strangerCa)}`)).rejects.toThrow(
      /certificate/i,
    );
  });
});
