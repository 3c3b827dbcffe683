// Every kustomize overlay renders with `kubectl kustomize`, and what it renders holds together:
// probes on the hub's real endpoints, Services that select the pods and name their ports, every
// ConfigMap and Secret a pod uses either rendered or documented as created by the operator,
// Grafana given exactly the committed provisioning files.
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { k8sTools } from '../../scripts/k8s-tools.ts';
import { resolveHubConfig } from '../../src/settings.ts';

const run = promisify(execFile);
const DEFAULTS = resolveHubConfig([], {});
const ROOT = path.resolve(import.meta.dirname, '../..');

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: any;
  data?: Record<string, string>;
}

async function render(overlay: string): Promise<K8sObject[]> {
  const { stdout } = await run((await k8sTools()).kubectl, ['kustomize', path.join(ROOT, 'deploy/overlays', overlay)], { maxBuffer: 32 * 1024 * 1024 });
  return YAML.parseAllDocuments(stdout).map((document) => document.toJS() as K8sObject);
}

const find = (objects: K8sObject[], kind: string, name: string): K8sObject | undefined =>
  objects.find((object) => object.kind === kind && object.metadata.name === name);
const get = (objects: K8sObject[], kind: string, name: string): K8sObject => {
  const object = find(objects, kind, name);
  if (object === undefined) throw new Error(`${kind} ${name} is not rendered`);
  return object;
};

/** ConfigMaps and Secrets a pod template refers to, by kind. */
function referencedConfig(podSpec: any): { configMaps: string[]; secrets: string[] } {
  const configMaps = new Set<string>();
  const secrets = new Set<string>();
  for (const container of podSpec.containers ?? []) {
    for (const source of container.envFrom ?? []) {
      if (source.configMapRef) configMaps.add(source.configMapRef.name);
      if (source.secretRef) secrets.add(source.secretRef.name);
    }
    for (const variable of container.env ?? []) {
      if (variable.valueFrom?.configMapKeyRef) configMaps.add(variable.valueFrom.configMapKeyRef.name);
      if (variable.valueFrom?.secretKeyRef) secrets.add(variable.valueFrom.secretKeyRef.name);
    }
  }
  for (const volume of podSpec.volumes ?? []) {
    if (volume.configMap) configMaps.add(volume.configMap.name);
    if (volume.secret) secrets.add(volume.secret.secretName);
  }
  return { configMaps: [...configMaps], secrets: [...secrets] };
}

/** Secrets the production overlay expects the operator to create (see its kustomization.yaml). */
const OPERATOR_SECRETS = ['kalypso-database', 'kalypso-grafana-admin', 'kalypso-grafana-database', 'kalypso-hub-tokens'];

/** The environment variable of the hub container named `name`, as rendered. */
function hubEnv(objects: K8sObject[], name: string): any {
  return get(objects, 'Deployment', 'kalypso-hub').spec.template.spec.containers[0].env.find((variable: { name: string }) => variable.name === name);
}

function checkWorkloads(objects: K8sObject[], operatorSecrets: readonly string[]): void {
  const workloads = objects.filter((object) => object.kind === 'Deployment' || object.kind === 'StatefulSet');
  for (const workload of workloads) {
    const template = workload.spec.template;
    const name = `${workload.kind} ${workload.metadata.name}`;
    // The selector picks the template's pods.
    for (const [key, value] of Object.entries(workload.spec.selector.matchLabels as Record<string, string>)) {
      expect(template.metadata.labels[key], name).toBe(value);
    }
    expect(template.spec.securityContext.runAsNonRoot, name).toBe(true);
    const { configMaps, secrets } = referencedConfig(template.spec);
    for (const configMap of configMaps) expect(find(objects, 'ConfigMap', configMap), `${name} uses ConfigMap ${configMap}`).toBeDefined();
    for (const secret of secrets) {
      if (find(objects, 'Secret', secret) === undefined) expect(operatorSecrets, `${name} uses Secret ${secret}`).toContain(secret);
    }
    for (const container of template.spec.containers) {
      expect(container.resources?.requests, `${name} requests resources`).toBeDefined();
      expect(container.resources?.limits?.memory, `${name} has a memory limit`).toBeDefined();
      const ports = new Set((container.ports ?? []).map((port: { name: string }) => port.name));
      for (const probe of [container.livenessProbe, container.readinessProbe, container.startupProbe]) {
        if (probe?.httpGet !== undefined) expect(ports, `${name} probes a named port`).toContain(probe.httpGet.port);
      }
    }
  }
  // Every Service selects pods of some workload, on ports those pods name.
  for (const service of objects.filter((object) => object.kind === 'Service')) {
    const selector = service.spec.selector as Record<string, string>;
    const backends = workloads.filter((workload) => Object.entries(selector).every(([key, value]) => workload.spec.template.metadata.labels[key] === value));
    expect(backends.length, `Service ${service.metadata.name} selects pods`).toBeGreaterThan(0);
    const named = new Set(backends.flatMap((workload) => workload.spec.template.spec.containers.flatMap((container: any) => (container.ports ?? []).map((port: any) => port.name))));
    for (const port of service.spec.ports) expect(named, `Service ${service.metadata.name} port ${port.name}`).toContain(port.targetPort);
  }
  // Namespaced objects all land in kalypso-system.
  const clusterScoped = new Set(['Namespace', 'CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding']);
  for (const object of objects.filter((candidate) => !clusterScoped.has(candidate.kind))) {
    expect(object.metadata.namespace, `${object.kind} ${object.metadata.name}`).toBe('kalypso-system');
  }
}

