// Secrets never reach the logs: tokens, the database password and the embedded server's chosen
// password stay out of everything the hub prints — at start-up, at trace level, on refused
// requests, on database errors and on bad settings.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, waitReady } from '../support/hub-process.ts';
import { stateLog } from '../support/kalypso-logs.ts';
import { buildLogRecords, createExporter, exportLogs } from '../support/otlp-client.ts';
import { freePort } from '../support/ports.ts';
import { minute } from '../support/records.ts';

const SECRETS = {
  ingestToken: 'ingest-secret-7d1c9a',
  apiToken: 'api-secret-52be04',
  embeddedPassword: 'pg-secret-e83f17',
  databasePassword: 'db-secret-19a6cc',
  presentedToken: 'presented-secret-c4d2',
};

const leaked = (output: string): string[] => Object.values(SECRETS).filter((secret) => output.includes(secret));

let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'kalypso-secrets-'));
  await chmod(dataDir, 0o755);
});

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe('secrets in logs', () => {
  it('are never printed by a hub at trace level, through start-up, refused and accepted requests and shutdown', async () => {
    const ports = { http: await freePort(), otlpGrpc: await freePort(), otlpHttp: await freePort() };
    const hub = runCli(
      [
        'serve',
        '--data-dir', dataDir,
        '--embedded-pg-port', String(await freePort()),
        '--listen-host', '127.0.0.1',
        '--http-port', String(ports.http),
        '--otlp-grpc-port', String(ports.otlpGrpc),
        '--otlp-http-port', String(ports.otlpHttp),
        '--log-level', 'trace',
      ],
      {
        KALYPSO_INGEST_TOKEN: SECRETS.ingestToken,
        KALYPSO_API_TOKEN: SECRETS.apiToken,
        KALYPSO_EMBEDDED_PG_PASSWORD: SECRETS.embeddedPassword,
      },
    );
    try {
      await waitReady(ports.http, hub);
      const api = `http://127.0.0.1:${ports.http}/api/v1/environments`;
      expect((await fetch(api, { headers: { authorization: `Bearer ${SECRETS.presentedToken}` } })).status).toBe(401);
      expect((await fetch(api, { headers: { authorization: `Bearer ${SECRETS.apiToken}` } })).status).toBe(200);
      expect((await fetch(`${api}?cursor=${SECRETS.presentedToken}`, { headers: { authorization: `Bearer ${SECRETS.apiToken}` } })).status).toBe(200);
      const records = await buildLogRecords([stateLog({ host: 'secret-host', commit: 'c1', at: minute(1) })]);
      for (const token of [SECRETS.presentedToken, SECRETS.ingestToken]) {
        for (const kind of ['grpc', 'http-protobuf'] as const) {
          const exporter = createExporter(kind, ports, { token });
          await exportLogs(exporter, records);
          await exporter.shutdown();
        }
      }
    } finally {
      hub.process.kill('SIGTERM');
      expect(await hub.exited).toBe(0);
    }
    const output = hub.output();
    // The run logged its start, requests and shutdown, and said how to connect — with the chosen
    // password hidden.
    expect(output).toContain('HTTP API listening');
    expect(output).toContain('shutdown complete');
    expect(output).toMatch(/psql postgres:\/\/postgres:\*\*\*\*@127\.0\.0\.1:\d+\/kalypso/);
    expect(leaked(output)).toEqual([]);
  }, 60_000);

  it('are never printed when the database is unreachable or a setting is bad', async () => {
    const closedPort = await freePort();
    const databaseUrl = `postgres://kalypso:${SECRETS.databasePassword}@127.0.0.1:${closedPort}/kalypso`;
    const http = await freePort();
    const unreachable = runCli(['serve', '--listen-host', '127.0.0.1', '--http-port', String(http), '--log-level', 'trace'], {
      DATABASE_URL: databaseUrl,
      KALYPSO_INGEST_TOKEN: SECRETS.ingestToken,
    });
    const deadline = Date.now() + 20_000;
    while (!unreachable.output().includes('will retry migrations') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    unreachable.process.kill('SIGTERM');
    await unreachable.exited;
    expect(unreachable.output()).toContain('will retry migrations');
    expect(leaked(unreachable.output())).toEqual([]);

    const badPort = runCli(['serve', '--database-url', databaseUrl, '--http-port', 'eighty']);
    expect(await badPort.exited).toBe(2);
    expect(badPort.output()).toContain('--http-port');
    const badUrl = runCli(['serve', '--database-url', `mysql://kalypso:${SECRETS.databasePassword}@db/kalypso`]);
    expect(await badUrl.exited).toBe(2);
    expect(badUrl.output()).toMatch(/--database-url.*\(hidden\)/);
    const badToken = runCli(['serve', '--http-port', '-1'], { KALYPSO_API_TOKEN: SECRETS.apiToken });
    expect(await badToken.exited).toBe(2);
    expect(leaked(badPort.output() + badUrl.output() + badToken.output())).toEqual([]);
  }, 40_000);
});
