// The Helm chart (deploy/helm/kalypso-observability-hub), rendered by the real helm with a matrix
// of values and checked object by object: ports and probes against the hub's own defaults, the
// restricted Pod Security Standard on every pod, RBAC verbs against what the watcher does, every
// Secret and ConfigMap a pod reads either rendered or named by a value, environment variables
// against the hub's settings table (a renamed setting breaks this test), a disabled part rendering
// nothing, and every object against the Kubernetes API schemas; the files the hub and Grafana's
// init container read, read by the hub's own loaders and run through select-alerting.sh; the
// PrometheusRule as deploy/prometheus/kalypso-hub-rules.yaml with this release's job. values.schema.json
// and the chart's own checks refuse bad values. One helm process per case; all cases render up front.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parser } from '@prometheus-io/lezer-promql';
import { beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { DEFAULT_RUNBOOKS } from '../../scripts/grafana-alerts.ts';
import { k8sTools } from '../../scripts/k8s-tools.ts';
import { ConfigError } from '../../src/config/config.ts';
import { loadChannels } from '../../src/notify/notifications.ts';
import { loadArgConfig } from '../../src/sources/resource-graph/arg-config.ts';
import { HUB_SETTINGS, resolveHubConfig } from '../../src/settings.ts';
import { CHART, chartRefusal, helm, type KubeObject, RELEASE, type Rendered, REPO, renderChart } from '../support/helm-chart.ts';
import { kubeSchemaErrors } from '../support/kube-schemas.ts';

const run = promisify(execFile);
const DEFAULTS = resolveHubConfig([], {});

const SETTING_ENVS = new Set(Object.values(HUB_SETTINGS).flatMap((setting) => setting.env));

const ARG_SOURCE = {
  name: 'contoso-prod',
  subscription: '7be1b9e7-57ca-47ff-b5ab-82e7ccb8c611',
  tenant: '16b3c013-d300-468d-ac64-7eda0820b6d3',
  clientId: '02552706-98f9-4301-a473-017752fc430b',
  clientSecretFrom: { secretKeyRef: { name: 'contoso-reader', key: 'clientSecret' } },
  interval: '10m',
};

/** The values matrix: each case's values, and what it checks, below. */
const CASES = {
  defaults: {},
  'external database': {
    postgresql: { enabled: false },
    externalDatabase: { existingSecret: 'kalypso-database' },
    grafana: { database: { existingSecret: 'kalypso-grafana-database' } },
  },
  'Grafana off': { grafana: { enabled: false } },
  'monitoring on': { metrics: { serviceMonitor: { enabled: true, labels: { release: 'prometheus' } }, prometheusRule: { enabled: true, labels: { release: 'prometheus' } } } },
  'Argo CD on': { argocd: { enabled: true }, kube: { clusterName: 'aks-hub' } },
  'ingress on': { ingress: { enabled: true, className: 'nginx', hosts: [{ host: 'kalypso.example.com' }], tls: [{ secretName: 'kalypso-ingress-tls', hosts: ['kalypso.example.com'] }] } },
  'tokens from a Secret': { auth: { existingSecret: 'kalypso-hub-tokens' } },
  identities: { auth: { serviceTokensSecret: 'kalypso-service-tokens', configSecret: 'kalypso-auth' } },
  'HA with 3 replicas': { replicaCount: 3 },
  autoscaling: { autoscaling: { enabled: true, minReplicas: 3, maxReplicas: 8 } },
  TLS: { tls: { existingSecret: 'kalypso-hub-tls' }, metrics: { serviceMonitor: { enabled: true } } },
  'ARG sources': { resourceGraph: { sources: [ARG_SOURCE] } },
  notifications: {
    publicUrl: 'https://kalypso.example.com',
    notifications: {
      commitStatus: [{ name: 'apps', type: 'github', repos: ['https://github.com/contoso/*'], tokenFrom: { secretKeyRef: { name: 'github-status', key: 'token' } } }],
      webhooks: [{ name: 'decisions', url: 'https://hooks.example/kalypso', secretFrom: { secretKeyRef: { name: 'kalypso-webhook', key: 'secret' } }, types: ['io.kalypso.rollout.*'] }],
    },
  },
  'Grafana alerting': {
    publicUrl: 'https://kalypso.example.com',
    grafana: { alerting: { webhookUrl: 'https://hooks.slack.com/services/T000/B000/XXXXXXXX', runbookUrl: 'https://wiki.example.com/kalypso-alerts' } },
  },
  'Grafana alerting from a Secret': { grafana: { alerting: { webhookUrlFrom: { secretKeyRef: { name: 'kalypso-alert-webhook', key: 'url' } }, webhookType: 'teams' } } },
  'watched namespaces': { kube: { namespaces: ['team-a', 'team-b'] } },
  'watcher off': { kube: { enabled: false } },
  'network policies': { networkPolicy: { enabled: true } },
  'AKS workload identity': {
    azureWorkloadIdentity: { clientId: '11111111-2222-3333-4444-555555555555' },
    service: { otlp: { type: 'LoadBalancer', annotations: { 'service.beta.kubernetes.io/azure-load-balancer-internal': 'true' } } },
  },
} satisfies Record<string, object>;
type CaseName = keyof typeof CASES;

const rendered = new Map<CaseName, Rendered>();

beforeAll(async () => {
  await k8sTools();
  const names = Object.keys(CASES) as CaseName[];
  const results = await Promise.all(names.map((name) => renderChart(CASES[name])));
  names.forEach((name, index) => rendered.set(name, results[index]!));
}, 120_000);

function objectsOf(name: CaseName): KubeObject[] {
  return rendered.get(name)!.objects;
}
function find(objects: readonly KubeObject[], kind: string, name: string): KubeObject | undefined {
  return objects.find((object) => object.kind === kind && object.metadata.name === name);
}
function get(objects: readonly KubeObject[], kind: string, name: string): KubeObject {
  const object = find(objects, kind, name);
  if (object === undefined) throw new Error(`${kind} ${name} is not rendered (${objects.map((o) => `${o.kind} ${o.metadata.name}`).join(', ')})`);
  return object;
}
const hubPod = (objects: readonly KubeObject[]): any => get(objects, 'Deployment', 'kalypso-hub').spec.template.spec;
const hubContainer = (objects: readonly KubeObject[]): any => hubPod(objects).containers[0];
const hubEnv = (objects: readonly KubeObject[], name: string): any => hubContainer(objects).env.find((variable: { name: string }) => variable.name === name);
const names = (objects: readonly KubeObject[]): string[] => objects.map((object) => `${object.kind} ${object.metadata.name}`).sort();
const workloads = (objects: readonly KubeObject[]): KubeObject[] => objects.filter((object) => ['Deployment', 'StatefulSet'].includes(object.kind));

/** ConfigMaps and Secrets a pod template reads (its init containers' too), by kind. */
function referencedConfig(pod: any): { configMaps: Set<string>; secrets: Set<string> } {
  const configMaps = new Set<string>();
  const secrets = new Set<string>();
  for (const container of [...(pod.initContainers ?? []), ...(pod.containers ?? [])]) {
    for (const source of container.envFrom ?? []) {
      if (source.configMapRef) configMaps.add(source.configMapRef.name);
      if (source.secretRef) secrets.add(source.secretRef.name);
    }
    for (const variable of container.env ?? []) {
      if (variable.valueFrom?.configMapKeyRef) configMaps.add(variable.valueFrom.configMapKeyRef.name);
      if (variable.valueFrom?.secretKeyRef) secrets.add(variable.valueFrom.secretKeyRef.name);
    }
  }
  for (const volume of pod.volumes ?? []) {
    if (volume.configMap) configMaps.add(volume.configMap.name);
    if (volume.secret) secrets.add(volume.secret.secretName);
    for (const source of volume.projected?.sources ?? []) {
      if (source.configMap) configMaps.add(source.configMap.name);
      if (source.secret) secrets.add(source.secret.name);
    }
  }
  return { configMaps, secrets };
}

/** The restricted Pod Security Standard (and a read-only root filesystem) on a pod and its containers. */
function checkRestricted(workload: KubeObject): void {
  const pod = workload.spec.template.spec;
  const where = `${workload.kind} ${workload.metadata.name}`;
  expect(pod.securityContext, where).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
  expect(pod.securityContext.runAsUser, `${where} runs as a numeric non-root user`).toBeGreaterThan(0);
  expect(pod.hostNetwork ?? false, where).toBe(false);
  for (const container of [...pod.containers, ...(pod.initContainers ?? [])]) {
    expect(container.securityContext, `${where} ${container.name}`).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(container.securityContext.privileged ?? false).toBe(false);
    expect(container.resources?.requests, `${where} ${container.name} requests resources`).toBeDefined();
    expect(container.resources?.limits?.memory, `${where} ${container.name} has a memory limit`).toBeDefined();
  }
  for (const volume of pod.volumes ?? []) expect(volume.hostPath, `${where} volume ${volume.name}`).toBeUndefined();
}

/** What holds in every case: names, namespaces, references, Services, probes, security, schemas, settings. */
async function checkConsistent(objects: readonly KubeObject[], operatorSecrets: readonly string[]): Promise<void> {
  const clusterScoped = new Set(['ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition']);
  for (const object of objects) {
    if (!clusterScoped.has(object.kind) && object.kind !== 'Role' && object.kind !== 'RoleBinding') expect(object.metadata.namespace, `${object.kind} ${object.metadata.name}`).toBe(RELEASE.namespace);
    expect(object.metadata.labels?.['app.kubernetes.io/instance'], `${object.kind} ${object.metadata.name}`).toBe(RELEASE.name);
    expect(await kubeSchemaErrors(object)).toEqual([]);
  }
  expect(new Set(objects.map((object) => `${object.kind} ${object.metadata.namespace} ${object.metadata.name}`)).size, 'no object twice').toBe(objects.length);
  for (const workload of workloads(objects)) {
    const where = `${workload.kind} ${workload.metadata.name}`;
    const template = workload.spec.template;
    for (const [key, value] of Object.entries(workload.spec.selector.matchLabels as Record<string, string>)) expect(template.metadata.labels[key], where).toBe(value);
    checkRestricted(workload);
    const { configMaps, secrets } = referencedConfig(template.spec);
    for (const configMap of configMaps) expect(find(objects, 'ConfigMap', configMap), `${where} reads ConfigMap ${configMap}`).toBeDefined();
    for (const secret of secrets) {
      if (find(objects, 'Secret', secret) === undefined) expect(operatorSecrets, `${where} reads Secret ${secret}, neither rendered nor named by a value`).toContain(secret);
    }
    for (const container of [...(template.spec.initContainers ?? []), ...template.spec.containers]) {
      const ports = new Set((container.ports ?? []).map((port: { name: string }) => port.name));
      for (const probe of [container.startupProbe, container.livenessProbe, container.readinessProbe]) {
        if (probe?.httpGet !== undefined) expect(ports, `${where} probes a named port`).toContain(probe.httpGet.port);
      }
      const volumes = [...template.spec.volumes, ...(workload.spec.volumeClaimTemplates ?? []).map((claim: any) => claim.metadata)].map((volume: { name: string }) => volume.name);
      for (const mount of container.volumeMounts ?? []) expect(volumes, `${where} mounts ${mount.name}`).toContain(mount.name);
    }
  }
  // Every Service selects pods of some workload, on ports those pods name.
  for (const service of objects.filter((object) => object.kind === 'Service')) {
    const selector = service.spec.selector as Record<string, string>;
    const backends = workloads(objects).filter((workload) => Object.entries(selector).every(([key, value]) => workload.spec.template.metadata.labels[key] === value));
    expect(backends.length, `Service ${service.metadata.name} selects pods`).toBe(1);
    const named = new Set(backends[0]!.spec.template.spec.containers.flatMap((container: any) => (container.ports ?? []).map((port: any) => port.name)));
    for (const port of service.spec.ports) expect(named, `Service ${service.metadata.name} port ${port.name}`).toContain(port.targetPort);
  }
  checkHubSettings(objects);
}

/** Every KALYPSO_* variable of the hub is a setting of the hub, and its value parses. */
function checkHubSettings(objects: readonly KubeObject[]): void {
  const environment: NodeJS.ProcessEnv = {};
  for (const variable of hubContainer(objects).env as { name: string; value?: string; valueFrom?: unknown }[]) {
    if (!variable.name.startsWith('KALYPSO_')) continue;
    expect([...SETTING_ENVS], `${variable.name} is a hub setting`).toContain(variable.name);
    // Values from Secrets: a stand-in of the right shape.
    const placeholder = variable.name === 'KALYPSO_DATABASE_URL' ? 'postgres://kalypso:secret@db:5432/kalypso' : 'a-token';
    environment[variable.name] = variable.value?.replace('$(POSTGRES_PASSWORD)', 'secret') ?? placeholder;
  }
  expect(() => resolveHubConfig([], environment), JSON.stringify(environment)).not.toThrow();
}

describe('helm lint', () => {
  it('--strict passes with the defaults and with every part on', async () => {
    const everything = path.join(await mkdtemp(path.join(os.tmpdir(), 'kalypso-lint-')), 'values.yaml');
    await writeFile(everything, YAML.stringify({ ...CASES['monitoring on'], ...CASES['ingress on'], ...CASES['ARG sources'], ...CASES.notifications, ...CASES['Argo CD on'], ...CASES.TLS, ...CASES['Grafana alerting'], networkPolicy: { enabled: true }, autoscaling: { enabled: true } }));
    try {
      const { stdout } = await helm(['lint', '--strict', CHART, '-f', everything]);
      expect(stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
      await helm(['lint', '--strict', CHART, '--namespace', RELEASE.namespace]);
    } finally {
      await rm(path.dirname(everything), { recursive: true, force: true });
    }
  });
});

describe('helm template, case by case', () => {
  it('defaults: a working hub with a bundled PostgreSQL and Grafana, nothing optional', async () => {
    const objects = objectsOf('defaults');
    await checkConsistent(objects, []);
    expect(names(objects)).toEqual(
      [
        'ClusterRole kalypso-system-kalypso-hub',
        'ClusterRoleBinding kalypso-system-kalypso-hub',
        'ConfigMap kalypso-grafana-alerting',
        'ConfigMap kalypso-grafana-alerting-webhook',
        'ConfigMap kalypso-grafana-dashboard-providers',
        'ConfigMap kalypso-grafana-dashboards',
        'ConfigMap kalypso-grafana-database',
        'ConfigMap kalypso-grafana-datasources',
        'ConfigMap kalypso-grafana-scripts',
        'ConfigMap kalypso-postgresql-init',
        'Deployment kalypso-grafana',
        'Deployment kalypso-hub',
        'PodDisruptionBudget kalypso-hub',
        'Role kalypso-hub',
        'RoleBinding kalypso-hub',
        'Secret kalypso-grafana-admin',
        'Secret kalypso-postgresql',
        'Service kalypso-grafana',
        'Service kalypso-hub-api',
        'Service kalypso-hub-otlp',
        'Service kalypso-hub-otlp-pods',
        'Service kalypso-postgresql',
        'Service kalypso-postgresql-hl',
        'ServiceAccount kalypso-hub',
        'StatefulSet kalypso-postgresql',
      ].sort(),
    );
    const hub = get(objects, 'Deployment', 'kalypso-hub');
    expect(hub.spec.replicas).toBe(2);
    // Migrations run once per upgrade: one new pod at a time, ready (migrated) before the next.
    expect(hub.spec.strategy.rollingUpdate).toEqual({ maxUnavailable: 0, maxSurge: 1 });
    const container = hubContainer(objects);
    expect(container.image).toBe('ghcr.io/kalypso-observability/kalypso-hub:0.1.0');
    const ports = Object.fromEntries(container.ports.map((port: { name: string; containerPort: number }) => [port.name, port.containerPort]));
    expect(ports).toEqual({ http: DEFAULTS.httpPort, 'otlp-grpc': DEFAULTS.otlpGrpcPort, 'otlp-http': DEFAULTS.otlpHttpPort });
    expect(container.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'http', scheme: 'HTTP' });
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http', scheme: 'HTTP' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http', scheme: 'HTTP' });
    // Longer than the hub's drain, so Kubernetes does not kill it mid-drain.
    expect(hubPod(objects).terminationGracePeriodSeconds * 1_000).toBeGreaterThan(DEFAULTS.shutdownTimeout);
    expect(container.volumeMounts).toEqual([{ name: 'tmp', mountPath: '/tmp' }]);
    expect(hubEnv(objects, 'KALYPSO_KUBE').value).toBe('on');
    expect(hubEnv(objects, 'KALYPSO_ARGOCD').value).toBe('off');
    expect(hubEnv(objects, 'KALYPSO_LEADER_ELECTION_NAMESPACE').value).toBe(RELEASE.namespace);
    expect(hubEnv(objects, 'KALYPSO_LEADER_ELECTION_LEASE').value).toBe('kalypso-hub');
    // Never the embedded PostgreSQL: a database URL always.
    expect(hubEnv(objects, 'KALYPSO_DATABASE_URL').value).toBe('postgres://kalypso:$(POSTGRES_PASSWORD)@kalypso-postgresql:5432/kalypso?sslmode=disable');
    expect(hubEnv(objects, 'POSTGRES_PASSWORD').valueFrom.secretKeyRef).toEqual({ name: 'kalypso-postgresql', key: 'password' });
    const env = hubContainer(objects).env.map((variable: { name: string }) => variable.name);
    expect(env.indexOf('POSTGRES_PASSWORD'), 'defined before the URL that refers to it').toBeLessThan(env.indexOf('KALYPSO_DATABASE_URL'));

    for (const [service, expected] of [['kalypso-hub-api', [DEFAULTS.httpPort]], ['kalypso-hub-otlp', [DEFAULTS.otlpGrpcPort, DEFAULTS.otlpHttpPort]], ['kalypso-hub-otlp-pods', [DEFAULTS.otlpGrpcPort]]] as const) {
      expect(get(objects, 'Service', service).spec.ports.map((port: { port: number }) => port.port), service).toEqual(expected);
    }
    expect(get(objects, 'Service', 'kalypso-hub-otlp').spec.type).toBe('ClusterIP');
    expect(get(objects, 'Service', 'kalypso-hub-otlp-pods').spec.clusterIP, 'headless, for the collector’s load balancing').toBe('None');
    expect(get(objects, 'PodDisruptionBudget', 'kalypso-hub').spec).toEqual({ minAvailable: 1, selector: hub.spec.selector });
    expect(hubPod(objects).topologySpreadConstraints[0].labelSelector).toEqual(hub.spec.selector);
  });

  it('defaults: the bundled PostgreSQL, its passwords kept, Grafana reading it as kalypso_reader', async () => {
    const objects = objectsOf('defaults');
    const postgres = get(objects, 'StatefulSet', 'kalypso-postgresql');
    const container = postgres.spec.template.spec.containers[0];
    expect(container.image).toMatch(/^docker\.io\/library\/postgres:1[4-9]/);
    expect(postgres.spec.volumeClaimTemplates[0].spec.resources.requests.storage).toBe('8Gi');
    expect(postgres.spec.persistentVolumeClaimRetentionPolicy).toEqual({ whenDeleted: 'Retain', whenScaled: 'Retain' });
    expect(container.volumeMounts.find((mount: any) => mount.name === 'data').mountPath).toBe('/var/lib/postgresql/data');
    const secret = get(objects, 'Secret', 'kalypso-postgresql');
    expect(secret.metadata.annotations?.['helm.sh/resource-policy'], 'kept on uninstall, like the volume').toBe('keep');
    for (const key of ['password', 'reader-password']) expect(Buffer.from(secret['data'][key], 'base64').toString(), key).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(get(objects, 'Service', 'kalypso-postgresql').spec.ports[0].port).toBe(5432);
    const init = Object.values(get(objects, 'ConfigMap', 'kalypso-postgresql-init')['data'] as Record<string, string>)[0]!;
    expect(init).toContain('CREATE ROLE kalypso_reader LOGIN');
    expect(container.env.find((variable: any) => variable.name === 'KALYPSO_READER_PASSWORD').valueFrom.secretKeyRef).toEqual({ name: 'kalypso-postgresql', key: 'reader-password' });

    const grafana = get(objects, 'Deployment', 'kalypso-grafana').spec.template.spec.containers[0];
    expect(grafana.image).toMatch(/^docker\.io\/grafana\/grafana:/);
    const database = get(objects, 'ConfigMap', 'kalypso-grafana-database')['data'];
    expect(database).toMatchObject({ KALYPSO_DB_HOST: 'kalypso-postgresql:5432', KALYPSO_DB_NAME: 'kalypso', KALYPSO_DB_USER: 'kalypso_reader', KALYPSO_DB_SSLMODE: 'disable' });
    expect(grafana.env.find((variable: any) => variable.name === 'KALYPSO_DB_PASSWORD').valueFrom.secretKeyRef).toEqual({ name: 'kalypso-postgresql', key: 'reader-password' });
    expect(grafana.env.find((variable: any) => variable.name === 'GF_SECURITY_ADMIN_PASSWORD').valueFrom.secretKeyRef).toEqual({ name: 'kalypso-grafana-admin', key: 'password' });
    // The datasource reads exactly the variables the chart sets.
    const datasource = await readFile(path.join(REPO, 'deploy/grafana/provisioning/datasources/kalypso.yaml'), 'utf8');
    expect(new Set([...datasource.matchAll(/\$\{(KALYPSO_DB_\w+)\}/g)].map((match) => match[1]))).toEqual(new Set([...Object.keys(database), 'KALYPSO_DB_PASSWORD']));
    await checkGrafanaProvisioning(objects);
  });

  it('defaults: RBAC is what the watcher reads and writes, nothing more', () => {
    const objects = objectsOf('defaults');
    expect(get(objects, 'ClusterRole', 'kalypso-system-kalypso-hub')['rules']).toEqual([
      { apiGroups: ['hub.kalypso.io'], resources: ['deploymentdescriptors', 'reconcilers', 'azureresourcegraphs'], verbs: ['list', 'watch'] },
      { apiGroups: ['hub.kalypso.io'], resources: ['deploymentdescriptors/status', 'reconcilers/status', 'azureresourcegraphs/status'], verbs: ['patch'] },
      { apiGroups: ['kustomize.toolkit.fluxcd.io'], resources: ['kustomizations'], verbs: ['list', 'watch'] },
    ]);
    expect(get(objects, 'Role', 'kalypso-hub')['rules']).toEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: ['kalypso-hub'], verbs: ['get', 'update'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
    ]);
    const subject = { kind: 'ServiceAccount', name: 'kalypso-hub', namespace: RELEASE.namespace };
    expect(get(objects, 'ClusterRoleBinding', 'kalypso-system-kalypso-hub')['subjects']).toEqual([subject]);
    expect(get(objects, 'RoleBinding', 'kalypso-hub')['subjects']).toEqual([subject]);
    expect(hubPod(objects).serviceAccountName).toBe('kalypso-hub');
    expect(hubPod(objects).automountServiceAccountToken).toBe(true);
  });

  it('defaults: NOTES.txt says how to reach the UI and what to point a collector at', () => {
    const { notes } = rendered.get('defaults')!;
    expect(notes).toContain('kubectl -n kalypso-system port-forward svc/kalypso-hub-api 8080:8080');
    expect(notes).toContain('dns:///kalypso-hub-otlp-pods.kalypso-system.svc.cluster.local:4317');
    expect(notes).toContain('kalypso-hub-otlp.kalypso-system.svc:4317');
    expect(notes).toContain('No ingest token is required');
    expect(notes).toContain('svc/kalypso-grafana 3000:3000');
    expect(notes).toContain('helm show crds');
  });

  it('external database: no PostgreSQL in the cluster, the URL and Grafana’s login from Secrets', async () => {
    const objects = objectsOf('external database');
    await checkConsistent(objects, ['kalypso-database', 'kalypso-grafana-database']);
    expect(objects.filter((object) => object.metadata.labels?.['app.kubernetes.io/component'] === 'postgresql')).toEqual([]);
    expect(hubEnv(objects, 'KALYPSO_DATABASE_URL').valueFrom.secretKeyRef).toEqual({ name: 'kalypso-database', key: 'url' });
    expect(hubEnv(objects, 'POSTGRES_PASSWORD')).toBeUndefined();
    const grafana = get(objects, 'Deployment', 'kalypso-grafana').spec.template.spec.containers[0];
    expect(grafana.envFrom).toEqual([{ secretRef: { name: 'kalypso-grafana-database' } }]);
    expect(find(objects, 'ConfigMap', 'kalypso-grafana-database')).toBeUndefined();
  });

  it('Grafana off: nothing of Grafana', async () => {
    const objects = objectsOf('Grafana off');
    await checkConsistent(objects, []);
    expect(objects.filter((object) => object.metadata.name.includes('grafana'))).toEqual([]);
    expect(rendered.get('Grafana off')!.notes).not.toContain('Grafana');
  });

  it('monitoring on: a ServiceMonitor on the API Service, the PrometheusRule of deploy/prometheus on its job', async () => {
    const objects = objectsOf('monitoring on');
    await checkConsistent(objects, []);
    const monitor = get(objects, 'ServiceMonitor', 'kalypso-hub');
    expect(monitor.metadata.labels?.['release']).toBe('prometheus');
    const selected = objects.filter((object) => object.kind === 'Service' && Object.entries(monitor['spec'].selector.matchLabels).every(([key, value]) => object.metadata.labels?.[key] === value));
    expect(selected.map((service) => service.metadata.name)).toEqual(['kalypso-hub-api']);
    expect(monitor['spec'].endpoints).toEqual([expect.objectContaining({ port: 'http', path: '/metrics', scheme: 'http' })]);
    expect(monitor['spec'].namespaceSelector).toEqual({ matchNames: [RELEASE.namespace] });

    const rule = get(objects, 'PrometheusRule', 'kalypso-hub');
    expect(rule.metadata.labels?.['release']).toBe('prometheus');
    // One source: the file's groups, rule for rule, with this release's series selected (the
    // ServiceMonitor's job is the name of the Service it scrapes). test/deploy/prometheus-rules.test.ts
    // checks the file's PromQL and metrics against a running hub.
    const file = await committedRules();
    expect(rule['spec'].groups).toEqual(withJob(file.spec.groups, `namespace="${RELEASE.namespace}", job="${selected[0]!.metadata.name}"`));
    const alerts = rule['spec'].groups.flatMap((group: any) => group.rules);
    expect(alerts).toHaveLength(file.spec.groups.flatMap((group: any) => group.rules).length);
    for (const alert of alerts) {
      const selectors = vectorSelectors(alert.expr);
      expect(selectors.length, alert.alert).toBeGreaterThan(0);
      for (const matchers of selectors) expect(matchers, alert.alert).toContain(`namespace="${RELEASE.namespace}", job="kalypso-hub-api"`);
      expect(alert.annotations.runbook_url, alert.alert).toMatch(new RegExp(`^${DEFAULT_RUNBOOKS.replaceAll('.', '\\.')}#[a-z]+$`));
    }
    // Prometheus' templates reach Prometheus as written: Helm reads the file as data.
    expect(JSON.stringify(alerts)).toContain('{{ $labels.instance }}');
    expect(find(objectsOf('defaults'), 'PrometheusRule', 'kalypso-hub')).toBeUndefined();
  });

  it('monitoring on, another release: the selectors follow the release’s Service and namespace, runbooks your page, your groups appended', async () => {
    const mine = { name: 'mine', rules: [{ alert: 'MyAlert', expr: 'vector(1)' }] };
    const { objects } = await renderChart(
      { metrics: { serviceMonitor: { enabled: true }, prometheusRule: { enabled: true, runbookUrl: 'https://wiki.example.com/kalypso-alerts', additionalGroups: [mine] } } },
      { release: 'obs', namespace: 'monitoring' },
    );
    const monitor = get(objects, 'ServiceMonitor', 'obs-kalypso-hub');
    const [service] = objects.filter((object) => object.kind === 'Service' && Object.entries(monitor['spec'].selector.matchLabels).every(([key, value]) => object.metadata.labels?.[key] === value));
    expect(service!.metadata.name).toBe('obs-kalypso-hub-api');
    const groups = get(objects, 'PrometheusRule', 'obs-kalypso-hub')['spec'].groups;
    expect(groups.at(-1)).toEqual(mine);
    const ours = withJob((await committedRules()).spec.groups, 'namespace="monitoring", job="obs-kalypso-hub-api"').map((group: any) => ({
      ...group,
      rules: group.rules.map((rule: any) => ({ ...rule, annotations: { ...rule.annotations, runbook_url: rule.annotations.runbook_url.replace(`${DEFAULT_RUNBOOKS}#`, 'https://wiki.example.com/kalypso-alerts#') } })),
    }));
    expect(groups.slice(0, -1)).toEqual(ours);
    expect(JSON.stringify(groups)).not.toContain('job="kalypso-hub-api"');
    expect(JSON.stringify(groups)).not.toContain(DEFAULT_RUNBOOKS);
  });

  it('Argo CD on: Applications read (list and watch only), the cluster named', async () => {
    const objects = objectsOf('Argo CD on');
    await checkConsistent(objects, []);
    const rules = get(objects, 'ClusterRole', 'kalypso-system-kalypso-hub')['rules'];
    expect(rules).toContainEqual({ apiGroups: ['argoproj.io'], resources: ['applications'], verbs: ['list', 'watch'] });
    expect(rules.filter((rule: any) => rule.apiGroups.includes('argoproj.io'))).toHaveLength(1);
    expect(hubEnv(objects, 'KALYPSO_ARGOCD').value).toBe('on');
    expect(hubEnv(objects, 'KALYPSO_KUBE_CLUSTER_NAME').value).toBe('aks-hub');
    // Off: neither the rule nor the hub's default `auto` (without the rule it would read a 403 as a failing watch).
    expect(JSON.stringify(objectsOf('defaults'))).not.toContain('argoproj.io');
    expect(hubEnv(objectsOf('defaults'), 'KALYPSO_ARGOCD').value).toBe('off');
    expect(hubEnv(objectsOf('defaults'), 'KALYPSO_KUBE_CLUSTER_NAME')).toBeUndefined();
  });

  it('ingress on: the API Service behind the host, which becomes the public URL', async () => {
    const objects = objectsOf('ingress on');
    await checkConsistent(objects, []);
    const ingress = get(objects, 'Ingress', 'kalypso-hub');
    expect(ingress['spec'].ingressClassName).toBe('nginx');
    expect(ingress['spec'].rules).toEqual([
      { host: 'kalypso.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'kalypso-hub-api', port: { name: 'http' } } } }] } },
    ]);
    expect(ingress['spec'].tls).toEqual([{ secretName: 'kalypso-ingress-tls', hosts: ['kalypso.example.com'] }]);
    expect(hubEnv(objects, 'KALYPSO_PUBLIC_URL').value).toBe('https://kalypso.example.com');
    expect(rendered.get('ingress on')!.notes).toContain('https://kalypso.example.com/');
    expect(find(objectsOf('defaults'), 'Ingress', 'kalypso-hub')).toBeUndefined();
  });

  it('tokens from a Secret: the API and ingest tokens, each from its key', async () => {
    const objects = objectsOf('tokens from a Secret');
    await checkConsistent(objects, ['kalypso-hub-tokens']);
    expect(hubEnv(objects, 'KALYPSO_API_TOKEN').valueFrom.secretKeyRef).toEqual({ name: 'kalypso-hub-tokens', key: 'api' });
    expect(hubEnv(objects, 'KALYPSO_INGEST_TOKEN').valueFrom.secretKeyRef).toEqual({ name: 'kalypso-hub-tokens', key: 'ingest' });
    expect(hubEnv(objectsOf('defaults'), 'KALYPSO_API_TOKEN')).toBeUndefined();
    expect(rendered.get('tokens from a Secret')!.notes).toContain('key ingest of Secret kalypso-hub-tokens');
  });

  it('identities: the service-token file and the auth config from Secrets, mounted whole and named to the hub', async () => {
    const objects = objectsOf('identities');
    await checkConsistent(objects, ['kalypso-service-tokens', 'kalypso-auth']);
    const pod = hubPod(objects);
    for (const [volume, secret, variable, file] of [
      ['service-tokens', 'kalypso-service-tokens', 'KALYPSO_SERVICE_TOKENS', 'tokens.yaml'],
      ['auth-config', 'kalypso-auth', 'KALYPSO_AUTH_CONFIG', 'auth.yaml'],
    ] as const) {
      const mount = hubContainer(objects).volumeMounts.find((candidate: { name: string }) => candidate.name === volume);
      expect(mount.subPath, 'an edited Secret reaches the pod only without subPath').toBeUndefined();
      expect(pod.volumes.find((candidate: { name: string }) => candidate.name === volume).secret.secretName).toBe(secret);
      expect(hubEnv(objects, variable).value).toBe(`${mount.mountPath}/${file}`);
    }
    expect(hubEnv(objectsOf('defaults'), 'KALYPSO_SERVICE_TOKENS')).toBeUndefined();
  });

  it('HA with 3 replicas: spread over nodes, a disruption budget, one Lease for the leader', async () => {
    const objects = objectsOf('HA with 3 replicas');
    await checkConsistent(objects, []);
    expect(get(objects, 'Deployment', 'kalypso-hub').spec.replicas).toBe(3);
    expect(get(objects, 'PodDisruptionBudget', 'kalypso-hub').spec.minAvailable).toBe(1);
    expect(hubPod(objects).topologySpreadConstraints[0]).toMatchObject({ topologyKey: 'kubernetes.io/hostname', maxSkew: 1 });
    expect(hubEnv(objects, 'KALYPSO_LEADER_ELECTION_LEASE').value).toBe('kalypso-hub');
  });

  it('autoscaling: an autoscaler owns the replica count', async () => {
    const objects = objectsOf('autoscaling');
    await checkConsistent(objects, []);
    expect(get(objects, 'Deployment', 'kalypso-hub').spec.replicas).toBeUndefined();
    expect(get(objects, 'HorizontalPodAutoscaler', 'kalypso-hub')['spec']).toMatchObject({
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'kalypso-hub' },
      minReplicas: 3,
      maxReplicas: 8,
    });
    expect(find(objectsOf('defaults'), 'HorizontalPodAutoscaler', 'kalypso-hub')).toBeUndefined();
  });

  it('TLS: the Secret mounted whole, its files named to the hub, HTTPS probes and scrapes', async () => {
    const objects = objectsOf('TLS');
    await checkConsistent(objects, ['kalypso-hub-tls']);
    const pod = hubPod(objects);
    const mount = hubContainer(objects).volumeMounts.find((candidate: { name: string }) => candidate.name === 'tls');
    expect(mount.subPath, 'a renewed certificate reaches the pod only without subPath').toBeUndefined();
    expect(pod.volumes.find((volume: { name: string }) => volume.name === 'tls').secret.secretName).toBe('kalypso-hub-tls');
    expect(hubEnv(objects, 'KALYPSO_TLS_CERT_FILE').value).toBe(`${mount.mountPath}/tls.crt`);
    expect(hubEnv(objects, 'KALYPSO_TLS_KEY_FILE').value).toBe(`${mount.mountPath}/tls.key`);
    for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) expect(hubContainer(objects)[probe].httpGet.scheme, probe).toBe('HTTPS');
    expect(get(objects, 'ServiceMonitor', 'kalypso-hub')['spec'].endpoints[0]).toMatchObject({ scheme: 'https', tlsConfig: { insecureSkipVerify: true } });
  });

  it('ARG sources: the --arg-config file as the hub reads it, client secrets as files from Secrets', async () => {
    const objects = objectsOf('ARG sources');
    await checkConsistent(objects, ['contoso-reader']);
    const file = hubEnv(objects, 'KALYPSO_ARG_CONFIG').value as string;
    const { text, secretFiles } = mountedFiles(objects, file);
    const directory = await mkdtemp(path.join(os.tmpdir(), 'kalypso-arg-'));
    try {
      await writeFile(path.join(directory, 'sources.yaml'), text);
      const [source] = await loadArgConfig(path.join(directory, 'sources.yaml'));
      const secretFile = path.join(path.dirname(file), 'secrets/contoso-reader/clientSecret');
      expect(source).toMatchObject({ name: 'contoso-prod', credential: { kind: 'client-secret-file', clientId: ARG_SOURCE.clientId, secretFile }, intervalMs: 600_000 });
      expect(secretFiles.get(secretFile)).toEqual({ name: 'contoso-reader', key: 'clientSecret' });
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
    expect(text, 'no secret inline').not.toContain('secretKeyRef');
  });

  it('notifications: the section 7 file in a Secret, tokens and webhook secrets as files', async () => {
    const objects = objectsOf('notifications');
    await checkConsistent(objects, ['github-status', 'kalypso-webhook']);
    const file = hubEnv(objects, 'KALYPSO_NOTIFICATIONS').value as string;
    const { text, secretFiles } = mountedFiles(objects, file);
    const notifications = YAML.parse(text);
    const directory = path.dirname(file);
    expect(notifications).toEqual({
      commitStatus: [{ name: 'apps', type: 'github', repos: ['https://github.com/contoso/*'], tokenFile: `${directory}/secrets/github-status/token` }],
      webhooks: [{ name: 'decisions', url: 'https://hooks.example/kalypso', secretFile: `${directory}/secrets/kalypso-webhook/secret`, types: ['io.kalypso.rollout.*'] }],
    });
    expect(secretFiles.get(notifications.commitStatus[0].tokenFile)).toEqual({ name: 'github-status', key: 'token' });
    expect(secretFiles.get(notifications.webhooks[0].secretFile)).toEqual({ name: 'kalypso-webhook', key: 'secret' });
    // The hub reads it as mounted: the file and the Secrets' keys beside it, under a scratch root.
    const root = await mkdtemp(path.join(os.tmpdir(), 'kalypso-notify-'));
    try {
      const local = (file: string): string => path.join(root, file);
      await mkdir(local(directory), { recursive: true });
      await writeFile(local(file), text.replaceAll(`${directory}/`, `${local(directory)}/`));
      for (const [mounted, { key }] of secretFiles) {
        await mkdir(path.dirname(local(mounted)), { recursive: true });
        await writeFile(local(mounted), `${key}-value\n`);
      }
      const config = resolveHubConfig([], { KALYPSO_NOTIFICATIONS: local(file), KALYPSO_PUBLIC_URL: hubEnv(objects, 'KALYPSO_PUBLIC_URL').value });
      const channels = await loadChannels(config, {});
      expect(channels.map((channel) => [channel.name, channel.kind])).toEqual([
        ['apps', 'commit-status'],
        ['decisions', 'webhook'],
      ]);
      expect(await (channels[0] as any).token.read()).toBe('token-value');
      expect(await (channels[1] as any).secret.read()).toBe('secret-value');
      // Without the public URL (which the chart refuses to render) the hub would not start.
      await expect(loadChannels({ ...config, publicUrl: undefined }, {})).rejects.toThrow(ConfigError);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
    expect(find(objectsOf('defaults'), 'Secret', 'kalypso-hub-notifications')).toBeUndefined();
    expect(hubEnv(objectsOf('defaults'), 'KALYPSO_NOTIFICATIONS')).toBeUndefined();
  });

  it('defaults: Grafana’s init container provisions the alert rules routed nowhere, and no contact point', async () => {
    const objects = objectsOf('defaults');
    const grafana = get(objects, 'Deployment', 'kalypso-grafana').spec.template.spec;
    expect(grafana.initContainers.map((container: any) => container.name)).toEqual(['select-alerting']);
    expect(grafana.initContainers[0].env, 'no alerting variable: no public URL, no webhook').toBeUndefined();
    const { files, stdout } = await runSelectAlerting(objects);
    expect(Object.keys(files)).toEqual(['kalypso-alerts.yaml']);
    expect(files['kalypso-alerts.yaml']).toBe(await readFile(path.join(REPO, 'deploy/grafana/provisioning/alerting/kalypso-alerts.yaml'), 'utf8'));
    expect(stdout).toContain('nothing is sent');
    expect(find(objects, 'Secret', 'kalypso-grafana-alert-webhook')).toBeUndefined();
    expect(rendered.get('defaults')!.notes).toContain('send nothing: set grafana.alerting.webhookUrl');
  });

  it('Grafana alerting: the webhook URL in a Secret, both containers reading it, the routed rules and the Slack contact point provisioned', async () => {
    const objects = objectsOf('Grafana alerting');
    await checkConsistent(objects, []);
    await checkGrafanaProvisioning(objects);
    const secret = get(objects, 'Secret', 'kalypso-grafana-alert-webhook');
    expect(secret['stringData']).toEqual({ url: 'https://hooks.slack.com/services/T000/B000/XXXXXXXX' });
    const grafana = get(objects, 'Deployment', 'kalypso-grafana').spec.template.spec.containers[0];
    const variable = (name: string): any => grafana.env.find((candidate: any) => candidate.name === name);
    expect(variable('KALYPSO_ALERT_WEBHOOK_URL').valueFrom.secretKeyRef).toEqual({ name: 'kalypso-grafana-alert-webhook', key: 'url' });
    // The hub's public URL is the alerts' links; the runbooks your page.
    expect(variable('KALYPSO_PUBLIC_URL').value).toBe(hubEnv(objects, 'KALYPSO_PUBLIC_URL').value);
    expect(variable('KALYPSO_ALERT_RUNBOOK_URL').value).toBe('https://wiki.example.com/kalypso-alerts');
    expect(variable('KALYPSO_ALERT_WEBHOOK_TYPE')).toBeUndefined();
    const { files, stdout } = await runSelectAlerting(objects);
    expect(Object.keys(files).sort()).toEqual(['kalypso-alerts.yaml', 'kalypso-contact-point.yaml']);
    expect(files['kalypso-alerts.yaml']).toBe(await readFile(path.join(REPO, 'deploy/grafana/provisioning/alerting-webhook/kalypso-alerts.yaml'), 'utf8'));
    expect(files['kalypso-contact-point.yaml']).toBe(await readFile(path.join(REPO, 'deploy/grafana/provisioning/alerting-webhook/contact-point-slack.yaml'), 'utf8'));
    expect(stdout).not.toContain('XXXXXXXX');
    // Another webhook rolls the pod: the init container decides only when it starts.
    const annotation = (values: object): Promise<string> =>
      renderChart(values).then(({ objects: others }) => get(others, 'Deployment', 'kalypso-grafana').spec.template.metadata.annotations['checksum/alerting']);
    expect(await annotation({ ...CASES['Grafana alerting'], grafana: { alerting: { webhookUrl: 'https://hooks.slack.com/services/T000/B000/YYYYYYYY' } } })).not.toBe(
      get(objects, 'Deployment', 'kalypso-grafana').spec.template.metadata.annotations['checksum/alerting'],
    );
    expect(rendered.get('Grafana alerting')!.notes).toContain('sent to the contact point "Kalypso"');
  });

  it('Grafana alerting from a Secret: the URL from your Secret, the type named, the Teams contact point provisioned', async () => {
    const objects = objectsOf('Grafana alerting from a Secret');
    await checkConsistent(objects, ['kalypso-alert-webhook']);
    await checkGrafanaProvisioning(objects);
    expect(find(objects, 'Secret', 'kalypso-grafana-alert-webhook')).toBeUndefined();
    const init = get(objects, 'Deployment', 'kalypso-grafana').spec.template.spec.initContainers[0];
    expect(init.env).toEqual([
      { name: 'KALYPSO_ALERT_WEBHOOK_URL', valueFrom: { secretKeyRef: { name: 'kalypso-alert-webhook', key: 'url' } } },
      { name: 'KALYPSO_ALERT_WEBHOOK_TYPE', value: 'teams' },
    ]);
    const { files } = await runSelectAlerting(objects, { 'kalypso-alert-webhook': { url: 'https://contoso.webhook.example/workflows/1' } });
    expect(YAML.parse(files['kalypso-contact-point.yaml']!).contactPoints[0].receivers[0].type).toBe('teams');
  });

  it('watched namespaces: a Role in each, no ClusterRole', async () => {
    const objects = objectsOf('watched namespaces');
    await checkConsistent(objects, []);
    expect(objects.filter((object) => object.kind.startsWith('Cluster'))).toEqual([]);
    expect(hubEnv(objects, 'KALYPSO_KUBE_NAMESPACES').value).toBe('team-a,team-b');
    for (const namespace of ['team-a', 'team-b']) {
      const role = objects.find((object) => object.kind === 'Role' && object.metadata.namespace === namespace)!;
      expect(role['rules']).toEqual([...get(objectsOf('defaults'), 'ClusterRole', 'kalypso-system-kalypso-hub')['rules'], { apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]);
      expect(objects.find((object) => object.kind === 'RoleBinding' && object.metadata.namespace === namespace)?.['roleRef'].name).toBe(role.metadata.name);
    }
    expect(get(objects, 'Role', 'kalypso-hub')['rules'], 'the Lease only, in the release namespace').toHaveLength(2);
  });

  it('watcher off: no RBAC, no service account token', async () => {
    const objects = objectsOf('watcher off');
    await checkConsistent(objects, []);
    expect(objects.filter((object) => object.kind.includes('Role'))).toEqual([]);
    expect(hubEnv(objects, 'KALYPSO_KUBE').value).toBe('off');
    expect(hubPod(objects).automountServiceAccountToken).toBe(false);
  });

  it('network policies: the PostgreSQL reachable from the hub and Grafana only', async () => {
    const objects = objectsOf('network policies');
    await checkConsistent(objects, []);
    const postgres = get(objects, 'NetworkPolicy', 'kalypso-postgresql');
    const podLabels = (name: string): Record<string, string> => workloads(objects).find((workload) => workload.metadata.name === name)!.spec.template.metadata.labels;
    expect(Object.entries(postgres['spec'].podSelector.matchLabels).every(([key, value]) => podLabels('kalypso-postgresql')[key] === value)).toBe(true);
    const peers = postgres['spec'].ingress[0].from.map((peer: any) => workloads(objects).filter((workload) => Object.entries(peer.podSelector.matchLabels).every(([key, value]) => workload.spec.template.metadata.labels[key] === value)).map((workload) => workload.metadata.name));
    expect(peers).toEqual([['kalypso-hub'], ['kalypso-grafana']]);
    expect(get(objects, 'NetworkPolicy', 'kalypso-hub')['spec'].ingress[0].ports.map((port: any) => port.port)).toEqual(['http', 'otlp-grpc', 'otlp-http']);
    expect(objectsOf('defaults').filter((object) => object.kind === 'NetworkPolicy')).toEqual([]);
  });

  it('AKS workload identity: the identity on the ServiceAccount, the pods labelled for the webhook, OTLP on an internal load balancer', async () => {
    const objects = objectsOf('AKS workload identity');
    await checkConsistent(objects, []);
    expect(get(objects, 'ServiceAccount', 'kalypso-hub').metadata.annotations?.['azure.workload.identity/client-id']).toBe('11111111-2222-3333-4444-555555555555');
    expect(get(objects, 'Deployment', 'kalypso-hub').spec.template.metadata.labels['azure.workload.identity/use']).toBe('true');
    const otlp = get(objects, 'Service', 'kalypso-hub-otlp');
    expect(otlp['spec'].type).toBe('LoadBalancer');
    expect(otlp.metadata.annotations?.['service.beta.kubernetes.io/azure-load-balancer-internal']).toBe('true');
    expect(rendered.get('AKS workload identity')!.notes).toContain('kubectl -n kalypso-system get svc kalypso-hub-otlp');
  });
});

describe('values the chart refuses', () => {
  it('a wrong type, an unknown key or a value outside the list (values.schema.json), naming it', async () => {
    expect(await chartRefusal({ replicaCount: 'two' })).toMatch(/\/replicaCount.*want integer/);
    expect(await chartRefusal({ grafana: { enabeld: false } })).toMatch(/\/grafana.*'enabeld' not allowed/);
    expect(await chartRefusal({ service: { otlp: { type: 'Public' } } })).toMatch(/\/service\/otlp\/type/);
    expect(await chartRefusal({ auth: { existingSecret: 42 } })).toMatch(/\/auth\/existingSecret.*want string/);
    expect(await chartRefusal({ resourceGraph: { sources: [{ ...ARG_SOURCE, interval: '5 minutes' }] } })).toMatch(/\/resourceGraph\/sources\/0\/interval/);
  });

  it('a values file of the original hub’s chart, naming each old key and its replacement', async () => {
    const original = YAML.parse(await readFile(path.join(REPO, 'test/fixtures/original-hub/derived/user-values.yaml'), 'utf8'));
    const refusal = await chartRefusal(original);
    for (const key of ['controllerManager', 'controllerManagerConfig', 'api-server', 'postgres', 'kubernetesClusterDomain', 'metricsService', 'grafana.grafana', 'grafana.config', 'grafana.pvc', 'grafana.grafanaSvc']) {
      expect(refusal).toContain(`${key} is a value of the original hub's chart; here: `);
    }
  });

  it('settings the chart sets from its own values, and every secret setting', async () => {
    const secret = Object.values(HUB_SETTINGS).filter((setting) => 'secret' in setting && setting.secret === true).map((setting) => setting.flag);
    expect(secret).toEqual(expect.arrayContaining(['database-url', 'api-token', 'ingest-token']));
    const owned = [...secret, 'kube', 'tls-cert-file', 'arg-config', 'http-port', 'public-url', 'notifications', 'argocd', 'kube-cluster-name'];
    const refusal = await chartRefusal({ settings: Object.fromEntries(owned.map((flag) => [flag, 'x'])) });
    for (const flag of owned) expect(refusal).toContain(`settings.${flag} is set by the chart: use `);
  });

  it('a notifications or alerting value the hub or Grafana would refuse at start (values.schema.json)', async () => {
    const github = { name: 'apps', type: 'github', repos: ['https://github.com/contoso/*'], tokenFrom: { secretKeyRef: { name: 'github-status', key: 'token' } } };
    expect(await chartRefusal({ publicUrl: 'https://kalypso.example.com', notifications: { commitStatus: [{ ...github, token: 'ghp_inline' }] } })).toMatch(/\/notifications\/commitStatus\/0.*'token' not allowed/);
    expect(await chartRefusal({ publicUrl: 'https://kalypso.example.com', notifications: { commitStatus: [{ ...github, repos: [] }] } })).toMatch(/\/notifications\/commitStatus\/0\/repos/);
    expect(await chartRefusal({ publicUrl: 'https://kalypso.example.com', notifications: { slack: [] } })).toMatch(/\/notifications.*'slack' not allowed/);
    expect(await chartRefusal({ grafana: { alerting: { webhookType: 'email' } } })).toMatch(/\/grafana\/alerting\/webhookType/);
    expect(await chartRefusal({ grafana: { alerting: { webhookUrl: 'hooks.slack.com/services/T000' } } })).toMatch(/\/grafana\/alerting\/webhookUrl/);
    expect(await chartRefusal({ metrics: { prometheusRule: { runbookUrl: 'https://wiki.example.com/kalypso#alerts' } } })).toMatch(/\/metrics\/prometheusRule\/runbookUrl/);
  });

  it('parts that need another: an external database without its Secret, Argo CD without a cluster name, notifications without a public URL, two webhook URLs', async () => {
    expect(await chartRefusal({ postgresql: { enabled: false } })).toContain('name the Secret with your database');
    expect(await chartRefusal({ notifications: CASES.notifications.notifications })).toContain('notifications: set publicUrl (or an Ingress host)');
    expect(await chartRefusal({ grafana: { alerting: { webhookUrl: 'https://hooks.example', webhookUrlFrom: { secretKeyRef: { name: 'a', key: 'b' } } } } })).toContain('set webhookUrl or webhookUrlFrom, not both');
    expect(await chartRefusal({ argocd: { enabled: true } })).toContain('set kube.clusterName');
    expect(await chartRefusal({ argocd: { enabled: true }, kube: { enabled: false, clusterName: 'x' } })).toContain('argocd.enabled needs kube.enabled');
  });
});

describe('settings', () => {
  it('each hub setting the chart leaves to `settings` becomes its own KALYPSO_* variable', async () => {
    const refused = Object.keys(YAML.parse((await readFile(path.join(CHART, 'templates/_helpers.tpl'), 'utf8')).split('{{- define "kalypso.chartSettings" -}}')[1]!.split('{{- end -}}')[0]!));
    const free = Object.values(HUB_SETTINGS).filter((setting) => !refused.includes(setting.flag));
    expect(free.length).toBeGreaterThan(10);
    const { objects } = await renderChart({ settings: Object.fromEntries(free.map((setting) => [setting.flag, 'x'])) });
    for (const setting of free) expect(hubEnv(objects, setting.env[0]!)?.value, setting.flag).toBe('x');
    // The chart's own defaults are settings of the hub, with values it takes.
    const values = YAML.parse(await readFile(path.join(CHART, 'values.yaml'), 'utf8'));
    for (const flag of Object.keys(values.settings)) expect(free.map((setting) => setting.flag)).toContain(flag);
  });
});

describe('docs/deploying.md', () => {
  it('names every value of values.yaml in its table', async () => {
    const values = YAML.parse(await readFile(path.join(CHART, 'values.yaml'), 'utf8'));
    // Maps the chart passes through whole (resources, security contexts, settings) are one value.
    const whole = new Set(['settings', 'resources', 'podSecurityContext', 'securityContext', 'tlsConfig', 'nodeSelector', 'affinity', 'annotations', 'labels', 'podAnnotations', 'podLabels']);
    const paths: string[] = [];
    const walk = (node: Record<string, unknown>, prefix: string): void => {
      for (const [key, value] of Object.entries(node)) {
        const at = prefix === '' ? key : `${prefix}.${key}`;
        if (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length > 0 && !whole.has(key)) walk(value as Record<string, unknown>, at);
        else paths.push(at);
      }
    };
    walk(values, '');
    const guide = await readFile(path.join(REPO, 'docs/deploying.md'), 'utf8');
    expect(paths.filter((value) => !guide.includes(`\`${value}\``))).toEqual([]);
  });
});

describe('packaging', () => {
  it('the chart’s CRDs are crds/ (links), and `helm package` carries them, the Grafana files and the PrometheusRule as files', async () => {
    const { stdout } = await helm(['show', 'crds', CHART]);
    const shown = YAML.parseAllDocuments(stdout).map((document) => document.toJS()).filter(Boolean);
    const files = (await readdir(path.join(REPO, 'crds'))).filter((file) => file.startsWith('hub.kalypso.io_')).sort();
    expect((await readdir(path.join(CHART, 'crds'))).sort()).toEqual(files);
    const ours = await Promise.all(files.map(async (file) => YAML.parse(await readFile(path.join(REPO, 'crds', file), 'utf8'))));
    expect(shown.map((crd: any) => crd.metadata.name).sort()).toEqual(ours.map((crd) => crd.metadata.name).sort());
    for (const crd of shown) expect(await kubeSchemaErrors(crd)).toEqual([]);

    const directory = await mkdtemp(path.join(os.tmpdir(), 'kalypso-package-'));
    try {
      await helm(['package', CHART, '--destination', directory]);
      const [tgz] = await readdir(directory);
      const { stdout: listing } = await run('tar', ['tzvf', path.join(directory, tgz!)]);
      const carried = ['files/grafana/dashboards/drift.json', 'files/grafana/provisioning/datasources/kalypso.yaml', 'files/grafana/select-alerting.sh', 'files/grafana/provisioning/alerting-webhook/contact-point-teams.yaml', 'files/prometheus/kalypso-hub-rules.yaml'];
      for (const file of [...files.map((crd) => `crds/${crd}`), ...carried]) {
        expect(listing, file).toMatch(new RegExp(`^-\\S+\\s.*kalypso-observability-hub/${file.replaceAll('.', '\\.')}$`, 'm'));
      }
      const packaged = await renderChart(CASES['monitoring on'], { chart: path.join(directory, tgz!) });
      // The same objects (random passwords aside), the PrometheusRule included.
      const withoutPasswords = (objects: KubeObject[]): string => JSON.stringify(objects.map((object) => (object.kind === 'Secret' ? object.metadata : object)));
      expect(withoutPasswords(packaged.objects)).toBe(withoutPasswords(objectsOf('monitoring on')));
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});

/** deploy/prometheus/kalypso-hub-rules.yaml as committed. */
async function committedRules(): Promise<any> {
  return YAML.parse(await readFile(path.join(REPO, 'deploy/prometheus/kalypso-hub-rules.yaml'), 'utf8'));
}

/** Rule groups with every `job="kalypso-hub-api"` selector replaced by `selector`. */
function withJob(groups: any[], selector: string): any[] {
  return groups.map((group) => ({ ...group, rules: group.rules.map((rule: any) => ({ ...rule, expr: rule.expr.replaceAll('job="kalypso-hub-api"', selector) })) }));
}

/** The label matchers of each vector selector of a PromQL expression (which must parse). */
function vectorSelectors(expr: string): string[] {
  const matchers: string[] = [];
  let errors = 0;
  parser.parse(expr).iterate({
    enter(node) {
      if (node.type.isError) errors += 1;
      if (node.name === 'VectorSelector') {
        const found = node.node.getChild('LabelMatchers');
        matchers.push(found === null ? '' : expr.slice(found.from, found.to));
      }
    },
  });
  expect(errors, expr).toBe(0);
  return matchers;
}

/** The text of a file the hub reads from a projected volume, and the Secret keys mounted beside it (path → key). */
function mountedFiles(objects: readonly KubeObject[], file: string): { text: string; secretFiles: Map<string, { name: string; key: string }> } {
  const mount = hubContainer(objects).volumeMounts.find((candidate: any) => file.startsWith(`${candidate.mountPath}/`));
  const volume = hubPod(objects).volumes.find((candidate: any) => candidate.name === mount.name);
  const relative = file.slice(mount.mountPath.length + 1);
  let text: string | undefined;
  const secretFiles = new Map<string, { name: string; key: string }>();
  for (const source of volume.projected.sources) {
    const from = source.configMap ?? source.secret;
    const object = find(objects, source.configMap ? 'ConfigMap' : 'Secret', from.name);
    if (object !== undefined && (object['data']?.[relative] ?? object['stringData']?.[relative]) !== undefined) text = object['data']?.[relative] ?? object['stringData'][relative];
    for (const item of from.items ?? []) secretFiles.set(`${mount.mountPath}/${item.path}`, { name: from.name, key: item.key });
  }
  if (text === undefined) throw new Error(`${file} is not in its volume`);
  return { text, secretFiles };
}

/** The ConfigMap behind the volume a container mounts at `mountPath`. */
function mountedConfigMap(objects: readonly KubeObject[], pod: any, container: any, mountPath: string): Record<string, string> {
  const mount = container.volumeMounts.find((candidate: any) => candidate.mountPath === mountPath);
  expect(mount, `${container.name} mounts ${mountPath}`).toBeDefined();
  const volume = pod.volumes.find((candidate: any) => candidate.name === mount.name);
  return get(objects, 'ConfigMap', volume.configMap.name)['data'] as Record<string, string>;
}

/**
 * Grafana is given exactly the committed provisioning files, where it reads them; its alerting
 * directory is an emptyDir that the init container fills from the committed alert rules, contact
 * points and select-alerting.sh.
 */
async function checkGrafanaProvisioning(objects: readonly KubeObject[]): Promise<void> {
  const pod = get(objects, 'Deployment', 'kalypso-grafana').spec.template.spec;
  const grafana = pod.containers.find((container: any) => container.name === 'grafana');
  const init = pod.initContainers.find((container: any) => container.name === 'select-alerting');
  const committed = async (container: any, mountPath: string, directory: string, files?: readonly string[]): Promise<void> => {
    const data = mountedConfigMap(objects, pod, container, mountPath);
    const listed = files ?? (await readdir(path.join(REPO, 'deploy/grafana', directory))).sort();
    expect(Object.keys(data).sort(), `${mountPath} has every file of deploy/grafana/${directory}`).toEqual(listed);
    for (const file of listed) expect(data[file], file).toBe(await readFile(path.join(REPO, 'deploy/grafana', directory, file), 'utf8'));
  };
  await committed(grafana, '/etc/grafana/provisioning/datasources', 'provisioning/datasources');
  await committed(grafana, '/etc/grafana/provisioning/dashboards', 'provisioning/dashboards');
  await committed(grafana, '/var/lib/grafana/dashboards/kalypso', 'dashboards');
  await committed(init, '/kalypso/provisioning/alerting', 'provisioning/alerting');
  await committed(init, '/kalypso/provisioning/alerting-webhook', 'provisioning/alerting-webhook');
  await committed(init, '/kalypso/scripts', '.', ['select-alerting.sh']);
  expect(init.command).toEqual(['sh', '/kalypso/scripts/select-alerting.sh', '/kalypso/provisioning', '/etc/grafana/provisioning/alerting']);
  expect(init.image, 'the script runs in Grafana’s own image (its sh)').toBe(grafana.image);
  // The one directory both containers share: written by the init container, read by Grafana.
  const shared = (container: any): string => container.volumeMounts.find((mount: any) => mount.mountPath === '/etc/grafana/provisioning/alerting').name;
  expect(shared(init)).toBe(shared(grafana));
  expect(pod.volumes.find((volume: any) => volume.name === shared(grafana))).toEqual({ name: shared(grafana), emptyDir: {} });
  // Both see the same alerting variables: what the script decides on is what Grafana expands.
  const alertingEnv = (container: any): unknown[] => (container.env ?? []).filter((variable: any) => /^KALYPSO_(ALERT_|PUBLIC_URL)/.test(variable.name));
  expect(alertingEnv(init)).toEqual(alertingEnv(grafana));
  const provider = YAML.parse(await readFile(path.join(REPO, 'deploy/grafana/provisioning/dashboards/kalypso.yaml'), 'utf8'));
  expect(provider.providers[0].options.path).toBe('/var/lib/grafana/dashboards/kalypso');
  const home = grafana.env.find((variable: any) => variable.name === 'GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH').value as string;
  expect(await readdir(path.join(REPO, 'deploy/grafana/dashboards'))).toContain(path.basename(home));
}

/**
 * Runs Grafana's init container as the pod would: its command, with each mount a scratch directory
 * holding the ConfigMap's files and its variables resolved (`secrets`: the values of Secrets the
 * chart does not render). The files it leaves in Grafana's alerting directory, and its output.
 */
async function runSelectAlerting(objects: readonly KubeObject[], secrets: Record<string, Record<string, string>> = {}): Promise<{ files: Record<string, string>; stdout: string }> {
  const pod = get(objects, 'Deployment', 'kalypso-grafana').spec.template.spec;
  const init = pod.initContainers.find((container: any) => container.name === 'select-alerting');
  const root = await mkdtemp(path.join(os.tmpdir(), 'kalypso-init-'));
  try {
    const local = (mountPath: string): string => path.join(root, mountPath);
    for (const mount of init.volumeMounts) {
      await mkdir(local(mount.mountPath), { recursive: true });
      const volume = pod.volumes.find((candidate: any) => candidate.name === mount.name);
      if (volume.emptyDir !== undefined) continue;
      for (const [file, text] of Object.entries(mountedConfigMap(objects, pod, init, mount.mountPath))) await writeFile(path.join(local(mount.mountPath), file), text);
    }
    const environment: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
    for (const variable of init.env ?? []) {
      const ref = variable.valueFrom?.secretKeyRef;
      const rendered = ref === undefined ? undefined : find(objects, 'Secret', ref.name);
      environment[variable.name] = variable.value ?? rendered?.['stringData']?.[ref.key] ?? secrets[ref.name]?.[ref.key];
    }
    const [command, ...args] = init.command as string[];
    const { stdout } = await run(command!, args.map((arg) => (arg.startsWith('/') ? local(arg) : arg)), { env: environment });
    const target = local('/etc/grafana/provisioning/alerting');
    const files = Object.fromEntries(await Promise.all((await readdir(target)).map(async (file) => [file, await readFile(path.join(target, file), 'utf8')] as const)));
    return { files, stdout };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
