// The original Go hub's manifests, unchanged (test/fixtures/original-hub/, MIT), applied through
// the real client to the Kubernetes stand-in validating with this hub's CRDs — the path of
// docs/moving-from-the-original-hub.md: the API server accepts each one, and the hub turns it into
// state, or says in its Ready condition why not (a scaffold without a spec; the Reconcilers the
// original's AzureResourceGraph controller created, which this hub does not need).
import { readFile } from 'node:fs/promises';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPLOYMENT_DESCRIPTORS, FLUX_KUSTOMIZATIONS, RECONCILERS } from '../../src/sources/kube/kube-objects.ts';
import { hubCrdValidators } from '../support/crd-schemas.ts';
import type { FakeKubeApiServer } from '../support/kube-apiserver.ts';
import { type KubeHub, startKubeHub } from '../support/kube-hub.ts';
import { randomCommit } from '../support/random-ids.ts';
import { waitFor } from '../support/wait-for.ts';

const ORIGINAL = new URL('../fixtures/original-hub/', import.meta.url);
const DESCRIPTORS = [
  'hub_v1alpha1_deploymentdescriptor.yaml',
  'sample-rs-dispatcher-d2-msu.yaml',
  'sample-rs-dispatcher-d2-ssu.yaml',
  'sample-rs-dispatcher-d2-vsu.yaml',
  'sample-rs-dispatcher-d4-msu.yaml',
  'sample-rs-dispatcher-d4-vsu.yaml',
  'sample-rs-dispatcher-t2-msu.yaml',
  'sample-rs-dispatcher-t2-vsu.yaml',
  'sample-rs-srm-d2-ssu.yaml',
  'sample-rs-srm-d4-ssu.yaml',
  'sample-rs-srm-t2-ssu.yaml',
].map((file) => `config-samples/${file}`);
const RESOURCE_GRAPHS = ['config-samples/hub_v1alpha1_azureresourcegraph.yaml', 'readme/azureresourcegraph.yaml', 'v1.0.0/hub_v1alpha1_azureresourcegraph.yaml'];
/** Where the original's samples/flux/pointer.yaml delivers the descriptors: its Kustomization applies them into `default`. */
const POINTER = { name: 'deployment-descriptors-prod', namespace: 'flux-system' };

let kube: KubeHub;
let api: FakeKubeApiServer;
let client: CustomObjectsApi;

async function documents(file: string): Promise<Record<string, any>[]> {
  return parseAllDocuments(await readFile(new URL(file, ORIGINAL), 'utf8')).map((document) => document.toJS() as Record<string, any>);
}

/** `kubectl apply -f` of a document into `default`, through the real client: what the API server answers. */
async function create(document: Record<string, any>, plural: string): Promise<void> {
  await client.createNamespacedCustomObject({ group: 'hub.kalypso.io', version: 'v1alpha1', namespace: document['metadata'].namespace ?? 'default', plural, body: document });
}

const ready = (object: any) => object?.status?.conditions?.find((condition: any) => condition.type === 'Ready');
const readyOf = (name: string) => waitFor(() => ready(api.get(RECONCILERS, 'default', name)), `Ready on ${name}`);

beforeAll(async () => {
  kube = await startKubeHub({ validate: true });
  api = kube.api;
  client = api.kubeConfig('user').makeApiClient(CustomObjectsApi);
});

afterAll(async () => {
  await kube.stop();
});

