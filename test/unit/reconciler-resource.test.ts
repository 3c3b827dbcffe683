// Reconciler resources → real state: the heartbeat field, when a resource's state was written, and
// what the original hub's users wrote (unknown types and statuses, no deployment, its ARG copies).
import { describe, expect, it } from 'vitest';
import { declaresHeartbeat, readReconcilerResource } from '../../src/normalize/reconciler-resource.ts';
import type { KubeObject } from '../../src/wire/kube-object.ts';
import { randomCommit, randomName } from '../support/random-ids.ts';

/** As the watch delivers it: JSON, times as strings (custom objects are not deserialized). */
function resource(spec: Record<string, unknown>, managedFields: Record<string, string>[] = []): KubeObject {
  return {
    metadata: { name: randomName('reconciler'), namespace: 'edge', creationTimestamp: '2026-11-20T09:00:00Z', managedFields },
    spec: {
      hostName: randomName('cluster'),
      manifestsEndpoint: 'https://github.com/contoso/gitops/dev/app',
      deployment: { gitOpsCommitId: randomCommit(), status: 'success' },
      ...spec,
    },
  } as unknown as KubeObject;
}

describe('Reconciler resources', () => {
  it('takes a heartbeat only from spec.lastHeartbeatTime', () => {
    expect(declaresHeartbeat(resource({ lastHeartbeatTime: '2026-11-20T09:05:00Z' }))).toBe(true);
    expect(declaresHeartbeat(resource({}))).toBe(false);
  });

  it('refuses a lastHeartbeatTime that is not a time, naming the field', () => {
    const reading = readReconcilerResource(resource({ lastHeartbeatTime: 'every minute' }), new Date());
    expect(reading).toEqual({ kind: 'invalid', reason: expect.stringMatching(/^spec\.lastHeartbeatTime must be an RFC 3339 time/) });
  });

  it('observes the state at the last write to the resource, not to its status', () => {
    const reading = readReconcilerResource(
      resource({ lastHeartbeatTime: '2026-11-20T09:07:00Z' }, [
        { manager: 'agent', operation: 'Apply', time: '2026-11-20T09:07:01Z' },
        { manager: 'kalypso-hub', operation: 'Update', subresource: 'status', time: '2026-11-20T09:08:00Z' },
      ]),
      new Date('2026-11-23T00:00:00Z'),
    );
    expect(reading.kind === 'recorded' && reading.record.observedAt.toISOString()).toBe('2026-11-20T09:07:01.000Z');
  });
});

describe('Reconciler resources the original hub accepted', () => {
  const read = (spec: Record<string, unknown>, metadata: Record<string, unknown> = {}) => {
    const object = resource(spec);
    return readReconcilerResource({ ...object, metadata: { ...object.metadata, ...metadata } }, new Date('2026-11-21T00:00:00Z'));
  };

  it('records an unknown reconcilerType as custom and an unknown status as in progress, with a warning each', () => {
    expect(read({ reconcilerType: 'kalypso', deployment: { gitOpsCommitId: 'dev/5ce065315cc1702b6cb4eb9d3f804413706570d8', status: 'Done' } })).toMatchObject({
      kind: 'recorded',
      record: { reconciler: { type: 'custom' }, status: 'in_progress', commitId: '5ce065315cc1702b6cb4eb9d3f804413706570d8' },
      warnings: [
        'spec.reconcilerType must be one of flux, argocd, arc, wo, custom (got "kalypso"): recorded as custom',
        'spec.deployment.status must be one of success, failure, in_progress (got "Done"): recorded as in_progress',
      ],
    });
    expect(read({ reconcilerType: '', deployment: { gitOpsCommitId: 'abc1234', status: '' } })).toMatchObject({
      kind: 'recorded',
      record: { reconciler: { type: 'custom' }, status: 'in_progress' },
      warnings: ['spec.deployment.status is not set: recorded as in_progress'],
    });
  });

  it('reads the spellings people write: Flux, Argo-CD, SUCCESS, succeeded', () => {
    expect(read({ type: 'Flux', deployment: { gitOpsCommitId: 'abc1234', status: 'SUCCESS' } })).toMatchObject({ record: { reconciler: { type: 'flux' }, status: 'success' }, warnings: [] });
    expect(read({ reconcilerType: 'Argo-CD', deployment: { gitOpsCommitId: 'abc1234', status: 'succeeded' } })).toMatchObject({ record: { reconciler: { type: 'argocd' }, status: 'success' }, warnings: [] });
  });

  it('registers a Reconciler without a deployment, or with an empty commit, as waiting', () => {
    expect(read({ deployment: undefined })).toEqual({ kind: 'waiting', why: 'spec.deployment is not set: nothing to record until it names a commit' });
    expect(read({ deployment: { gitOpsCommitId: '', status: 'in_progress', statusMessage: '' } })).toEqual({
      kind: 'waiting',
      why: 'spec.deployment.gitOpsCommitId is empty: nothing to record until it names a commit',
    });
    // Still at fault first when a field is.
    expect(read({ hostName: '', deployment: undefined })).toEqual({ kind: 'invalid', reason: 'spec.hostName is missing' });
  });

  it('recognises the Reconcilers the original hub’s AzureResourceGraph controller created, by label or by owner', () => {
    expect(read({}, { labels: { 'azure-resource-graph': 'contoso-prod' } })).toEqual({ kind: 'resource-graph-copy', graph: 'contoso-prod' });
    const owner = { apiVersion: 'hub.kalypso.io/v1alpha1', kind: 'AzureResourceGraph', name: 'contoso-dev', uid: 'u', controller: true };
    expect(read({}, { ownerReferences: [owner] })).toEqual({ kind: 'resource-graph-copy', graph: 'contoso-dev' });
  });
});
