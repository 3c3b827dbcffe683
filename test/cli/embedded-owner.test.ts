// `npm start` as its users run it, with faults: a second hub on the same data directory, the
// embedded PostgreSQL killed under load or unable to come back, and a hub that was killed and
// left its PostgreSQL running. Real processes, real PostgreSQL, the SDK's exporters.
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ExportResultCode } from '@opentelemetry/core';
import type { LogRecordExporter } from '@opentelemetry/sdk-logs';
import { stateLog } from '../support/kalypso-logs.ts';
import { buildLogRecords, createExporter, EXPORTER_KINDS, exportLogs } from '../support/otlp-client.ts';
import {
  type CliProcess,
  embeddedServeFlags,
  type EmbeddedHubPorts as Ports,
  freeEmbeddedHubPorts as freePorts,
  runCli,
  waitReady,
} from '../support/hub-process.ts';
import { chunks, expectedCurrent, expectedHistory, type Report, reportSet, seededRandom, shuffled } from '../support/report-stream.ts';
import { randomName } from '../support/random-ids.ts';
import { asReports, queryAt, storedCurrent, storedHistory } from '../support/stored-reports.ts';
import { waitFor } from '../support/wait-for.ts';

let dataDir: string;
const running: CliProcess[] = [];

/** `kalypso-hub serve` on the embedded PostgreSQL, as `npm start` runs it. */
function serve(ports: Ports, extra: readonly string[] = []): CliProcess {
  const hub = runCli(['serve', ...embeddedServeFlags(dataDir, ports), '--kube', 'off', ...extra], { DATABASE_URL: '' });
  running.push(hub);
  return hub;
}

const embeddedUrl = (ports: Ports) => `postgres://postgres:kalypso@127.0.0.1:${ports.pg}/kalypso`;
const postmasterPid = async () => Number((await readFile(path.join(dataDir, 'pgdata', 'postmaster.pid'), 'utf8')).split('\n')[0]);
const metric = async (ports: Ports, name: string) => {
  const text = await (await fetch(`http://127.0.0.1:${ports.http}/metrics`)).text();
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
};
const health = async (ports: Ports) => {
  const response = await fetch(`http://127.0.0.1:${ports.http}/healthz`);
  return { status: response.status, body: (await response.json()) as { status?: string; error?: { message: string } } };
};

async function stop(hub: CliProcess): Promise<void> {
  if (hub.process.exitCode !== null || hub.process.signalCode !== null) return;
  hub.process.kill('SIGTERM');
  await hub.exited;
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'kalypso-owner-'));
  await chmod(dataDir, 0o755);
});

afterEach(async () => {
  for (const hub of running.splice(0)) await stop(hub);
});

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe('one owner per data directory', () => {
  it('refuses a second hub on the same data directory, naming the running one, and touches nothing', async () => {
    const ports = await freePorts();
    const first = serve(ports);
    await waitReady(ports.http, first, 60_000);
    const postgres = await postmasterPid();

    // The issue asks for "within a second" of the hub's own work. Starting Node and loading the CLI
    // alone takes about 1 s here when idle, and several when other test files share the cores; so
    // the refusal is timed against a CLI started beside it that only refuses an unknown option.
    const secondPorts = await freePorts();
    const timed = async (cli: CliProcess, started: number) => ({ code: await cli.exited, ms: Date.now() - started });
    const started = Date.now();
    const second = serve(secondPorts);
    const unknownOption = runCli(['serve', '--no-such-option']);
    const [refused, baseline] = await Promise.all([timed(second, started), timed(unknownOption, started)]);
    expect(refused.code).toBe(1);
    expect(baseline.code).toBe(2);
    expect(second.output()).toContain(`data directory ${dataDir} is in use by the hub with pid ${first.process.pid}`);
    expect(second.output()).toContain(`UI on port ${ports.http}`);
    // It gave up before starting anything: no PostgreSQL of its own, the first one untouched.
    expect(second.output()).not.toContain('embedded PostgreSQL');
    expect(refused.ms - baseline.ms).toBeLessThan(1_000);
    // Nor does `migrate` take the running hub's server.
    const migrate = runCli(['migrate', '--data-dir', dataDir, '--embedded-pg-port', String((await freePorts()).pg)], { DATABASE_URL: '' });
    expect(await migrate.exited).toBe(1);
    expect(migrate.output()).toContain(`is in use by the hub with pid ${first.process.pid}`);
    expect(await postmasterPid()).toBe(postgres);
    await waitReady(ports.http, first, 5_000);
    const exporter = createExporter('grpc', ports);
    const result = await exportLogs(exporter, await buildLogRecords([stateLog({ host: randomName('host'), commit: randomName('c'), at: new Date() })]));
    expect(result.code).toBe(ExportResultCode.SUCCESS);
    await exporter.shutdown();
  }, 90_000);

  it('takes the directory over from a hub that was killed, stopping the PostgreSQL it left running', async () => {
    const ports = await freePorts();
    const killed = serve(ports);
    await waitReady(ports.http, killed, 60_000);
    const leftover = await postmasterPid();
    killed.process.kill('SIGKILL');
    await killed.exited;
    // Its server runs on, in its own process group.
    expect(() => process.kill(leftover, 0)).not.toThrow();

    const nextPorts = await freePorts();
    const next = serve(nextPorts);
    await waitReady(nextPorts.http, next, 60_000);
    expect(next.output()).toContain('taking over the data directory from a hub that is gone');
    expect(() => process.kill(leftover, 0)).toThrow();
    expect(await postmasterPid()).not.toBe(leftover);
  }, 90_000);

  it('stops its PostgreSQL and frees the directory when its terminal closes (SIGHUP)', async () => {
    const ports = await freePorts();
    const hub = serve(ports);
    await waitReady(ports.http, hub, 60_000);
    const postgres = await postmasterPid();
    hub.process.kill('SIGHUP');
    expect(await hub.exited).toBe(0);
    expect(hub.output()).toContain('shutdown complete');
    expect(() => process.kill(postgres, 0)).toThrow();
    await expect(readFile(path.join(dataDir, 'hub.lock'), 'utf8')).rejects.toThrow(/ENOENT/);
  }, 90_000);
});

