// Reconciler resources → real state: the heartbeat field and when a resource's state was written.
import { describe, expect, it } from 'vitest';
import { declaresHeartbeat, normalizeReconcilerResource } from '../../src/normalize/kube-resources.ts';
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
    const outcome = normalizeReconcilerResource(resource({ lastHeartbeatTime: 'every minute' }), new Date());
    expect(outcome).toEqual({ ok: false, reason: expect.stringMatching(/^spec\.lastHeartbeatTime must be an RFC 3339 time/) });
  });

  it('observes the state at the last write to the resource, not to its status', () => {
    const outcome = normalizeReconcilerResource(
      resource({ lastHeartbeatTime: '2026-11-20T09:07:00Z' }, [
        { manager: 'agent', operation: 'Apply', time: '2026-11-20T09:07:01Z' },
        { manager: 'kalypso-hub', operation: 'Update', subresource: 'status', time: '2026-11-20T09:08:00Z' },
      ]),
      new Date('2026-11-23T00:00:00Z'),
    );
    expect(outcome.ok && outcome.value.observedAt.toISOString()).toBe('2026-11-20T09:07:01.000Z');
  });
});
