import { describe, expect, it } from 'vitest';
import type { DesiredStateRecord, RealStateRecord } from '../../src/model/deployment-records.ts';
import { normalizeLogsRequest } from '../../src/normalize/otlp-logs.ts';
import type { AnyValue, KeyValues, LogRecordWire, LogsRequestWire } from '../../src/wire/otlp-logs.ts';

const RECEIVED = new Date('2026-11-20T10:00:00.000Z');
const HEX = '4f6e2a9c1d3b5e7f9a0b2c4d6e8f0a1b3c5d7e9f';

function kv(entries: Record<string, AnyValue>): KeyValues {
  return Object.assign(Object.create(null) as Record<string, AnyValue>, entries);
}

function record(attributes: Record<string, AnyValue>, options: Partial<LogRecordWire> = {}): LogRecordWire {
  return {
    timeUnixNano: 1_763_632_442_123_456_789n,
    observedTimeUnixNano: 0n,
    eventName: 'kalypso.deployment.state',
    body: 'Applied revision',
    ...options,
    attributes: kv(attributes),
  };
}

function request(resource: Record<string, AnyValue>, records: LogRecordWire[]): LogsRequestWire {
  return { resourceLogs: [{ resourceAttributes: kv(resource), scopeLogs: [{ logRecords: records }] }] };
}

const STATE = {
  'kalypso.reconciler.name': 'flux-system/hello-world',
  'kalypso.reconciler.type': 'flux',
  'kalypso.manifests.endpoint': 'https://github.com/contoso/gitops.git/dev/./hello-world/',
  'vcs.ref.head.revision': `dev@sha1:${HEX.toUpperCase()}`,
  'kalypso.deployment.status': 'success',
};

