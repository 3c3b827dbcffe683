// A hub with its CRD watcher on, against a stand-in Kubernetes API server that speaks the real
// protocol (with the CRDs' schemas, so unknown fields are pruned as an API server prunes them), on
// a test database of its own: the set-up the kube and promotion-flow tests share.
import type { RunningHub } from '../../src/hub.ts';
import {
  ARGOCD_APPLICATIONS,
  AZURE_RESOURCE_GRAPHS,
  DEPLOYMENT_DESCRIPTORS,
  FLUX_KUSTOMIZATIONS,
  RECONCILERS,
  type ResourceType,
} from '../../src/sources/kube/kube-objects.ts';
import { hubCrdSchemas, hubCrdValidators } from './crd-schemas.ts';
import { FakeKubeApiServer } from './kube-apiserver.ts';
import { createTestDatabase, type TestDatabase } from './test-database.ts';
import { startTestHub } from './test-hub.ts';

export interface KubeHub {
  readonly api: FakeKubeApiServer;
  readonly testDb: TestDatabase;
  readonly hub: RunningHub;
  /** Stops the hub, then the API server, and drops the database. */
  stop(): Promise<void>;
}

export interface KubeHubOptions {
  /** Served by the API server; default: the hub's three kinds, Flux Kustomizations and Argo CD Applications. */
  readonly kinds?: readonly ResourceType[];
  /** The flags after `--kube on --leader-election-namespace kalypso-system`. */
  readonly flags?: readonly string[];
  /** The clock of the API server (its timestamps) and of the hub. */
  readonly clock?: () => Date;
  /** Refuse what the CRDs' schemas refuse (422), as an API server does. Default: let tests write what an older CRD would have let through. */
  readonly validate?: boolean;
}

/** Resolves once the watcher has listed its kinds. Leases are short (2 s), so a lost leader is replaced quickly. */
export async function startKubeHub(options: KubeHubOptions = {}): Promise<KubeHub> {
  const api = new FakeKubeApiServer([...(options.kinds ?? [DEPLOYMENT_DESCRIPTORS, RECONCILERS, AZURE_RESOURCE_GRAPHS, FLUX_KUSTOMIZATIONS, ARGOCD_APPLICATIONS])], {
    schemas: await hubCrdSchemas(),
    ...(options.validate === true ? { validators: await hubCrdValidators() } : {}),
  });
  if (options.clock !== undefined) api.now = options.clock;
  await api.start();
  const testDb = await createTestDatabase();
  const hub = await startTestHub(testDb.url, ['--kube', 'on', '--leader-election-namespace', 'kalypso-system', ...(options.flags ?? [])], {
    kubeConfig: api.kubeConfig(),
    leaseDurationMs: 2_000,
    leaseRetryPeriodMs: 200,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });
  await hub.kube!.synced();
  return {
    api,
    testDb,
    hub,
    stop: async () => {
      await hub.stop();
      await api.stop();
      await testDb.drop();
    },
  };
}
