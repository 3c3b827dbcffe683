// Malformed custom resources, k8sobjects records, OTLP records and Azure Resource Graph rows,
// handed straight to the normalizers: they never throw, and they either produce a record the
// store can hold or reject the input with a reason that names the bad field.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { NormalizedRecord } from '../../src/model/deployment-records.ts';
import { mapFluxConfiguration } from '../../src/normalize/flux-configuration.ts';
import { isFluxObjectRecord, normalizeFluxObject } from '../../src/normalize/k8sobjects.ts';
import {
  descriptorCommitSource,
  lastWriteTime,
  normalizeDescriptorResource,
  parseResourceGraphSpec,
} from '../../src/normalize/kube-resources.ts';
import type { Normalized, NormalizedMany } from '../../src/normalize/normalize-result.ts';
import { normalizeArgoApplication } from '../../src/normalize/argocd-application.ts';
import { readReconcilerResource } from '../../src/normalize/reconciler-resource.ts';
import { normalizeLogRecord } from '../../src/normalize/otlp-logs.ts';
import type { KubeObject } from '../../src/wire/kube-object.ts';
import type { AnyValue, KeyValues } from '../../src/wire/otlp-logs.ts';
import { fluxConfigurationRow, nonCompliantFixture } from '../support/flux-configurations.ts';
import { gitRepository, kustomization } from '../support/flux-objects.ts';
import { applicationObject, applicationRecord, moments } from '../support/argocd-applications.ts';
import { fuzzRuns, hostileString, hostileValue, mutationsOf } from '../support/fuzz.ts';
import { descriptorLog, stateLog } from '../support/kalypso-logs.ts';
import { expectStorable } from '../support/record-validity.ts';

const RUNS = fuzzRuns(300);
const NOW = new Date('2026-11-20T10:00:00Z');
const COMMIT = '0123456789abcdef0123456789abcdef01234567';

function expectValidOutcome(outcome: Normalized | NormalizedMany, fieldNames: RegExp): void {
  if (outcome.ok) (Array.isArray(outcome.value) ? (outcome.value as readonly NormalizedRecord[]) : [outcome.value as NormalizedRecord]).forEach(expectStorable);
  else {
    expect(typeof outcome.reason).toBe('string');
    expect(outcome.reason, outcome.reason).toMatch(fieldNames);
  }
}

const reconciler = {
  apiVersion: 'hub.kalypso.io/v1alpha1',
  kind: 'Reconciler',
  metadata: { name: 'edge-1-flux', namespace: 'kalypso', creationTimestamp: '2026-11-20T09:00:00Z' },
  spec: {
    hostName: 'edge-1',
    hostType: 'edge-device',
    reconcilerName: 'flux-system/apps',
    reconcilerType: 'flux',
    manifestsEndpoint: 'https://github.com/contoso/gitops/dev/hello-world',
    manifestsStorageType: 'git',
    deployment: { gitOpsCommitId: `dev@sha1:${COMMIT}`, status: 'success', statusMessage: 'Applied' },
  },
};

const descriptor = {
  apiVersion: 'hub.kalypso.io/v1alpha1',
  kind: 'DeploymentDescriptor',
  metadata: {
    name: 'hello-world-functional-test',
    namespace: 'dev',
    labels: { 'kustomize.toolkit.fluxcd.io/name': 'dev', 'kustomize.toolkit.fluxcd.io/namespace': 'flux-system' },
    managedFields: [{ manager: 'kubectl', operation: 'Update', time: '2026-11-20T09:00:00Z' }],
  },
  spec: descriptorLog({ version: '1.0.0', commit: COMMIT, at: NOW }).body,
};

const resourceGraph = { subscription: '00000000-0000-0000-0000-000000000001', tenant: 'contoso', managedIdentity: 'client-id', interval: '5m' };

/**
 * The API server checks metadata (names, labels, timestamps) but not the spec of a resource whose
 * schema preserves unknown fields, nor what a buggy or hostile writer puts in it: the spec may be
 * anything.
 */
function withSpec(object: typeof reconciler | typeof descriptor, spec: unknown): KubeObject {
  return { ...object, spec } as unknown as KubeObject;
}

