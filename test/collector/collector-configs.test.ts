// The OpenTelemetry Collector configurations in otel-collector/, checked without a collector:
// every component a pipeline names is defined and every defined one is used, storage and auth
// references point at extensions the service starts, and each file carries the settings the hub
// depends on (gzip, retries that never give up, a queue on disk, the attributes it requires).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { renderChart } from '../support/helm-chart.ts';

const DIRECTORY = path.resolve(import.meta.dirname, '../../otel-collector');
const FILES = ['edge.yaml', 'argocd.yaml', 'gateway.yaml', 'agent-custom.yaml'] as const;
const SECTIONS = { receivers: 'receivers', processors: 'processors', exporters: 'exporters' } as const;
/** Exporter types that speak OTLP (names before and after the v0.144 renames). */
const OTLP_EXPORTERS = new Set(['otlp', 'otlp_grpc', 'otlphttp', 'otlp_http']);
/** Environment variable the hub's address comes from, or the in-cluster service name. */
const HUB_ENDPOINT = /KALYPSO_HUB_ENDPOINT|kalypso-hub/;

type Config = Record<string, any>;

async function load(file: string): Promise<Config> {
  const document = YAML.parseDocument(await readFile(path.join(DIRECTORY, file), 'utf8'));
  expect(document.errors, `${file}: YAML errors`).toEqual([]);
  const config = document.toJS() as unknown;
  expect(typeof config === 'object' && config !== null, `${file}: not a map`).toBe(true);
  return config as Config;
}

/** `type` of a component id `type` or `type/name`. */
function componentType(id: string): string {
  return id.split('/')[0]!;
}

function pipelines(config: Config): [string, Config][] {
  return Object.entries(config['service']?.['pipelines'] ?? {});
}

/** Every value under `key` anywhere in the tree, with its path. */
function findKeys(node: unknown, key: string, at = ''): { path: string; value: unknown }[] {
  if (Array.isArray(node)) return node.flatMap((item, i) => findKeys(item, key, `${at}[${i}]`));
  if (typeof node !== 'object' || node === null) return [];
  return Object.entries(node).flatMap(([name, value]) => [
    ...(name === key ? [{ path: `${at}.${name}`, value }] : []),
    ...findKeys(value, key, `${at}.${name}`),
  ]);
}

/** Exporters (id → settings) that send to the hub. */
function hubExporters(config: Config): [string, Config][] {
  return Object.entries<Config>(config['exporters'] ?? {}).filter(
    ([id, settings]) => OTLP_EXPORTERS.has(componentType(id)) && HUB_ENDPOINT.test(String(settings?.['endpoint'] ?? '')),
  );
}

/** All OTTL statements and stanza operators of a config, as one text to search. */
function transformationText(config: Config): string {
  const processors = Object.entries<Config>(config['processors'] ?? {}).filter(([id]) => componentType(id) === 'transform');
  const receivers = Object.values<Config>(config['receivers'] ?? {});
  return JSON.stringify([processors.map(([, settings]) => settings), receivers.map((settings) => settings?.['operators'] ?? [])]);
}

