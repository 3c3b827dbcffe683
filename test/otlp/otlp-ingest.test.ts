// End to end: the official OpenTelemetry SDK exporters → the hub's receivers → PostgreSQL.
import { diag, DiagLogLevel } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { buildLogRecords, createExporter, EXPORTER_KINDS, ExportResultCode, exportLogs } from '../support/otlp-client.ts';
import { descriptorLog, stateLog } from '../support/kalypso-logs.ts';
import { minute } from '../support/records.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';

let testDb: TestDatabase;
let hub: RunningHub;
const warnings: string[] = [];

beforeAll(async () => {
  testDb = await createTestDatabase();
  hub = await startTestHub(testDb.url);
  diag.setLogger(
    {
      error: () => undefined,
      warn: (message: string, ...args: unknown[]) => warnings.push([message, ...args].join(' ')),
      info: () => undefined,
      debug: () => undefined,
      verbose: () => undefined,
    },
    DiagLogLevel.WARN,
  );
});

afterAll(async () => {
  diag.disable();
  await hub.stop();
  await testDb.drop();
});

describe.each(EXPORTER_KINDS)('OTLP ingest through the SDK %s exporter', (kind) => {
  // Each exporter gets its own hosts and environment, so the cases do not see each other's rows.
  const host = (name: string) => `${kind}-${name}`;
  const environment = `env-${kind}`;
  const exporter = () => createExporter(kind, hub.ports, { gzip: kind !== 'http-json' });

  const historyOf = (hostName: string) =>
    testDb.query<{ commit: string; status: string }>(
      `SELECT h.gitops_commit_id AS commit, h.status FROM deployment_state_history h
         JOIN reconciler r ON r.id = h.reconciler_id JOIN host ON host.id = r.host_id
        WHERE host.name = $1 ORDER BY h.observed_at`,
      [hostName],
    );

  it('stores descriptors, then states that correlate with them, before acknowledging', async () => {
    const send = exporter();
    const descriptors = await buildLogRecords([
      descriptorLog({ environment, target: `target-${kind}`, version: '1.2.0', commit: `dev@sha1:${'a'.repeat(40)}`, at: minute(0) }),
    ]);
    expect((await exportLogs(send, descriptors)).code).toBe(ExportResultCode.SUCCESS);
    const endpoint = `https://github.com/contoso/hello-world-gitops/dev/target-${kind}`;
    const states = await buildLogRecords([
      stateLog({ host: host('c1'), endpoint, commit: 'a'.repeat(40), at: minute(1) }),
      stateLog({ host: host('c2'), endpoint, commit: `dev/${'a'.repeat(40)}`, status: 'failed', message: 'health check failed', at: minute(2) }),
    ]);
    expect((await exportLogs(send, states)).code).toBe(ExportResultCode.SUCCESS);

    // No waiting: an acknowledged export is committed.
    const rows = await testDb.query(
      `SELECT host.name AS host, v.version, s.status, s.status_message AS message
         FROM deployment_state s
         JOIN reconciler r ON r.id = s.reconciler_id JOIN host ON host.id = r.host_id
         JOIN deployment_target t ON t.manifests_endpoint_id = s.manifests_endpoint_id
         JOIN environment e ON e.id = t.environment_id AND e.name = $1
         JOIN deployment_assignment a ON a.deployment_target_id = t.id AND a.gitops_commit_id = s.gitops_commit_id
         JOIN workload_version v ON v.id = a.workload_version_id
        ORDER BY host.name`,
      [environment],
    );
    expect(rows).toEqual([
      { host: host('c1'), version: '1.2.0', status: 'success', message: 'Applied revision' },
      { host: host('c2'), version: '1.2.0', status: 'failure', message: 'health check failed' },
    ]);
    await send.shutdown();
  });

  it('stores a report delivered twice once', async () => {
    const send = exporter();
    const records = await buildLogRecords([
      stateLog({ host: host('dup'), commit: 'c1', status: 'in_progress', at: minute(1) }),
      stateLog({ host: host('dup'), commit: 'c1', at: minute(2) }),
    ]);
    expect((await exportLogs(send, records)).code).toBe(ExportResultCode.SUCCESS);
    expect((await exportLogs(send, records)).code).toBe(ExportResultCode.SUCCESS);
    expect(await historyOf(host('dup'))).toEqual([
      { commit: 'c1', status: 'in_progress' },
      { commit: 'c1', status: 'success' },
    ]);
    await send.shutdown();
  });

  it('keeps an older report in history without letting it overwrite the current state', async () => {
    const send = exporter();
    await exportLogs(send, await buildLogRecords([stateLog({ host: host('late'), commit: 'c2', at: minute(10) })]));
    await exportLogs(send, await buildLogRecords([stateLog({ host: host('late'), commit: 'c1', status: 'failure', at: minute(5) })]));
    expect(await historyOf(host('late'))).toEqual([
      { commit: 'c1', status: 'failure' },
      { commit: 'c2', status: 'success' },
    ]);
    const current = await testDb.query(
      `SELECT s.gitops_commit_id AS commit, s.status FROM deployment_state s
         JOIN reconciler r ON r.id = s.reconciler_id JOIN host ON host.id = r.host_id WHERE host.name = $1`,
      [host('late')],
    );
    expect(current).toEqual([{ commit: 'c2', status: 'success' }]);
    await send.shutdown();
  });

  it('stores the good records of a mixed request and reports the bad ones as partial success', async () => {
    const send = exporter();
    warnings.length = 0;
    const good = stateLog({ host: host('mixed'), commit: 'c1', at: minute(1) });
    const bad = { ...stateLog({ host: host('mixed'), commit: 'c1', at: minute(1) }), attributes: { 'kalypso.reconciler.name': 'x' } };
    const ordinary = { resource: { 'k8s.cluster.name': host('mixed') }, body: 'GET /healthz 200' };
    const result = await exportLogs(send, await buildLogRecords([good, bad, ordinary]));
    expect(result.code).toBe(ExportResultCode.SUCCESS);
    expect(await historyOf(host('mixed'))).toEqual([{ commit: 'c1', status: 'success' }]);
    const partial = warnings.find((warning) => warning.includes('Partial Success'));
    expect(partial).toBeDefined();
    expect(partial).toMatch(/"rejectedLogRecords":"?1"?/);
    expect(partial).toContain('log_records[1]: kalypso.deployment.state: kalypso.manifests.endpoint is missing');
    await send.shutdown();
  });
});
