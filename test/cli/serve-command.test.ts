// `kalypso-hub serve` as users run it: embedded PostgreSQL, signals, restarts, bad settings.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdWrites } from '../support/held-writes.ts';
import { stateLog } from '../support/kalypso-logs.ts';
import { buildLogRecords, createExporter, ExportResultCode, exportLogs } from '../support/otlp-client.ts';
import { type EmbeddedHubPorts, embeddedServeFlags, freeEmbeddedHubPorts, runCli, waitReady } from '../support/hub-process.ts';
import { minute } from '../support/records.ts';

let dataDir: string;
let ports: EmbeddedHubPorts;
let flags: string[];

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'kalypso-serve-'));
  await chmod(dataDir, 0o755);
  ports = await freeEmbeddedHubPorts();
  flags = embeddedServeFlags(dataDir, ports);
});

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

const psql = async (sql: string): Promise<unknown[]> => {
  const client = new pg.Client({ connectionString: `postgres://postgres:kalypso@127.0.0.1:${ports.pg}/kalypso` });
  await client.connect();
  try {
    return (await client.query<Record<string, unknown>>(sql)).rows;
  } finally {
    await client.end();
  }
};

describe('kalypso-hub serve', () => {
  it('runs on the embedded PostgreSQL, stores an export, and stops cleanly on SIGTERM', async () => {
    const hub = runCli(['serve', ...flags], { DATABASE_URL: '' });
    await waitReady(ports.http, hub);
    expect(hub.output()).toContain(`psql postgres://postgres:kalypso@127.0.0.1:${ports.pg}/kalypso`);
    const exporter = createExporter('grpc', ports);
    const result = await exportLogs(exporter, await buildLogRecords([stateLog({ host: 'cli-host', commit: 'c1', at: minute(1) })]));
    expect(result.code).toBe(ExportResultCode.SUCCESS);
    await exporter.shutdown();
    expect(await psql('SELECT name FROM host')).toEqual([{ name: 'cli-host' }]);

    hub.process.kill('SIGTERM');
    expect(await hub.exited).toBe(0);
    expect(hub.output()).toContain('shutdown complete');
    // The embedded server stopped with the hub.
    await expect(psql('SELECT 1')).rejects.toThrow(/ECONNREFUSED/);
  });

  it('keeps its data across restarts, and finishes an in-flight export on SIGINT before exiting', async () => {
    const hub = runCli(['serve', ...flags], { DATABASE_URL: '' });
    await waitReady(ports.http, hub);
    expect(await psql('SELECT name FROM host')).toEqual([{ name: 'cli-host' }]);

    // Hold a lock so that the next export is still writing when the signal arrives.
    const blocker = await holdWrites(`postgres://postgres:kalypso@127.0.0.1:${ports.pg}/kalypso`);
    const exporter = createExporter('http-protobuf', ports);
    const pending = exportLogs(exporter, await buildLogRecords([stateLog({ host: 'cli-inflight', commit: 'c2', at: minute(2) })]));
    await new Promise((resolve) => setTimeout(resolve, 500));
    hub.process.kill('SIGINT');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(hub.process.exitCode).toBeNull();
    await blocker.query('COMMIT');
    await blocker.end();

    expect((await pending).code).toBe(ExportResultCode.SUCCESS);
    expect(await hub.exited).toBe(0);
    const restarted = runCli(['serve', ...flags], { DATABASE_URL: '' });
    await waitReady(ports.http, restarted);
    expect(await psql('SELECT name FROM host ORDER BY name')).toEqual([{ name: 'cli-host' }, { name: 'cli-inflight' }]);
    restarted.process.kill('SIGTERM');
    expect(await restarted.exited).toBe(0);
    await exporter.shutdown();
  });

  it('stops at start-up on a bad setting, naming it', async () => {
    const hub = runCli(['serve', '--http-port', 'eighty']);
    expect(await hub.exited).toBe(2);
    expect(hub.output()).toContain('kalypso-hub serve: invalid --http-port: must be a port number from 0 to 65535 (got "eighty")');
  });
});

describe('kalypso-hub migrate', () => {
  it('migrates the database named by DATABASE_URL', async () => {
    const { inject } = await import('vitest');
    const admin = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
    await admin.connect();
    const name = `kalypso_migrate_${process.pid}`;
    await admin.query(`DROP DATABASE IF EXISTS ${name}`);
    await admin.query(`CREATE DATABASE ${name}`);
    try {
      const url = new URL(inject('adminDatabaseUrl'));
      url.pathname = `/${name}`;
      const first = runCli(['migrate'], { DATABASE_URL: url.toString() });
      expect(await first.exited).toBe(0);
      expect(first.output()).toContain('0001_core');
      const again = runCli(['migrate'], { DATABASE_URL: url.toString() });
      expect(await again.exited).toBe(0);
      expect(again.output()).toContain('already up to date');
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  });
});