describe.each(FILES)('otel-collector/%s', (file) => {
  it('is YAML with logs pipelines only', async () => {
    const config = await load(file);
    const all = pipelines(config);
    expect(all.length).toBeGreaterThan(0);
    for (const [id, pipeline] of all) {
      expect(componentType(id), `pipeline ${id}`).toBe('logs');
      expect(pipeline['receivers']?.length, `${id} has no receivers`).toBeGreaterThan(0);
      expect(pipeline['exporters']?.length, `${id} has no exporters`).toBeGreaterThan(0);
    }
  });

  it('defines every component a pipeline or the service names', async () => {
    const config = await load(file);
    for (const [id, pipeline] of pipelines(config)) {
      for (const section of Object.values(SECTIONS)) {
        for (const component of (pipeline[section] ?? []) as string[]) {
          expect(Object.keys(config[section] ?? {}), `${id}.${section}: ${component} is not defined`).toContain(component);
        }
      }
    }
    for (const extension of (config['service']?.['extensions'] ?? []) as string[]) {
      expect(Object.keys(config['extensions'] ?? {}), `service.extensions: ${extension} is not defined`).toContain(extension);
    }
  });

  it('uses every component it defines', async () => {
    const config = await load(file);
    for (const section of Object.values(SECTIONS)) {
      const used = new Set(pipelines(config).flatMap(([, pipeline]) => (pipeline[section] ?? []) as string[]));
      for (const component of Object.keys(config[section] ?? {})) {
        expect(used.has(component), `${section}.${component} is in no pipeline`).toBe(true);
      }
    }
    const started = new Set((config['service']?.['extensions'] ?? []) as string[]);
    for (const extension of Object.keys(config['extensions'] ?? {})) {
      expect(started.has(extension), `extensions.${extension} is not in service.extensions`).toBe(true);
    }
  });

  it('points storage and auth references at extensions the service starts', async () => {
    const config = await load(file);
    const defined = Object.keys(config['extensions'] ?? {});
    const started = (config['service']?.['extensions'] ?? []) as string[];
    const references = [
      ...findKeys(config, 'storage').filter(({ path: at }) => !at.startsWith('.extensions')),
      ...findKeys(config, 'auth').map(({ path: at, value }) => ({ path: `${at}.authenticator`, value: (value as Config | null)?.['authenticator'] })),
    ];
    for (const { path: at, value } of references) {
      expect(typeof value, `${at} must name an extension`).toBe('string');
      expect(defined, `${at}: ${String(value)} is not defined`).toContain(value);
      expect(started, `${at}: ${String(value)} is not in service.extensions`).toContain(value);
    }
  });

  it('puts memory_limiter first wherever it is used', async () => {
    const config = await load(file);
    for (const [id, pipeline] of pipelines(config)) {
      const processors = (pipeline['processors'] ?? []) as string[];
      const index = processors.findIndex((processor) => componentType(processor) === 'memory_limiter');
      if (index >= 0) expect(index, `${id}: memory_limiter must come first`).toBe(0);
    }
  });

  it('sends to the hub with gzip, endless retries and a queue on disk', async () => {
    const config = await load(file);
    const toHub = hubExporters(config);
    expect(toHub.length, 'no exporter sends to the hub').toBeGreaterThan(0);
    const used = new Set(pipelines(config).flatMap(([, pipeline]) => (pipeline['exporters'] ?? []) as string[]));
    for (const [id, settings] of toHub) {
      expect(used.has(id), `${id} is in no pipeline`).toBe(true);
      expect(settings['compression'], `${id}.compression`).toBe('gzip');
      expect(settings['retry_on_failure']?.['enabled'], `${id}.retry_on_failure.enabled`).not.toBe(false);
      expect([0, '0', '0s'], `${id}.retry_on_failure.max_elapsed_time`).toContain(settings['retry_on_failure']?.['max_elapsed_time']);
      const storage = settings['sending_queue']?.['storage'] as unknown;
      expect(typeof storage === 'string' && componentType(storage) === 'file_storage', `${id}.sending_queue.storage`).toBe(true);
      expect(settings['sending_queue']?.['enabled'], `${id}.sending_queue.enabled`).not.toBe(false);
    }
  });

  it('never asks the hub for a compression it cannot decode', async () => {
    const config = await load(file);
    for (const [id, settings] of hubExporters(config)) {
      expect(['zstd', 'snappy'], `${id}.compression`).not.toContain(settings['compression']);
    }
  });
});

describe('edge.yaml', () => {
  it('watches Kustomizations and GitRepositories, and lists them in full periodically', async () => {
    const config = await load('edge.yaml');
    const receiver = config['receivers']['k8sobjects'];
    expect(receiver['auth_type']).toBe('serviceAccount');
    const objects = receiver['objects'] as Config[];
    for (const [name, group] of [
      ['kustomizations', 'kustomize.toolkit.fluxcd.io'],
      ['gitrepositories', 'source.toolkit.fluxcd.io'],
    ]) {
      const entries = objects.filter((object) => object['name'] === name);
      expect(entries.map((object) => object['group'])).toEqual(entries.map(() => group));
      expect(entries.map((object) => object['mode']).sort()).toEqual(['pull', 'watch']);
      // A full list more often than the hub's 15-minute staleness limit.
      const interval = String(entries.find((object) => object['mode'] === 'pull')!['interval']);
      const minutes = /^(\d+)m$/.exec(interval)?.[1];
      expect(minutes !== undefined && Number(minutes) < 15, `pull interval ${interval}`).toBe(true);
    }
  });

  it('adds k8s.cluster.name to the resource of every record', async () => {
    const config = await load('edge.yaml');
    const [pipeline] = pipelines(config);
    const processors = (pipeline![1]['processors'] ?? []) as string[];
    const adding = processors.filter((id) =>
      ((config['processors'][id]?.['attributes'] ?? []) as Config[]).some(
        (action) => action['key'] === 'k8s.cluster.name' && ['insert', 'upsert'].includes(action['action']) && /\$\{env:\w+/.test(String(action['value'])),
      ),
    );
    expect(adding.map(componentType)).toEqual(['resource']);
  });
});

describe('argocd.yaml', () => {
  it('watches Argo CD Applications: changes only, Argo CD’s own refreshes being the sign of life', async () => {
    const config = await load('argocd.yaml');
    const receiver = config['receivers']['k8sobjects'];
    expect(receiver['auth_type']).toBe('serviceAccount');
    expect(receiver['objects']).toEqual([{ name: 'applications', group: 'argoproj.io', mode: 'watch' }]);
  });

  it('adds k8s.cluster.name to the resource of every record, and keeps what the hub reads', async () => {
    const config = await load('argocd.yaml');
    const [, pipeline] = pipelines(config)[0]!;
    const adding = ((pipeline['processors'] ?? []) as string[]).filter((id) =>
      ((config['processors'][id]?.['attributes'] ?? []) as Config[]).some((action) => action['key'] === 'k8s.cluster.name' && action['action'] === 'upsert'),
    );
    expect(adding.map(componentType)).toEqual(['resource']);
    // The slimming deletes only parts the hub does not read: never managedFields (its times date each state), spec, sync or health.
    const deleted = [...transformationText(config).matchAll(/delete_key\(([^)]*)\)/g)].map((match) => match[1]!);
    expect(deleted.length).toBeGreaterThan(0);
    for (const statement of deleted) expect(statement).not.toMatch(/managedFields|\\"spec\\"|\\"sync\\"|\\"health\\"|\\"operationState\\"\], \\"(phase|message)/);
  });
});

