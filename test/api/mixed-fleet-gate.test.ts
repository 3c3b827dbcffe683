// The environment gate (Check Promote) over a fleet that mixes Flux and Argo CD: descriptors applied
// by Flux on the hub's cluster (the Kubernetes stand-in), two Flux clusters reporting over OTLP, an
// Argo CD edge cluster whose collector sends its Applications (k8sobjects), and Argo CD on the hub's
// cluster deploying to a cluster by name, read by the CRD watcher. An Application correlates with the
// descriptors through its repoURL/targetRevision/path, so the gate, drift and delivery count its
// reconcilers exactly as Flux ones. Every commit is a random 40-hex id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArgoCdCluster } from '../support/argocd-fleet.ts';
import { type KubeHub, startKubeHub } from '../support/kube-hub.ts';
import { Cluster, DescriptorFlux, type FlowWorkload, GitOpsRepository, SimulatedClock } from '../support/promotion-flow.ts';
import { randomName } from '../support/random-ids.ts';
import { waitFor } from '../support/wait-for.ts';

const PROD = randomName('prod');
const WORKSPACE = randomName('ws');
const [CART, WEB]: FlowWorkload[] = ['cart', 'web'].map((name) => ({ workspace: WORKSPACE, application: 'shop', name: randomName(name) }));
const WORKLOADS = [CART!, WEB!];

let kube: KubeHub;
let clock: SimulatedClock;
let repo: GitOpsRepository;
let flux: DescriptorFlux;
let fluxClusters: Cluster[];
let edge: ArgoCdCluster;
let managed: ArgoCdCluster;

async function get(pathAndQuery: string): Promise<any> {
  const response = await fetch(`http://127.0.0.1:${kube.hub.ports.http}/api/v1${pathAndQuery}`);
  const body = await response.json();
  if (!response.ok) throw new Error(`${pathAndQuery}: ${response.status} ${JSON.stringify(body)}`);
  return body;
}

const gate = (commit: string) => get(`/deployment-state?environment=${PROD}&commit=${commit}`);

/** The gate once the watcher has caught up: the stand-in's events reach the hub a moment later. */
const gateWhere = (commit: string, expected: Record<string, unknown>) =>
  waitFor(async () => {
    const answer = await gate(commit);
    return Object.entries(expected).every(([key, value]) => answer[key] === value) ? answer : undefined;
  }, `the gate at ${JSON.stringify(expected)}`);

/** A merge to prod, delivered by Flux on the hub; the descriptors' desired commit is its head. */
async function merge(versions: readonly [FlowWorkload, string][]): Promise<string> {
  const commit = repo.merge(PROD, versions);
  clock.advance(20_000);
  flux.reconcile(PROD);
  await waitFor(async () => {
    const { items } = await get(`/environments/${PROD}/state`);
    return items.length === WORKLOADS.length && items.every((item: any) => item.desired?.commit === commit);
  }, `desired commit ${commit}`);
  clock.advance(10_000);
  return commit;
}

beforeAll(async () => {
  clock = new SimulatedClock(new Date(Date.now() - 20 * 60_000));
  kube = await startKubeHub({ clock: () => clock.now() });
  repo = new GitOpsRepository();
  flux = new DescriptorFlux(kube.api, clock, repo, WORKLOADS);
  const context = { api: kube.api, clock, repo, workloads: WORKLOADS, ports: kube.hub.ports };
  fluxClusters = [new Cluster(randomName('flux'), PROD, 'grpc', context), new Cluster(randomName('flux'), PROD, 'http-json', context)];
  edge = new ArgoCdCluster(randomName('argo-edge'), PROD, 'k8sobjects', context);
  managed = new ArgoCdCluster(randomName('argo-remote'), PROD, 'watcher', context);
}, 60_000);

afterAll(async () => {
  await kube?.stop();
});

describe('the environment gate over Flux and Argo CD clusters', () => {
  it('passes a commit once every reconciler of every kind applied it', async () => {
    const commit = await merge(WORKLOADS.map((workload) => [workload, '1.0'] as [FlowWorkload, string]));
    for (const cluster of [...fluxClusters, edge, managed]) await cluster.apply(commit);
    const answer = await gateWhere(commit, { total: 8, succeeded: 8, settled: true });
    const kinds = (host: string) => answer.subscribers.filter((subscriber: any) => subscriber.host === host).map((subscriber: any) => subscriber.reconcilerType);
    expect(kinds(edge.name)).toEqual(['argocd', 'argocd']);
    expect(kinds(managed.name)).toEqual(['argocd', 'argocd']);
    expect(kinds(fluxClusters[0]!.name)).toEqual(['flux', 'flux']);
    const { items } = await get(`/environments/${PROD}/state`);
    for (const item of items) expect(item.deployed).toEqual([expect.objectContaining({ version: '1.0', commit, onDesired: true, reconcilers: expect.objectContaining({ total: 4, succeeded: 4 }) })]);
  });

  it('holds the next one while an Argo CD cluster has only compared it, and fails it when an Argo CD sync fails', async () => {
    const commit = await merge([[CART!, '2.0']]);
    for (const cluster of fluxClusters) await cluster.apply(commit);
    await edge.compare(commit);
    managed.failing.add(CART!.name);
    await managed.apply(commit);
    const answer = await gateWhere(commit, { total: 8, succeeded: 5, failed: 1, inProgress: 2, settled: false });
    expect(answer.subscribers.filter((subscriber: any) => subscriber.status === 'failure')).toEqual([
      expect.objectContaining({ host: managed.name, reconciler: `argocd/${CART!.name}-${managed.name}`, reconcilerType: 'argocd', statusMessage: expect.stringMatching(/failed to apply/) }),
    ]);
    // The edge cluster's reconcilers report the desired commit, in progress: no drift, as for Flux.
    const drift = (await get(`/drift?environment=${PROD}`)).items;
    expect(drift.map((entry: any) => [entry.host, entry.workload, entry.reconcilerType, entry.reasons])).toEqual([[managed.name, CART!.name, 'argocd', ['failing']]]);
  });

  it('passes it once the Argo CD clusters synced it, and Delivery counts them as it counts Flux ones', async () => {
    const commit = repo.head(PROD);
    await edge.sync(commit);
    await managed.sync(commit);
    await gateWhere(commit, { total: 8, succeeded: 8, settled: true });
    expect((await get(`/drift?environment=${PROD}`)).items).toEqual([]);
    const delivery = await get(`/metrics/delivery?environment=${PROD}&workload=${CART!.name}&since=${new Date(0).toISOString()}`);
    expect(delivery.recentRollouts[0]).toMatchObject({ version: '2.0', status: 'succeeded', current: true, subscribers: 4, succeeded: 4 });
  });
});