function databaseSecretRef(objects: K8sObject[]): { name: string; key: string } {
  const container = get(objects, 'Deployment', 'kalypso-hub').spec.template.spec.containers[0];
  return container.env.find((variable: { name: string }) => variable.name === 'DATABASE_URL').valueFrom.secretKeyRef;
}

function checkHub(objects: K8sObject[]): void {
  const hub = get(objects, 'Deployment', 'kalypso-hub');
  expect(hub.spec.replicas).toBe(2);
  const container = hub.spec.template.spec.containers[0];
  expect(container.livenessProbe.httpGet.path).toBe('/healthz');
  expect(container.readinessProbe.httpGet.path).toBe('/readyz');
  const ports = Object.fromEntries(container.ports.map((port: { name: string; containerPort: number }) => [port.name, port.containerPort]));
  expect(ports).toEqual({ http: DEFAULTS.httpPort, 'otlp-grpc': DEFAULTS.otlpGrpcPort, 'otlp-http': DEFAULTS.otlpHttpPort });
  // Generated Secrets carry kustomize's content hash in their name.
  expect(databaseSecretRef(objects)).toEqual({ name: expect.stringMatching(/^kalypso-database(-[a-z0-9]{10})?$/), key: 'url' });
  expect(hub.spec.template.spec.serviceAccountName).toBe('kalypso-hub');
  // Longer than the hub's own drain deadline, so Kubernetes does not kill it mid-drain.
  expect(hub.spec.template.spec.terminationGracePeriodSeconds * 1_000).toBeGreaterThan(DEFAULTS.shutdownTimeout);
  expect(get(objects, 'Service', 'kalypso-hub-api').spec.ports.map((port: { port: number }) => port.port)).toEqual([DEFAULTS.httpPort]);
  expect(get(objects, 'Service', 'kalypso-hub-otlp').spec.ports.map((port: { port: number }) => port.port)).toEqual([DEFAULTS.otlpGrpcPort, DEFAULTS.otlpHttpPort]);
  expect(objects.filter((object) => object.kind === 'CustomResourceDefinition').map((crd) => crd.metadata.name).sort()).toEqual([
    'azureresourcegraphs.hub.kalypso.io',
    'deploymentdescriptors.hub.kalypso.io',
    'reconcilers.hub.kalypso.io',
  ]);
  for (const [kind, name] of [['ServiceAccount', 'kalypso-hub'], ['ClusterRole', 'kalypso-hub'], ['ClusterRoleBinding', 'kalypso-hub'], ['Role', 'kalypso-hub'], ['RoleBinding', 'kalypso-hub']] as const) {
    get(objects, kind, name);
  }
}

async function checkGrafana(objects: K8sObject[]): Promise<void> {
  const grafana = get(objects, 'Deployment', 'kalypso-grafana');
  const volumes = Object.fromEntries(grafana.spec.template.spec.volumes.filter((volume: any) => volume.configMap).map((volume: any) => [volume.name, volume.configMap.name]));
  const mounts = Object.fromEntries(grafana.spec.template.spec.containers[0].volumeMounts.map((mount: any) => [mount.name, mount.mountPath]));
  // Every file of the directory, as committed.
  const provisioned = async (mountPath: string, directory: string): Promise<void> => {
    const volume = Object.keys(mounts).find((name) => mounts[name] === mountPath)!;
    const configMap = get(objects, 'ConfigMap', volumes[volume]);
    for (const [file, text] of Object.entries(configMap.data!)) {
      expect(text, `${file} in ${configMap.metadata.name}`).toBe(await readFile(path.join(ROOT, 'deploy/grafana', directory, file), 'utf8'));
    }
    expect(Object.keys(configMap.data!).sort(), `${configMap.metadata.name} lists every file of deploy/grafana/${directory}`).toEqual(
      (await readdir(path.join(ROOT, 'deploy/grafana', directory))).sort(),
    );
  };
  await provisioned('/etc/grafana/provisioning/datasources', 'provisioning/datasources');
  await provisioned('/etc/grafana/provisioning/dashboards', 'provisioning/dashboards');
  await provisioned('/etc/grafana/provisioning/alerting', 'provisioning/alerting');
  await provisioned('/var/lib/grafana/dashboards/kalypso', 'dashboards');
  // The dashboard provider reads the directory the dashboards are mounted in.
  const provider = YAML.parse(await readFile(path.join(ROOT, 'deploy/grafana/provisioning/dashboards/kalypso.yaml'), 'utf8'));
  expect(provider.providers[0].options.path).toBe('/var/lib/grafana/dashboards/kalypso');
}