describe('gateway.yaml', () => {
  it('feeds the hub and another backend from one otlp receiver', async () => {
    const config = await load('gateway.yaml');
    const receiver = config['receivers']['otlp']['protocols'];
    expect(receiver['grpc']['endpoint']).toBe('0.0.0.0:4317');
    expect(receiver['http']['endpoint']).toBe('0.0.0.0:4318');
    const all = pipelines(config);
    expect(all.length).toBeGreaterThanOrEqual(2);
    for (const [id, pipeline] of all) expect(pipeline['receivers'], id).toContain('otlp');
    const toHub = new Set(hubExporters(config).map(([id]) => id));
    const hubPipelines = all.filter(([, pipeline]) => (pipeline['exporters'] as string[]).some((id) => toHub.has(id)));
    const otherPipelines = all.filter(([, pipeline]) => (pipeline['exporters'] as string[]).some((id) => !toHub.has(id)));
    expect(hubPipelines.length).toBeGreaterThan(0);
    expect(otherPipelines.length).toBeGreaterThan(0);
  });

  it('balances over every hub replica through the chart’s headless Service', async () => {
    const [[, exporter]] = hubExporters(await load('gateway.yaml')) as [[string, Config]];
    expect(exporter['balancer_name']).toBe('round_robin');
    const target = /^\$\{env:KALYPSO_HUB_ENDPOINT:-dns:\/\/\/([^.]+)\.kalypso-system\.svc\.cluster\.local:(\d+)\}$/.exec(String(exporter['endpoint']));
    expect(target, String(exporter['endpoint'])).not.toBeNull();
    // The docs' release: helm install kalypso … --namespace kalypso-system.
    const services = (await renderChart()).objects.filter((object) => object.kind === 'Service');
    const service: Config | undefined = services.find((candidate) => candidate.metadata.name === target![1]);
    expect(service?.['spec']['clusterIP'], `${target![1]} must be headless`).toBe('None');
    expect(service?.['spec']['ports'].map((port: Config) => String(port['port']))).toContain(target![2]);
  });

  it('filters the hub pipeline only by Kalypso record kinds, keeping all of them', async () => {
    const config = await load('gateway.yaml');
    const filters = Object.entries<Config>(config['processors']).filter(([id]) => componentType(id) === 'filter');
    for (const [, settings] of filters) {
      const text = JSON.stringify(settings);
      for (const kept of ['kalypso.deployment.state', 'kalypso.deployment.descriptor', 'kustomizations', 'gitrepositories', 'applications', 'event_name', 'attributes[\\"event.name\\"]']) {
        expect(text, `filter must keep ${kept}`).toContain(kept);
      }
    }
  });
});

describe('agent-custom.yaml', () => {
  it('tails a JSON-lines file, taking the timestamp from the line', async () => {
    const config = await load('agent-custom.yaml');
    const [id, receiver] = Object.entries<Config>(config['receivers'])[0]!;
    expect(componentType(id)).toBe('filelog');
    const parser = (receiver['operators'] as Config[]).find((operator) => operator['type'] === 'json_parser');
    expect(parser, 'json_parser operator').toBeDefined();
    const timestamp = parser!['timestamp'] ?? (receiver['operators'] as Config[]).find((operator) => operator['type'] === 'time_parser');
    expect(timestamp?.['parse_from'], 'timestamp parsed from the line').toBeTruthy();
  });

  it('turns each line into a kalypso.deployment.state record with the attributes the hub needs', async () => {
    const config = await load('agent-custom.yaml');
    const text = transformationText(config);
    expect(text).toMatch(/set\(log\.attributes\[\\"event\.name\\"\], \\"kalypso\.deployment\.state\\"\)/);
    for (const attribute of ['kalypso.reconciler.name', 'kalypso.reconciler.type', 'kalypso.manifests.endpoint', 'vcs.ref.head.revision', 'kalypso.deployment.status']) {
      expect(text, attribute).toContain(`set(log.attributes[\\"${attribute}\\"]`);
    }
    expect(text, 'body = status message').toContain('set(log.body, ');
  });

  it('names the host', async () => {
    const config = await load('agent-custom.yaml');
    const [pipeline] = pipelines(config);
    const processors = (pipeline![1]['processors'] ?? []) as string[];
    const detection = processors.filter((id) => componentType(id) === 'resourcedetection');
    expect(detection.length).toBe(1);
    expect(config['processors'][detection[0]!]['detectors']).toContain('system');
  });
});
