// The start-up banner: printed when stdout is a terminal (here a pseudo-terminal from util-linux's
// `script`), never into a pipe; and what it says for the other set-ups (TLS, external database).
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBanner } from '../../src/cli/start-banner.ts';
import { embeddedServeFlags, freeEmbeddedHubPorts, freeHubPorts, killHub, spawnHub, waitHubReady } from '../support/hub-process.ts';
import { CLI } from '../support/run-command.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { waitFor } from '../support/wait-for.ts';

const STOP_LINE = 'Ctrl-C stops it';
let dataDir: string;
let testDb: TestDatabase;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'kalypso-banner-'));
  await chmod(dataDir, 0o755);
  testDb = await createTestDatabase();
});

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
  await testDb.drop();
});

// eslint-disable-next-line no-control-regex
const withoutColours = (text: string): string => text.replace(/\u001b\[[0-9;]*m/g, '');

describe('the start-up banner', () => {
  it('in a terminal: UI, OTLP endpoints, psql, data directory and Ctrl-C — and Ctrl-C does stop the hub', async () => {
    const ports = await freeEmbeddedHubPorts();
    // `exec`: the shell that script starts becomes the hub, so the terminal's Ctrl-C reaches the hub
    // alone. Without it a shell that stays as the parent (dash, CI's /bin/sh) dies of the SIGINT
    // itself, and script reports 130 whatever the hub did. SHELL is pinned so every machine runs
    // the same shell.
    const command = [
      'exec',
      process.execPath, '--disable-warning=ExperimentalWarning', CLI, 'serve', ...embeddedServeFlags(dataDir, ports), '--kube', 'off',
    ].join(' ');
    // script runs the command with a pseudo-terminal as its stdin and stdout; what we write to
    // script's stdin is typed into that terminal (so \x03 is a Ctrl-C, delivered as SIGINT).
    const terminal = spawn('script', ['--quiet', '--return', '--command', command, '/dev/null'], {
      env: { ...process.env, SHELL: '/bin/sh', DATABASE_URL: '', KALYPSO_LOG_FORMAT: '' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    terminal.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    terminal.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => terminal.once('exit', (code) => resolve(code)));
    try {
      await waitFor(() => output.includes(STOP_LINE), `the banner in:\n${output}`, 60_000);
      const text = withoutColours(output).replace(/\r/g, '');
      const banner = text.slice(text.indexOf('Kalypso Observability Hub is running.'));
      expect(banner).toMatch(new RegExp(`^ {2}Web UI +http://127\\.0\\.0\\.1:${ports.http}/$`, 'm'));
      expect(banner).toMatch(new RegExp(`^ {2}OTLP/gRPC +http://127\\.0\\.0\\.1:${ports.otlpGrpc}$`, 'm'));
      expect(banner).toMatch(new RegExp(`^ {2}OTLP/HTTP +http://127\\.0\\.0\\.1:${ports.otlpHttp}/v1/logs$`, 'm'));
      expect(banner).toMatch(new RegExp(`^ {2}PostgreSQL +psql postgres://postgres:kalypso@127\\.0\\.0\\.1:${ports.pg}/kalypso$`, 'm'));
      expect(banner).toMatch(new RegExp(`^ {2}Data +${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
      // The psql line works as printed.
      const client = new pg.Client({ connectionString: `postgres://postgres:kalypso@127.0.0.1:${ports.pg}/kalypso` });
      await client.connect();
      await client.end();
      // In a terminal the log lines are the readable ones by default.
      expect(text.split('\n').filter((line) => line.trimStart().startsWith('{'))).toEqual([]);
      expect(text).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: HTTP API listening/m);

      terminal.stdin.write('\x03');
      expect(await exited).toBe(0);
      expect(withoutColours(output)).toContain('shutdown complete');
    } finally {
      // After a failed assertion: Ctrl-C, so that the hub stops its embedded PostgreSQL too (a
      // killed terminal would leave that server running on a data directory about to be deleted).
      if (terminal.exitCode === null) {
        terminal.stdin.write('\x03');
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 30_000))]);
        if (terminal.exitCode === null) terminal.kill('SIGKILL');
      }
    }
  }, 120_000);

  it('not into a pipe', async () => {
    const hub = spawnHub(testDb.url, await freeHubPorts());
    try {
      await waitHubReady(hub);
      // The banner would follow this line at once.
      await waitFor(() => hub.output().includes('Kalypso Observability Hub ready'), 'the hub’s start-up line');
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(hub.output()).not.toContain(STOP_LINE);
      expect(hub.output()).not.toContain('Kalypso Observability Hub is running.');
    } finally {
      hub.process.kill('SIGTERM');
      await hub.exited;
      await killHub(hub);
    }
  });

  it('with TLS on a wildcard address and an external database: https, localhost, no credentials, no data directory', () => {
    const banner = startBanner({
      listenHost: '0.0.0.0',
      tls: true,
      ports: { http: 8443, otlpGrpc: 4317, otlpHttp: 4318 },
      databaseUrl: 'postgres://kalypso:s3cret@db.example.com:5432/kalypso?sslmode=verify-full',
      embedded: undefined,
    });
    expect(banner).toMatch(/^ {2}Web UI +https:\/\/localhost:8443\/$/m);
    expect(banner).toMatch(/^ {2}OTLP\/gRPC +https:\/\/localhost:4317$/m);
    expect(banner).toMatch(/^ {2}OTLP\/HTTP +https:\/\/localhost:4318\/v1\/logs$/m);
    expect(banner).toMatch(/^ {2}PostgreSQL +external, postgres:\/\/db\.example\.com:5432\/kalypso$/m);
    expect(banner).not.toContain('s3cret');
    expect(banner).not.toMatch(/^ {2}Data /m);
    expect(startBanner({ listenHost: '::1', tls: false, ports: { http: 1, otlpGrpc: 2, otlpHttp: 3 }, databaseUrl: 'postgres://h/d', embedded: undefined })).toContain(
      'http://[::1]:1/',
    );
  });
});
