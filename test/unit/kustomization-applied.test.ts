// When a Flux Kustomization applied its lastAppliedRevision, as the CRD watcher takes it for the
// assignments of the descriptors it delivers (docs/research/flux-kustomization-status.md).
import { describe, expect, it } from 'vitest';
import { kustomizationAppliedAt } from '../../src/normalize/kube-resources.ts';
import type { KubeObject } from '../../src/wire/kube-object.ts';
import { randomCommit } from '../support/random-ids.ts';

const NOW = new Date('2026-11-23T12:00:00Z');
const revision = `dev@sha1:${randomCommit()}`;

function kustomization(status: Record<string, unknown>): KubeObject {
  return { metadata: { name: 'descriptors', namespace: 'flux-system' }, status };
}

function ready(status: 'True' | 'False' | 'Unknown', at: string): Record<string, unknown> {
  return { type: 'Ready', status, reason: 'ReconciliationSucceeded', message: `Applied revision: ${revision}`, lastTransitionTime: at };
}

/**
 * A descriptor whose content Flux last wrote at `at` (its status writes, the hub's, do not count).
 * As on the wire: times are strings, whatever the client library's types say.
 */
function descriptor(at: string): KubeObject {
  const object = {
    metadata: {
      name: 'api-dev',
      namespace: 'kalypso',
      managedFields: [
        { manager: 'kustomize-controller', operation: 'Apply', time: at },
        { manager: 'kalypso-hub', operation: 'Update', subresource: 'status', time: '2026-11-23T11:59:59Z' },
      ],
    },
  };
  return object as unknown as KubeObject;
}

describe('kustomizationAppliedAt', () => {
  it('takes the Ready transition of a Kustomization that applied the revision after the descriptor changed', () => {
    const applied = kustomizationAppliedAt(kustomization({ lastAppliedRevision: revision, conditions: [ready('True', '2026-11-23T11:30:05Z')] }), descriptor('2026-11-23T11:30:02Z'), NOW);
    expect(applied).toEqual({ ok: true, value: { revision, at: new Date('2026-11-23T11:30:05Z') } });
  });

  it('waits when the descriptor changed after the Kustomization last reported: its revision is the previous commit', () => {
    const applied = kustomizationAppliedAt(kustomization({ lastAppliedRevision: revision, conditions: [ready('Unknown', '2026-11-23T11:40:00Z')] }), descriptor('2026-11-23T11:40:01Z'), NOW);
    expect(applied).toMatchObject({ ok: false, reason: 'waiting for Kustomization flux-system/descriptors to report the revision that changed this descriptor' });
  });

  it('takes its own first sight when Ready is not True (reconciling, failing) or there are no conditions', () => {
    const reconciling = kustomization({ lastAppliedRevision: revision, conditions: [ready('Unknown', '2026-11-23T11:50:00Z')] });
    expect(kustomizationAppliedAt(reconciling, descriptor('2026-11-23T11:00:00Z'), NOW)).toEqual({ ok: true, value: { revision, at: NOW } });
    expect(kustomizationAppliedAt(kustomization({ lastAppliedRevision: revision }), descriptor('2026-11-23T11:00:00Z'), NOW)).toEqual({ ok: true, value: { revision, at: NOW } });
  });

  it('never takes a time from the future of the hub’s clock', () => {
    const ahead = kustomization({ lastAppliedRevision: revision, conditions: [ready('True', '2026-11-23T12:05:00Z')] });
    expect(kustomizationAppliedAt(ahead, descriptor('2026-11-23T11:00:00Z'), NOW)).toEqual({ ok: true, value: { revision, at: NOW } });
  });

  it('waits for a revision the Kustomization has not applied yet', () => {
    expect(kustomizationAppliedAt(kustomization({ conditions: [ready('False', '2026-11-23T11:00:00Z')] }), descriptor('2026-11-23T10:00:00Z'), NOW)).toMatchObject({
      ok: false,
      reason: 'waiting for status.lastAppliedRevision of Kustomization flux-system/descriptors',
    });
  });
});
