// A database reached through its Unix socket, with the URL form pg and libpq take for it:
// credentials, no host, the socket's directory in the query (postgres://user:secret@/db?host=/run/postgresql).
// The hub refused that URL before (WHATWG URL rejects credentials without a host) though its driver
// takes it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBanner } from '../../src/cli/start-banner.ts';
import { resolveHubConfig } from '../../src/settings.ts';
import type { RunningHub } from '../../src/hub.ts';
import { DatabaseStatus } from '../../src/store/database-status.ts';
import { apiGet } from '../support/api-get.ts';
import { stateLog } from '../support/kalypso-logs.ts';
import { buildLogRecords, createExporter, ExportResultCode, exportLogs } from '../support/otlp-client.ts';
import { type OwnPostgres, startOwnPostgres } from '../support/own-postgres.ts';
import { randomCommit, randomName } from '../support/random-ids.ts';
import { startTestHub } from '../support/test-hub.ts';

let own: OwnPostgres;
let hub: RunningHub | undefined;
let url: string;

beforeAll(async () => {
  own = await startOwnPostgres({ unixSocket: true });
  const port = new URL(own.server.url).port;
  url = `postgres://postgres:test@/kalypso?host=${encodeURIComponent(own.socketDirectory!)}&port=${port}`;
}, 60_000);

afterAll(async () => {
  await hub?.stop();
  await own.remove();
});

describe('a database URL for a Unix socket', () => {
  it('is taken as it is, and the hub stores and answers through the socket', async () => {
    expect(resolveHubConfig(['--database-url', url], {}).databaseUrl).toBe(url);
    hub = await startTestHub(url);
    const exporter = createExporter('grpc', hub.ports);
    const host = randomName('host');
    const result = await exportLogs(exporter, await buildLogRecords([stateLog({ host, commit: randomCommit(), at: new Date() })]));
    await exporter.shutdown();
    expect(result.code, String(result.error)).toBe(ExportResultCode.SUCCESS);
    const { body } = await apiGet(hub, `/hosts/${host}/state`);
    expect(body.reconcilers).toHaveLength(1);
  });

  it('is shown at start by its database and socket, without its credentials', () => {
    const banner = startBanner({ listenHost: '127.0.0.1', tls: false, ports: { http: 8080, otlpGrpc: 4317, otlpHttp: 4318 }, databaseUrl: url, embedded: undefined });
    expect(banner).toContain(`external, kalypso at ${own.socketDirectory} (Unix socket, port ${new URL(own.server.url).port})`);
    expect(banner).not.toContain('test@');
  });

  it('is named by its socket directory when the database cannot be reached', () => {
    expect(new DatabaseStatus(url).address).toBe(`${own.socketDirectory} (Unix socket, port ${new URL(own.server.url).port})`);
    expect(new DatabaseStatus('postgres://kalypso:secret@db.example:6432/kalypso').address).toBe('db.example:6432');
    expect(new DatabaseStatus('postgresql:///kalypso?host=/run/postgresql').address).toBe('/run/postgresql (Unix socket, port 5432)');
  });

  it('still refuses what is no PostgreSQL URL', () => {
    expect(() => resolveHubConfig(['--database-url', 'mysql://x@/db'], {})).toThrow(/invalid --database-url: must be a postgres/);
    expect(() => resolveHubConfig(['--database-url', 'not a url'], {})).toThrow(/invalid --database-url: must be a postgres/);
  });
});