describe('normalizeLogsRequest: kalypso.deployment.state', () => {
  it('maps a complete report', () => {
    const result = normalizeLogsRequest(request({ 'k8s.cluster.name': 'aks-dev-eus' }, [record(STATE)]), RECEIVED);
    expect(result.rejected).toEqual([]);
    expect(result.records).toEqual<RealStateRecord[]>([
      {
        kind: 'real-state',
        host: { name: 'aks-dev-eus', type: undefined },
        reconciler: { name: 'flux-system/hello-world', type: 'flux' },
        manifests: { storageType: 'git', endpoint: 'https://github.com/contoso/gitops/dev/hello-world' },
        commitId: HEX,
        status: 'success',
        statusMessage: 'Applied revision',
        observedAt: new Date('2025-11-20T09:54:02.123Z'),
      },
    ]);
  });

  it('takes host.name when there is no cluster name, and the host type from resource or record', () => {
    const [fromResource] = normalizeLogsRequest(
      request({ 'host.name': 'vm-berlin-7', 'kalypso.host.type': 'vm' }, [record(STATE)]),
      RECEIVED,
    ).records as RealStateRecord[];
    expect(fromResource?.host).toEqual({ name: 'vm-berlin-7', type: 'vm' });
  });

  it('composes the endpoint from the VCS semantic conventions', () => {
    const attributes: Record<string, AnyValue> = { ...STATE, 'kalypso.manifests.endpoint': undefined };
    delete attributes['kalypso.manifests.endpoint'];
    Object.assign(attributes, {
      'vcs.repository.url.full': 'https://github.com/contoso/gitops.git',
      'vcs.ref.head.name': 'prod',
      'kalypso.manifests.path': './stores/berlin',
    });
    const [state] = normalizeLogsRequest(request({ 'k8s.cluster.name': 'c1' }, [record(attributes)]), RECEIVED)
      .records as RealStateRecord[];
    expect(state?.manifests.endpoint).toBe('https://github.com/contoso/gitops/prod/stores/berlin');
  });

  it('accepts the semantic-conventions status spelling and the commit alias', () => {
    const attributes = { ...STATE, 'kalypso.deployment.status': 'failed', 'vcs.ref.head.revision': undefined, 'kalypso.gitops.commit_id': HEX };
    delete attributes['vcs.ref.head.revision'];
    const [state] = normalizeLogsRequest(request({ 'k8s.cluster.name': 'c1' }, [record(attributes)]), RECEIVED)
      .records as RealStateRecord[];
    expect(state?.status).toBe('failure');
    expect(state?.commitId).toBe(HEX);
  });

  it('reads a status in any case, with - or _, and by its synonyms', () => {
    const spellings = { success: 'success', SUCCESS: 'success', 'In-Progress': 'in_progress', IN_PROGRESS: 'in_progress', Progressing: 'in_progress', Failed: 'failure' };
    for (const [sent, stored] of Object.entries(spellings)) {
      const [state] = normalizeLogsRequest(request({ 'k8s.cluster.name': 'c1' }, [record({ ...STATE, 'kalypso.deployment.status': sent })]), RECEIVED)
        .records as RealStateRecord[];
      expect(state?.status, sent).toBe(stored);
    }
    const refused = normalizeLogsRequest(request({ 'k8s.cluster.name': 'c1' }, [record({ ...STATE, 'kalypso.deployment.status': 'done' })]), RECEIVED);
    expect(refused.rejected[0]?.reason).toContain('kalypso.deployment.status must be one of success, failure, in_progress');
  });

  it('names the first spelling of a field that has none of its spellings', () => {
    const attributes: Record<string, AnyValue> = { ...STATE };
    delete attributes['vcs.ref.head.revision'];
    const result = normalizeLogsRequest(request({ 'k8s.cluster.name': 'c1' }, [record(attributes)]), RECEIVED);
    expect(result.rejected[0]?.reason).toBe('kalypso.deployment.state: vcs.ref.head.revision is missing');
  });

  it('falls back to the observed time, then to the receive time', () => {
    const observed = normalizeLogsRequest(
      request({ 'k8s.cluster.name': 'c1' }, [record(STATE, { timeUnixNano: 0n, observedTimeUnixNano: 1_763_630_049_000_000_000n })]),
      RECEIVED,
    ).records[0] as RealStateRecord;
    expect(observed.observedAt.toISOString()).toBe('2025-11-20T09:14:09.000Z');
    const none = normalizeLogsRequest(request({ 'k8s.cluster.name': 'c1' }, [record(STATE, { timeUnixNano: 0n })]), RECEIVED)
      .records[0] as RealStateRecord;
    expect(none.observedAt).toEqual(RECEIVED);
  });

  it('reads the kind from the event.name attribute of older senders', () => {
    const result = normalizeLogsRequest(
      request({ 'k8s.cluster.name': 'c1' }, [record({ ...STATE, 'event.name': 'kalypso.deployment.state' }, { eventName: '' })]),
      RECEIVED,
    );
    expect(result.records).toHaveLength(1);
  });

  it.each([
    ['no host', {}, STATE, 'resource attribute k8s.cluster.name (or host.name) is missing'],
    ['no reconciler name', { 'k8s.cluster.name': 'c1' }, { ...STATE, 'kalypso.reconciler.name': '' }, 'kalypso.reconciler.name is missing'],
    ['unknown reconciler type', { 'k8s.cluster.name': 'c1' }, { ...STATE, 'kalypso.reconciler.type': 'helm' }, 'kalypso.reconciler.type must be one of flux, argocd, arc, wo, custom (got "helm")'],
    ['bad status', { 'k8s.cluster.name': 'c1' }, { ...STATE, 'kalypso.deployment.status': 'done' }, 'kalypso.deployment.status must be one of success, failure, in_progress (got "done")'],
    ['commit of the wrong type', { 'k8s.cluster.name': 'c1' }, { ...STATE, 'vcs.ref.head.revision': 42 }, 'vcs.ref.head.revision must be a string, got number'],
    ['no endpoint', { 'k8s.cluster.name': 'c1' }, { ...STATE, 'kalypso.manifests.endpoint': undefined }, 'kalypso.manifests.endpoint is missing'],
    ['NUL in a name', { 'k8s.cluster.name': 'c\u00001' }, STATE, 'k8s.cluster.name contains a NUL character'],
    ['oversized name', { 'k8s.cluster.name': 'x'.repeat(300) }, STATE, 'k8s.cluster.name is longer than 253 characters'],
  ])('rejects a report with %s, naming the field', (_name, resource, attributes, reason) => {
    const result = normalizeLogsRequest(request(resource, [record(attributes)]), RECEIVED);
    expect(result.records).toEqual([]);
    expect(result.rejected).toEqual([
      { position: 'resource_logs[0].scope_logs[0].log_records[0]', reason: `kalypso.deployment.state: ${reason}` },
    ]);
  });

  it('treats a report without status as in progress, never as success', () => {
    const attributes = { ...STATE } as Record<string, AnyValue>;
    delete attributes['kalypso.deployment.status'];
    const [state] = normalizeLogsRequest(request({ 'k8s.cluster.name': 'c1' }, [record(attributes)]), RECEIVED)
      .records as RealStateRecord[];
    expect(state?.status).toBe('in_progress');
  });

  it('cuts very long status messages instead of rejecting the report', () => {
    const [state] = normalizeLogsRequest(request({ 'k8s.cluster.name': 'c1' }, [record(STATE, { body: 'e'.repeat(20_000) })]), RECEIVED)
      .records as RealStateRecord[];
    expect(state?.statusMessage).toHaveLength(16_384);
  });
});