describe('the original hub’s manifests, unchanged', () => {
  it('are all accepted by this hub’s CRD schemas (the AzureResourceGraph samples of v1.0.0 and v1.1 too)', async () => {
    const validators = await hubCrdValidators();
    const plural = { Reconciler: 'reconcilers', DeploymentDescriptor: 'deploymentdescriptors', AzureResourceGraph: 'azureresourcegraphs' } as Record<string, string>;
    const files = [...DESCRIPTORS, ...RESOURCE_GRAPHS, 'config-samples/hub_v1alpha1_reconciler.yaml', 'readme/reconciler.yaml', 'derived/arg-created-reconcilers.yaml'];
    for (const file of files) {
      for (const document of await documents(file)) {
        const validate = validators.get(`hub.kalypso.io/${plural[document['kind']]}`)!;
        // As the API server validates: a field left empty in YAML (`spec:`) is dropped first.
        const { spec, ...rest } = document;
        expect(validate(spec === null ? rest : document), `${file} ${document['metadata'].name}`).toBeUndefined();
      }
    }
    // The stand-in does validate: what the original refused too (no host) is refused here, naming the field.
    await expect(create({ apiVersion: 'hub.kalypso.io/v1alpha1', kind: 'Reconciler', metadata: { name: 'hostless' }, spec: { manifestsEndpoint: 'x' } }, 'reconcilers')).rejects.toMatchObject({
      code: 422,
      body: expect.stringContaining("spec: must have required property 'hostName'"),
    });
  });

  it('records the README’s Reconciler (the v1.0 shape: type, no reconcilerName) as real state', async () => {
    const [reconciler] = await documents('readme/reconciler.yaml');
    await create(reconciler!, 'reconcilers');
    expect(await readyOf('kalypso-rg-flux-hello-world')).toMatchObject({ status: 'True', reason: 'Recorded', message: 'success at 5ce065315cc1702b6cb4eb9d3f804413706570d8 recorded for kalypso-rg-flux' });
    const rows = await kube.testDb.query(
      `SELECT r.name, r.type, e.endpoint, s.gitops_commit_id AS commit, s.status, s.status_message AS message
         FROM deployment_state s JOIN reconciler r ON r.id = s.reconciler_id JOIN host h ON h.id = r.host_id
         JOIN manifests_endpoint e ON e.id = s.manifests_endpoint_id WHERE h.name = 'kalypso-rg-flux'`,
    );
    expect(rows).toEqual([
      {
        name: 'kalypso-rg-flux-hello-world',
        type: 'flux',
        endpoint: 'https://github.com/kaizentm/kalypso-gitops/dev/drone',
        commit: '5ce065315cc1702b6cb4eb9d3f804413706570d8',
        status: 'success',
        message: 'Resource is Ready\n',
      },
    ]);
  });

  it('accepts the scaffold Reconciler (a null spec) and says what it lacks', async () => {
    const [scaffold] = await documents('config-samples/hub_v1alpha1_reconciler.yaml');
    await create(scaffold!, 'reconcilers');
    expect(await readyOf('reconciler-sample')).toMatchObject({ status: 'False', reason: 'Invalid', message: 'spec.hostName is missing' });
  });

  it('recognises the Reconcilers the original’s AzureResourceGraph controller created, an empty commit among them, and records nothing from them', async () => {
    for (const reconciler of await documents('derived/arg-created-reconcilers.yaml')) {
      await create(reconciler, 'reconcilers');
      expect(await readyOf(reconciler['metadata'].name)).toMatchObject({
        status: 'False',
        reason: 'ResourceGraphCopy',
        message: expect.stringMatching(/^created by the original hub's AzureResourceGraph controller \(azure-resource-graph=azureresourcegraph\): this hub polls Azure Resource Graph itself/),
      });
    }
    expect(await kube.testDb.query(`SELECT name FROM host WHERE name LIKE 'arc-store-%'`)).toEqual([]);
  });

  it('turns the descriptor samples, delivered by Flux as the original’s pointer did, into desired state', async () => {
    const commit = randomCommit();
    const labels = { 'kustomize.toolkit.fluxcd.io/name': POINTER.name, 'kustomize.toolkit.fluxcd.io/namespace': POINTER.namespace };
    api.apply(FLUX_KUSTOMIZATIONS, { metadata: POINTER, spec: { interval: '30s', path: './small/samples', targetNamespace: 'default', sourceRef: { kind: 'GitRepository', name: POINTER.name } } });
    // Flux applies each file as it is in Git, adding only its own labels.
    const samples = (await Promise.all(DESCRIPTORS.map(documents))).flat();
    for (const descriptor of samples) await create({ ...descriptor, metadata: { ...descriptor['metadata'], labels } }, 'deploymentdescriptors');
    api.setStatus(FLUX_KUSTOMIZATIONS, POINTER.namespace, POINTER.name, { lastAppliedRevision: `prod@sha1:${commit}` }, 'kustomize-controller');
    for (const descriptor of samples) {
      await waitFor(() => ready(api.get(DEPLOYMENT_DESCRIPTORS, 'default', descriptor['metadata'].name))?.status === 'True', `Ready on ${descriptor['metadata'].name}`);
    }
    const assigned = await kube.testDb.query<{ workload: string; environment: string; target: string; version: string; commit: string }>(
      `SELECT w.name AS workload, e.name AS environment, t.name AS target, v.version, a.gitops_commit_id AS commit
         FROM deployment_assignment a JOIN deployment_target t ON t.id = a.deployment_target_id JOIN environment e ON e.id = t.environment_id
         JOIN workload_version v ON v.id = a.workload_version_id JOIN workload w ON w.id = v.workload_id`,
    );
    const expected = samples.map((descriptor) => {
      const { workload, deploymentTarget, workloadVersion } = descriptor['spec'];
      return { workload: workload.name, environment: deploymentTarget.environment, target: deploymentTarget.name, version: String(workloadVersion.version), commit };
    });
    // The original's d2-ssu sample names target msu (a slip in the original): one assignment for both.
    const unique = expected.filter((entry, index) => expected.findIndex((other) => JSON.stringify(other) === JSON.stringify(entry)) === index);
    expect(assigned.sort(byText)).toEqual(unique.sort(byText));
  });

  it('refuses the kind the original declared but never used (Deployment): not served here', async () => {
    const [deployment] = await documents('config-samples/hub_v1alpha1_deployment.yaml');
    await expect(create(deployment!, 'deployments')).rejects.toMatchObject({ code: 404 });
  });
});

function byText(a: unknown, b: unknown): number {
  const [left, right] = [JSON.stringify(a), JSON.stringify(b)];
  return left < right ? -1 : left > right ? 1 : 0;
}