describe('supervised embedded PostgreSQL', () => {
  it('brings a killed PostgreSQL back by itself under load, stores every acknowledged record once, and counts the restart', async () => {
    const ports = await freePorts();
    const hub = serve(ports);
    await waitReady(ports.http, hub, 60_000);
    const prefix = randomName('crash');
    const reports = shuffled(reportSet(prefix, 12, 6), seededRandom(7));
    const batches = chunks(reports, 6);
    const exporters: LogRecordExporter[] = EXPORTER_KINDS.map((kind) => createExporter(kind, ports));
    const acknowledged: Report[] = [];
    let sent = 0;
    // Each exporter sends its share one batch after another; a batch the SDK gave up on is sent
    // again, as a collector's sending queue would.
    const streams = exporters.map(async (exporter, index) => {
      for (let b = index; b < batches.length; b += exporters.length) {
        const records = await buildLogRecords(
          batches[b]!.map((report) => stateLog({ host: report.host, reconciler: report.reconciler, commit: report.commit, status: report.status, at: report.at })),
        );
        for (let attempt = 0, backoffMs = 100; ; attempt += 1, backoffMs = Math.min(backoffMs * 2, 2_000)) {
          const result = await exportLogs(exporter, records);
          if (result.code === ExportResultCode.SUCCESS) break;
          if (attempt >= 20) throw new Error(`batch ${b} refused 20 times: ${String(result.error)}`);
          await new Promise((resolve) => setTimeout(resolve, backoffMs));
        }
        acknowledged.push(...batches[b]!);
        sent += 1;
      }
    });
    const done = Promise.all(streams);
    done.catch(() => undefined);

    await waitFor(() => sent >= 3, 'a few batches stored before the crash', 30_000);
    const crashed = await postmasterPid();
    // Down for a few seconds (its first restarts cannot read the data), so that every exporter
    // and the hub's own periodic work meet the outage. The postmaster and its backends die
    // together (its process group) before the data is made unreadable: a backend still serving a
    // query would otherwise answer "could not open file: Permission denied", which is not an
    // outage but a server that lost its files (seen once, in a fresh-clone run).
    const pgdata = path.join(dataDir, 'pgdata');
    process.kill(-crashed, 'SIGKILL');
    await chmod(pgdata, 0o000);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    await chmod(pgdata, 0o700);
    await waitFor(async () => (await metric(ports, 'kalypso_embedded_postgres_restarts_total')) === 1, 'the restart counted', 30_000);
    expect(await postmasterPid()).not.toBe(crashed);
    await done;
    for (const exporter of exporters) await exporter.shutdown();

    expect(hub.process.exitCode).toBeNull();
    expect(acknowledged).toHaveLength(reports.length);
    const query = queryAt(embeddedUrl(ports));
    expect(await storedHistory(query, prefix)).toEqual(expectedHistory(reports));
    expect(asReports(await storedCurrent(query, prefix))).toEqual(expectedCurrent(reports));
    expect(await metric(ports, 'kalypso_embedded_postgres_up')).toBe(1);
    expect((await health(ports)).status).toBe(200);
    expect(hub.output()).toContain('embedded PostgreSQL stopped unexpectedly; restarting it');
    // An outage is not a bug: no stack traces in the log.
    expect(hub.output()).not.toContain('"stack":');
  }, 120_000);

  it('fails /healthz when PostgreSQL cannot come back within the bound, and recovers when it can', async () => {
    const ports = await freePorts();
    const hub = serve(ports, ['--embedded-pg-restart-timeout', '3s']);
    await waitReady(ports.http, hub, 60_000);
    const pgdata = path.join(dataDir, 'pgdata');
    // The server (run as `postgres` when the hub is root) can no longer read its data.
    await chmod(pgdata, 0o000);
    try {
      process.kill(await postmasterPid(), 'SIGKILL');
      await waitFor(() => hub.output().includes('embedded PostgreSQL did not restart'), 'a failed restart', 20_000);
      expect((await health(ports)).status).toBe(200);
      const unhealthy = await waitFor(async () => {
        const answer = await health(ports);
        return answer.status === 503 ? answer : undefined;
      }, '/healthz failing after the bound', 20_000);
      expect(unhealthy.body.error?.message).toMatch(/^the embedded PostgreSQL has been down for \d+ s and could not be restarted: /);
      expect(await metric(ports, 'kalypso_embedded_postgres_up')).toBe(0);
    } finally {
      await chmod(pgdata, 0o700);
    }
    await waitFor(async () => (await health(ports)).status === 200, '/healthz back once PostgreSQL restarts', 30_000);
    await waitReady(ports.http, hub, 30_000);
  }, 120_000);
});