describe('kustomize overlays (kubectl kustomize)', () => {
  it('dev: the hub, PostgreSQL as a StatefulSet and Grafana, all wired up', async () => {
    const objects = await render('dev');
    checkHub(objects);
    checkWorkloads(objects, []);
    await checkGrafana(objects);
    const postgres = get(objects, 'StatefulSet', 'kalypso-postgres');
    expect(postgres.spec.volumeClaimTemplates[0].metadata.name).toBe('data');
    const databaseUrl = Buffer.from(get(objects, 'Secret', databaseSecretRef(objects).name).data!['url']!, 'base64').toString();
    expect(new URL(databaseUrl).host).toBe(`${get(objects, 'Service', 'kalypso-postgres').metadata.name}:5432`);
    // Grafana logs in as the reader role the PostgreSQL init script creates.
    const grafana = get(objects, 'Deployment', 'kalypso-grafana').spec.template.spec.containers[0];
    const grafanaDb = get(objects, 'Secret', grafana.envFrom.find((source: any) => source.secretRef).secretRef.name).data!;
    expect(Buffer.from(grafanaDb['KALYPSO_DB_USER']!, 'base64').toString()).toBe('kalypso_reader');
    const init = Object.values(get(objects, 'ConfigMap', postgres.spec.template.spec.volumes.find((volume: any) => volume.name === 'init').configMap.name).data!)[0]!;
    expect(init).toContain('CREATE ROLE kalypso_reader LOGIN');
  });

  it('production: no database in the cluster, the Secrets left to the operator, OTLP on a load balancer', async () => {
    const objects = await render('production');
    checkHub(objects);
    checkWorkloads(objects, OPERATOR_SECRETS);
    await checkGrafana(objects);
    expect(objects.filter((object) => object.kind === 'StatefulSet')).toEqual([]);
    expect(objects.filter((object) => object.kind === 'Secret')).toEqual([]);
    expect(get(objects, 'Service', 'kalypso-hub-otlp').spec.type).toBe('LoadBalancer');
    expect(get(objects, 'HorizontalPodAutoscaler', 'kalypso-hub').spec.minReplicas).toBe(2);
    // Reachable from outside the cluster: tokens are not optional.
    expect(hubEnv(objects, 'KALYPSO_INGEST_TOKEN').valueFrom.secretKeyRef).toEqual({ name: 'kalypso-hub-tokens', key: 'ingest' });
    expect(hubEnv(objects, 'KALYPSO_API_TOKEN').valueFrom.secretKeyRef).toEqual({ name: 'kalypso-hub-tokens', key: 'api' });
    expect(hubEnv(objects, 'KALYPSO_TLS_CERT_FILE')).toBeUndefined();
    const documented = await readFile(path.join(ROOT, 'deploy/overlays/production/kustomization.yaml'), 'utf8');
    for (const secret of OPERATOR_SECRETS) expect(documented).toContain(secret);
  });

  it('aks: production plus workload identity, an internal load balancer and TLS from a Secret', async () => {
    const objects = await render('aks');
    checkHub(objects);
    checkWorkloads(objects, [...OPERATOR_SECRETS, 'kalypso-hub-tls']);
    const pod = get(objects, 'Deployment', 'kalypso-hub').spec.template.spec;
    const container = pod.containers[0];
    const mount = container.volumeMounts.find((candidate: { name: string }) => candidate.name === 'tls');
    expect(pod.volumes.find((volume: { name: string }) => volume.name === 'tls').secret.secretName).toBe('kalypso-hub-tls');
    expect(hubEnv(objects, 'KALYPSO_TLS_CERT_FILE').value).toBe(`${mount.mountPath}/tls.crt`);
    expect(hubEnv(objects, 'KALYPSO_TLS_KEY_FILE').value).toBe(`${mount.mountPath}/tls.key`);
    for (const probe of [container.startupProbe, container.livenessProbe, container.readinessProbe]) expect(probe.httpGet.scheme).toBe('HTTPS');
    const guide = await readFile(path.join(ROOT, 'docs/install-aks.md'), 'utf8');
    for (const secret of ['kalypso-hub-tokens', 'kalypso-hub-tls']) expect(guide).toContain(secret);
    expect(get(objects, 'ServiceAccount', 'kalypso-hub').metadata.annotations?.['azure.workload.identity/client-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(get(objects, 'Deployment', 'kalypso-hub').spec.template.metadata.labels['azure.workload.identity/use']).toBe('true');
    expect(get(objects, 'Service', 'kalypso-hub-otlp').metadata.annotations?.['service.beta.kubernetes.io/azure-load-balancer-internal']).toBe('true');
  });
});