/** A two-source Argo CD Application (test/support/argocd-applications.ts). */
const ARGO_SHAPE = {
  name: 'payments',
  destination: { server: 'https://10.0.0.5:6443' },
  sources: [
    { repoURL: 'https://github.com/contoso/charts', targetRevision: 'main', path: 'payments' },
    { repoURL: 'https://github.com/contoso/values', targetRevision: 'main', ref: 'values' },
  ],
};

describe('Argo CD Applications', () => {
  it('a mutated Application is valid state, nothing yet, or rejected naming a field', () => {
    const object = applicationObject(ARGO_SHAPE, moments.synced([COMMIT, COMMIT], NOW, 'Degraded'));
    fc.assert(
      fc.property(mutationsOf(object), fc.constantFrom('upsert' as const, 'deleted' as const), (mutated, event) => {
        const outcome = normalizeArgoApplication({ object: mutated, event, localCluster: 'hub', seenAt: NOW });
        expectValidOutcome(outcome.ok ? { ok: true, value: outcome.value.records } : outcome, /\b(spec|status|metadata)\./);
      }),
      { numRuns: RUNS },
    );
  });

  it('arbitrary JSON never throws', () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.jsonValue(), hostileValue), (object) => {
        const outcome = normalizeArgoApplication({ object, event: 'upsert', localCluster: 'hub', seenAt: NOW });
        if (outcome.ok) outcome.value.records.forEach(expectStorable);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('Kubernetes custom resources', () => {
  it('a mutated Reconciler is stored as valid state, waits for its deployment, or is rejected naming a spec field', () => {
    fc.assert(
      fc.property(mutationsOf(reconciler.spec), (spec) => {
        const reading = readReconcilerResource(withSpec(reconciler, spec), NOW);
        if (reading.kind === 'recorded') expectStorable(reading.record);
        else if (reading.kind === 'invalid') expect(reading.reason, reading.reason).toMatch(/\bspec\b/);
        else expect(reading).toMatchObject({ kind: 'waiting', why: expect.stringMatching(/^spec\.deployment/) });
      }),
      { numRuns: RUNS },
    );
  });

  it('a mutated DeploymentDescriptor is stored as valid desired state or rejected naming a field', () => {
    fc.assert(
      fc.property(mutationsOf(descriptor.spec), fc.option(hostileString), (spec, revision) => {
        const object = withSpec(descriptor, spec);
        expect(() => lastWriteTime(object)).not.toThrow();
        expect(() => descriptorCommitSource(object)).not.toThrow();
        expectValidOutcome(normalizeDescriptorResource(object, revision === null ? undefined : { revision, at: NOW }, NOW), /\bspec\b|lastAppliedRevision|labels/);
      }),
      { numRuns: RUNS },
    );
  });

  it('a mutated AzureResourceGraph spec parses or is refused naming a spec field', () => {
    fc.assert(
      fc.property(mutationsOf(resourceGraph), (mutated) => {
        const parsed = parseResourceGraphSpec('kalypso/arg', mutated);
        if (parsed.ok) {
          expect(parsed.value.subscriptions.length).toBeGreaterThan(0);
          expect(parsed.value.intervalMs).toBeGreaterThanOrEqual(5_000);
        } else expect(parsed.reason).toMatch(/^spec\./);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('Azure Resource Graph rows', () => {
  const rows = [
    nonCompliantFixture(),
    fluxConfigurationRow({
      cluster: 'edge-7',
      commit: COMMIT,
      compliance: 'Non-Compliant',
      kustomizations: { apps: './apps' },
      statuses: [
        { name: 'gitops-apps', compliance: 'Compliant', message: `Applied revision: dev@sha1:${COMMIT}` },
        { name: 'dev.kaizentm.greeting-service.hello-world.functional-test', compliance: 'Non-Compliant', message: 'health check failed' },
      ],
    }),
  ];

  it('a mutated flux configuration row never throws: valid records, or rejected naming the row', () => {
    fc.assert(
      fc.property(fc.constantFrom(...rows).chain((row) => mutationsOf(row)), (row) => {
        const mapping = mapFluxConfiguration(row, NOW);
        const records: NormalizedRecord[] = [...mapping.records];
        for (const pending of mapping.pending) {
          records.push(...pending.complete('https://github.com/contoso/gitops/dev/hello-world'));
        }
        records.forEach(expectStorable);
        if (mapping.rejected !== undefined) expect(mapping.rejected).toMatch(/flux configuration .*: /);
        for (const reason of mapping.ignored) expect(typeof reason).toBe('string');
      }),
      { numRuns: RUNS },
    );
  });

  it('arbitrary JSON is no flux configuration row, and says so', () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.jsonValue(), hostileValue), (row) => {
        const mapping = mapFluxConfiguration(row, NOW);
        mapping.records.forEach(expectStorable);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('OTLP log records (decoded)', () => {
  const wire = (spec: { resource?: Record<string, unknown>; attributes?: Record<string, unknown>; body?: unknown; eventName?: string }) => ({
    resource: { ...spec.resource } as KeyValues,
    record: {
      timeUnixNano: 1_700_000_000_000_000_000n,
      observedTimeUnixNano: 0n,
      eventName: spec.eventName ?? '',
      attributes: { ...spec.attributes } as KeyValues,
      body: spec.body as AnyValue,
    },
  });
  const samples = [
    wire(stateLog({ host: 'edge-1', commit: COMMIT, at: NOW })),
    wire(descriptorLog({ version: '1.0.0', commit: COMMIT, at: NOW })),
    wire({ ...gitRepository({ cluster: 'edge-1', url: 'https://github.com/contoso/gitops', branch: 'dev', at: NOW }) }),
    wire({ ...kustomization({ cluster: 'edge-1', name: 'apps', path: './apps', applied: `dev@sha1:${COMMIT}`, ready: { status: 'True', reason: 'ReconciliationSucceeded', message: 'ok' }, at: NOW }) }),
    wire({ ...applicationRecord('edge-1', applicationObject(ARGO_SHAPE, moments.failed([COMMIT, COMMIT], NOW, 'sync failed')), 'MODIFIED', NOW) }),
  ];
  const named = /kalypso|vcs\.|k8s|body|resource attribute|event|host/;
  // An Argo CD record may stand for several reconcilers, or for none yet.

  it('a mutated Kalypso or k8sobjects record is a valid record, rejected naming a field, or ignored', () => {
    fc.assert(
      fc.property(fc.constantFrom(...samples).chain((sample) => mutationsOf(sample)), (mutated) => {
        const sample = (typeof mutated === 'object' && mutated !== null ? mutated : {}) as { resource?: unknown; record?: Record<string, unknown> };
        const resource = (typeof sample.resource === 'object' && sample.resource !== null ? sample.resource : {}) as KeyValues;
        const raw = typeof sample.record === 'object' && sample.record !== null ? sample.record : {};
        const attributes = (typeof raw['attributes'] === 'object' && raw['attributes'] !== null ? raw['attributes'] : {}) as KeyValues;
        const record = {
          timeUnixNano: typeof raw['timeUnixNano'] === 'bigint' ? BigInt.asUintN(64, raw['timeUnixNano']) : 0n,
          observedTimeUnixNano: 0n,
          eventName: typeof raw['eventName'] === 'string' ? raw['eventName'] : '',
          attributes,
          body: raw['body'] as AnyValue,
        };
        expect(() => isFluxObjectRecord((key) => attributes[key], record.body)).not.toThrow();
        const outcome = normalizeLogRecord(resource, record, NOW);
        if (outcome !== undefined) expectValidOutcome(outcome, named);
      }),
      { numRuns: RUNS },
    );
  });

  it('arbitrary k8sobjects bodies never throw', () => {
    fc.assert(
      fc.property(fc.anything(), fc.constantFrom('kustomizations', 'gitrepositories', undefined), (body, plural) => {
        const attribute = (key: string) => ({ 'k8s.cluster.name': 'edge-1', 'k8s.resource.name': plural })[key];
        const outcome = normalizeFluxObject(attribute, body, NOW);
        expectValidOutcome(outcome, /body|k8s/);
      }),
      { numRuns: RUNS },
    );
  });
});