describe('normalizeLogsRequest: kalypso.deployment.descriptor', () => {
  const SPEC = {
    workload: {
      name: 'hello-world',
      source: { repo: 'https://github.com/kaizentm/hello-world', branch: 'main', path: '.' },
      application: { name: 'greeting-service', workspace: { name: 'kaizentm' } },
    },
    deploymentTarget: {
      name: 'functional-test',
      environment: 'dev',
      manifests: { repo: 'https://github.com/kaizentm/hello-world-gitops', branch: 'dev', path: 'functional-test' },
    },
    workloadVersion: { version: '0.0.1', build: 'build-1', commit: 'ca9ee9d0ff9ec52b998fdcf64e128c84ddd0e661', buildTime: '2023-04-27T23:25:05Z' },
  };
  const toKv = (value: unknown): AnyValue =>
    typeof value === 'object' && value !== null
      ? kv(Object.fromEntries(Object.entries(value).map(([key, item]) => [key, toKv(item)])))
      : (value as AnyValue);
  const expected: DesiredStateRecord = {
    kind: 'desired-state',
    workspace: 'kaizentm',
    application: 'greeting-service',
    workload: { name: 'hello-world', source: { repo: 'https://github.com/kaizentm/hello-world', branch: 'main', path: '.' } },
    environment: 'dev',
    deploymentTarget: {
      name: 'functional-test',
      manifests: { storageType: 'git', endpoint: 'https://github.com/kaizentm/hello-world-gitops/dev/functional-test', branch: 'https://github.com/kaizentm/hello-world-gitops/dev', repo: 'https://github.com/kaizentm/hello-world-gitops' },
    },
    workloadVersion: {
      version: '0.0.1',
      build: 'build-1',
      commit: 'ca9ee9d0ff9ec52b998fdcf64e128c84ddd0e661',
      buildTime: new Date('2023-04-27T23:25:05Z'),
    },
    commitId: HEX,
    assignedAt: new Date('2025-11-20T09:54:02.123Z'),
  };

  it.each([
    ['a kvlist body', toKv(SPEC)],
    ['a JSON string body', JSON.stringify(SPEC)],
  ])('maps %s', (_name, body) => {
    const result = normalizeLogsRequest(
      request({ 'service.name': 'cd-pipeline' }, [
        record({ 'vcs.ref.head.revision': `dev@sha1:${HEX}` }, { eventName: 'kalypso.deployment.descriptor', body }),
      ]),
      RECEIVED,
    );
    expect(result.rejected).toEqual([]);
    expect(result.records).toEqual([expected]);
  });

  it('takes the commit from the spec when the record has none', () => {
    const body = JSON.stringify({ ...SPEC, deploymentTarget: { ...SPEC.deploymentTarget, manifests: { ...SPEC.deploymentTarget.manifests, commit: HEX } } });
    const result = normalizeLogsRequest(request({}, [record({}, { eventName: 'kalypso.deployment.descriptor', body })]), RECEIVED);
    expect((result.records[0] as DesiredStateRecord).commitId).toBe(HEX);
  });

  it.each([
    ['no commit anywhere', {}, SPEC, 'vcs.ref.head.revision (or body.deploymentTarget.manifests.commit) is missing'],
    ['no environment', { 'vcs.ref.head.revision': HEX }, { ...SPEC, deploymentTarget: { ...SPEC.deploymentTarget, environment: undefined } }, 'body.deploymentTarget.environment is missing'],
    ['a workload that is not a map', { 'vcs.ref.head.revision': HEX }, { ...SPEC, workload: 'hello' }, 'body.workload must be a map, got string'],
    ['a bad build time', { 'vcs.ref.head.revision': HEX }, { ...SPEC, workloadVersion: { ...SPEC.workloadVersion, buildTime: 'yesterday' } }, 'body.workloadVersion.buildTime must be an RFC 3339 timestamp (got "yesterday")'],
  ])('rejects a descriptor with %s', (_name, attributes, spec, reason) => {
    const result = normalizeLogsRequest(
      request({}, [record(attributes, { eventName: 'kalypso.deployment.descriptor', body: JSON.stringify(spec) })]),
      RECEIVED,
    );
    expect(result.rejected.map((rejection) => rejection.reason)).toEqual([`kalypso.deployment.descriptor: ${reason}`]);
  });
});

describe('normalizeLogsRequest: mixed requests', () => {
  it('keeps the good records, names the bad ones, and counts ordinary logs', () => {
    const result = normalizeLogsRequest(
      {
        resourceLogs: [
          {
            resourceAttributes: kv({ 'k8s.cluster.name': 'c1' }),
            scopeLogs: [
              { logRecords: [record(STATE), record({ ...STATE, 'kalypso.reconciler.name': undefined })] },
              { logRecords: [record({}, { eventName: '', body: 'GET /healthz 200' })] },
            ],
          },
          { resourceAttributes: kv({}), scopeLogs: [{ logRecords: [record(STATE)] }] },
        ],
      },
      RECEIVED,
    );
    expect(result.records).toHaveLength(1);
    expect(result.ignored).toBe(1);
    expect(result.rejected).toEqual([
      {
        position: 'resource_logs[0].scope_logs[0].log_records[1]',
        reason: 'kalypso.deployment.state: kalypso.reconciler.name is missing',
      },
      {
        position: 'resource_logs[1].scope_logs[0].log_records[0]',
        reason: 'kalypso.deployment.state: resource attribute k8s.cluster.name (or host.name) is missing',
      },
    ]);
  });
});
