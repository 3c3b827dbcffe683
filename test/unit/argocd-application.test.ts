// The Argo CD mapping (docs/argocd.md, "Mapping") against every fixture of test/fixtures/argocd/,
// built from Argo CD's own types, and against the cases its README derives by editing a copy.
import { readdir, readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { RealStateRecord } from '../../src/model/deployment-records.ts';
import { type ApplicationRecords, normalizeArgoApplication } from '../../src/normalize/argocd-application.ts';
import { randomCommit } from '../support/random-ids.ts';

const FIXTURES = new URL('../fixtures/argocd/', import.meta.url);
const LOCAL = 'hub-cluster';
const SEEN = new Date('2026-08-20T09:20:00Z');

async function fixture(name: string): Promise<any> {
  return JSON.parse(await readFile(new URL(`${name}.json`, FIXTURES), 'utf8'));
}

function mapped(object: unknown, event: 'upsert' | 'deleted' = 'upsert'): ApplicationRecords {
  const outcome = normalizeArgoApplication({ object, event, localCluster: LOCAL, seenAt: SEEN });
  if (!outcome.ok) throw new Error(outcome.reason);
  return outcome.value;
}

/** What a row of the mapping table decides, per reconciler. */
function states(object: unknown): Record<string, unknown>[] {
  return (mapped(object).records as RealStateRecord[]).map((record) => ({
    host: record.host.name,
    reconciler: record.reconciler.name,
    endpoint: record.manifests.endpoint,
    storage: record.manifests.storageType,
    commit: record.commitId,
    status: record.status,
    message: record.statusMessage,
  }));
}

const RETAIL = 'https://github.com/contoso/retail-gitops';
const PAYMENTS = 'https://github.com/contoso/payments-gitops';
const SYNCED = 'successfully synced (all tasks run)';

/** Every fixture file, and what the mapping makes of it. */
const EXPECTED: Record<string, Record<string, unknown>[]> = {
  'synced-healthy': [
    { host: LOCAL, reconciler: 'argocd/checkout-prod', endpoint: `${RETAIL}/main/envs/prod/checkout`, storage: 'git', commit: '6ee9b747ec30a41fe214193938d7c3c4c2e8201e', status: 'success', message: SYNCED },
  ],
  'in-cluster-by-server': [{ host: LOCAL, reconciler: 'argocd/loyalty-prod', commit: 'edb33a7c9d7257af89f5928f4ae85e4b1125c9de', status: 'success' }],
  'remote-by-name': [{ host: 'aks-prod-weu-01', reconciler: 'team-payments/payments-api', endpoint: `${PAYMENTS}/prod/clusters/aks-prod-weu-01/payments-api`, status: 'success' }],
  'remote-by-server': [{ host: 'aks-prod-weu-02-7f3c2a1b.hcp.westeurope.azmk8s.io', reconciler: 'argocd/payments-api-weu-02', status: 'success' }],
  progressing: [{ host: LOCAL, commit: 'a06e1f453456e4145395da6b7df31cb691dabb57', status: 'in_progress', message: 'waiting for healthy state of apps/Deployment/orders-api' }],
  'operation-retrying': [{ commit: 'ae72ec5b96aa0b674f97dacb7c13ccbc4d1f1731', status: 'in_progress', message: expect.stringMatching(/must be less than or equal to cpu limit of 1\. Retrying attempt #2 at 9:10AM\.$/) }],
  'operation-failed': [{ commit: '7b90c79ba4592395d939da59e1452fa5f85705ff', status: 'failure', message: expect.stringMatching(/^one or more objects failed to apply, reason: .*\(retried 5 times\)\.$/) }],
  degraded: [{ host: 'aks-prod-weu-01', commit: 'c6ab1151b1ec44a2cd4600491f8553ee746272a5', status: 'failure', message: 'Caused by apps/Deployment:fraud/fraud-scoring' }],
  // A new commit compared, not synced (automated sync off): the last operation was about the commit before.
  'out-of-sync': [{ commit: '4b810bf3ecd4afc35ac867580678fb3eb23f5b40', status: 'in_progress', message: 'OutOfSync, Healthy' }],
  missing: [{ commit: 'f1e6f02447017fa36b82ecbbcd0b15eaaa673fa1', status: 'in_progress', message: 'OutOfSync, Missing' }],
  // The revision is the unresolved branch `main`: the state is the last operation's commit, with the condition's message.
  'comparison-error': [{ commit: 'e9a6d84b40f7c97f429c13145e3117ba9c2ebe12', status: 'in_progress', message: expect.stringMatching(/^Failed to load target state: failed to generate manifest/) }],
  suspended: [{ commit: '87f794298d891de17c2d1735077129cb46f83735', status: 'in_progress', message: SYNCED }],
  'helm-chart': [{ endpoint: 'https://charts.example.com/stable/4.11.*/ingress-gateway', storage: 'helm', commit: '4.11.3', status: 'success' }],
  'multi-source': [
    { reconciler: 'argocd/payments-api-hub#0', endpoint: 'https://github.com/contoso/platform-charts/main/charts/payments-api', commit: 'c64cfb466c9ceb7ef28c7fce18b2b8947e266850', status: 'success' },
    { reconciler: 'argocd/payments-api-hub#1', endpoint: `${PAYMENTS}/prod/envs/prod/payments-api/extras`, commit: '416f05b789ca4057ab1186c660b7bafce1451728', status: 'success' },
    { reconciler: 'argocd/payments-api-hub#2', endpoint: 'https://github.com/contoso/prod-values/main', commit: 'e2977af11405745ff808be81768443d0a7fccfda', status: 'success' },
  ],
  'applicationset-generated': [{ host: 'store-berlin-01', reconciler: 'argocd/pos-store-berlin-01', commit: '0e928317f81970cc4b15b7c3d179eefe357ff7cc', status: 'success' }],
  // Still mapped while its finalizer deletes the resources (health Progressing: "Pending deletion").
  'being-deleted': [{ host: LOCAL, reconciler: 'argocd/legacy-coupons', status: 'in_progress' }],
};

describe('normalizeArgoApplication: the fixtures', () => {
  it('has an expectation for every fixture file', async () => {
    const files = (await readdir(FIXTURES)).filter((file) => file.endsWith('.json') && !file.startsWith('k8sobjects-'));
    expect(files.map((file) => file.replace(/\.json$/, '')).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(Object.entries(EXPECTED))('%s', async (name, expected) => {
    const object = await fixture(name);
    expect(states(object)).toEqual(expected.map((entry) => expect.objectContaining(entry)));
    for (const record of mapped(object).records as RealStateRecord[]) {
      expect(record.reconciler.type).toBe('argocd');
      expect(record.details).toEqual({ argocd: { sync: object.status.sync.status, health: object.status.health.status, operation: object.status.operationState?.phase ?? null } });
    }
  });

  it('observes a state at the API server’s time of the write that carried it, never later than the sender saw it', async () => {
    const object = await fixture('synced-healthy');
    expect((mapped(object).records[0] as RealStateRecord).observedAt).toEqual(new Date('2026-08-20T09:12:07Z'));
    const early = normalizeArgoApplication({ object, event: 'upsert', localCluster: LOCAL, seenAt: new Date('2026-08-20T09:00:00Z') });
    expect(early.ok && (early.value.records[0] as RealStateRecord).observedAt).toEqual(new Date('2026-08-20T09:00:00Z'));
    const { managedFields: _, ...metadata } = object.metadata;
    expect((mapped({ ...object, metadata }).records[0] as RealStateRecord).observedAt).toEqual(SEEN);
  });

  it('takes every reconciler of a deleted application out, ignored sources too', async () => {
    const object = await fixture('multi-source');
    expect(mapped(object, 'deleted').records).toEqual(
      [0, 1, 2].map((index) => ({ kind: 'reconciler-removed', host: LOCAL, reconciler: `argocd/payments-api-hub#${index}`, removedAt: SEEN })),
    );
  });
});

/** A copy of a fixture with its status changed. */
async function edited(name: string, change: (status: any, object: any) => void): Promise<any> {
  const object = await fixture(name);
  change(object.status, object);
  return object;
}

describe('normalizeArgoApplication: derived cases', () => {
  it.each(['Error', 'Failed'])('a last operation in %s about the commit is a failure with its message', async (phase) => {
    const object = await edited('synced-healthy', (status) => Object.assign(status.operationState, { phase, message: 'hook PostSync failed' }));
    expect(states(object)).toEqual([expect.objectContaining({ status: 'failure', message: 'hook PostSync failed' })]);
  });

  it('a Terminating operation is in progress', async () => {
    const object = await edited('synced-healthy', (status) => Object.assign(status.operationState, { phase: 'Terminating', message: 'Operation terminated' }));
    expect(states(object)).toEqual([expect.objectContaining({ status: 'in_progress', message: 'Operation terminated' })]);
  });

  it('a failed operation about an older commit does not fail the one the application is Synced and Healthy on', async () => {
    const object = await edited('synced-healthy', (status) => Object.assign(status.operationState, { phase: 'Failed', message: 'old failure', syncResult: { revision: randomCommit() } }));
    expect(states(object)).toEqual([expect.objectContaining({ status: 'success', message: 'Synced, Healthy' })]);
  });

  it('Degraded health of the commit before does not fail the one not applied yet', async () => {
    const object = await edited('degraded', (status) => {
      status.sync = { ...status.sync, status: 'OutOfSync', revision: randomCommit() };
    });
    expect(states(object)).toEqual([expect.objectContaining({ status: 'in_progress', message: 'Caused by apps/Deployment:fraud/fraud-scoring' })]);
  });

  it('Degraded without a health message (Argo CD up to 3.5) names the Degraded resources, not the successful sync', async () => {
    const none = await edited('degraded', (status) => delete status.health.message);
    expect(states(none)).toEqual([expect.objectContaining({ status: 'failure', message: 'Degraded' })]);
    const named = await edited('degraded', (status) => {
      delete status.health.message;
      status.resources = ['a', 'b', 'c', 'd'].map((name) => ({ group: 'apps', kind: 'Deployment', namespace: 'fraud', name, health: { status: 'Degraded' } }));
    });
    expect(states(named)).toEqual([
      expect.objectContaining({ message: 'Degraded: apps/Deployment:fraud/a, apps/Deployment:fraud/b, apps/Deployment:fraud/c and 1 more' }),
    ]);
  });

  it('Synced and Progressing after a successful sync is in progress', async () => {
    const object = await edited('synced-healthy', (status) => (status.health.status = 'Progressing'));
    expect(states(object)).toEqual([expect.objectContaining({ status: 'in_progress', message: SYNCED })]);
  });

  it('an InvalidSpecError (a destination Argo CD does not know) is in progress with the condition’s message, on the host it names', async () => {
    const object = await edited('remote-by-name', (status, app) => {
      app.spec.destination = { name: 'aks-nowhere-01', namespace: 'payments' };
      status.sync.status = 'Unknown';
      status.health = { status: 'Unknown' };
      status.conditions = [{ type: 'InvalidSpecError', message: 'there are no clusters with this name: aks-nowhere-01' }];
    });
    expect(states(object)).toEqual([
      expect.objectContaining({ host: 'aks-nowhere-01', commit: '6666980fb4f563f6aef985c2cb669deebb5ac4f4', status: 'in_progress', message: 'there are no clusters with this name: aks-nowhere-01' }),
    ]);
  });

  it('ignores, without refusing, what has no commit to report: a branch name and no operation, or no comparison yet', async () => {
    const unresolved = await edited('comparison-error', (status) => delete status.operationState);
    expect(mapped(unresolved)).toMatchObject({ records: [], ignored: [expect.stringContaining('status.sync.revision names no commit ("main")')] });
    const fresh = await edited('missing', (status) => delete status.sync);
    expect(mapped(fresh)).toMatchObject({ records: [], reconcilers: [{ host: 'aks-prod-weu-01', reconciler: 'argocd/reports' }] });
  });

  it('falls back per source when a multi-source comparison fails (Argo CD drops the revisions)', async () => {
    const object = await edited('multi-source', (status) => {
      status.sync = { status: 'Unknown' };
      status.conditions = [{ type: 'ComparisonError', message: 'failed to generate manifest for source 2 of 3' }];
    });
    expect(states(object).map((state) => [state['commit'], state['status'], state['message']])).toEqual([
      ['c64cfb466c9ceb7ef28c7fce18b2b8947e266850', 'in_progress', 'failed to generate manifest for source 2 of 3'],
      ['416f05b789ca4057ab1186c660b7bafce1451728', 'in_progress', 'failed to generate manifest for source 2 of 3'],
      ['e2977af11405745ff808be81768443d0a7fccfda', 'in_progress', 'failed to generate manifest for source 2 of 3'],
    ]);
  });

  it('an OCI digest is stored as the digest, storage type oci', async () => {
    const digest = `${randomCommit()}${randomCommit().slice(0, 24)}`;
    const object = await edited('synced-healthy', (status, app) => {
      app.spec.source = { repoURL: 'oci://ghcr.io/contoso/manifests', targetRevision: '1.2.0', path: '.' };
      status.sync.revision = `sha256:${digest}`;
      status.operationState.syncResult.revision = `sha256:${digest}`;
    });
    expect(states(object)).toEqual([expect.objectContaining({ endpoint: 'oci://ghcr.io/contoso/manifests/1.2.0', storage: 'oci', commit: digest, status: 'success' })]);
  });

  it('a hydrated application pulls from its sync source’s branch and path', async () => {
    const object = await edited('synced-healthy', (_, app) => {
      delete app.spec.source;
      app.spec.sourceHydrator = {
        drySource: { repoURL: 'https://github.com/contoso/retail-dry', targetRevision: 'HEAD', path: 'apps/checkout' },
        syncSource: { targetBranch: 'environments/prod', path: 'checkout' },
      };
    });
    expect(states(object)).toEqual([expect.objectContaining({ endpoint: 'https://github.com/contoso/retail-dry/environments/prod/checkout', status: 'success' })]);
  });

  it('reads lists with holes or entries that are not objects as lists of empty entries (found by the fuzz test, seed 796511773)', async () => {
    const base = await fixture('remote-by-server');
    // eslint-disable-next-line no-sparse-arrays -- the hole is the case: Array.prototype.map skips it, for…of then read it as undefined.
    const sparse = [, [], null, { time: '2026-08-20T09:00:00Z' }];
    const object = { ...base, metadata: { ...base.metadata, managedFields: sparse } };
    expect(states(object)).toEqual(states(base));
  });

  it('refuses what it cannot map, naming the field', async () => {
    const refusal = (object: unknown) => {
      const outcome = normalizeArgoApplication({ object, event: 'upsert', localCluster: LOCAL, seenAt: SEEN, prefix: 'body.object.' });
      return outcome.ok ? 'accepted' : outcome.reason;
    };
    const base = await fixture('remote-by-server');
    expect(refusal({ ...base, spec: { ...base.spec, source: { path: 'x' } } })).toBe('body.object.spec.source.repoURL is missing');
    expect(refusal({ ...base, spec: { ...base.spec, destination: { namespace: 'x' } } })).toBe('body.object.spec.destination.name (or spec.destination.server) is missing');
    expect(refusal({ ...base, spec: { ...base.spec, destination: { server: 'not a url' } } })).toBe(
      'body.object.spec.destination.server must be a URL such as https://10.0.0.5:6443 (got "not a url")',
    );
    expect(refusal({ ...base, status: { ...base.status, sync: { status: 'Synced', revision: 42 } } })).toBe('body.object.status.sync.revision must be a string, got number');
    expect(refusal({ ...base, metadata: { name: 'x' } })).toBe('body.object.metadata.namespace is missing');
  });
});
