// Checks for the docs' blocks that cannot run here as written (no cluster, no collector binary, no
// Azure): each validates what the command would apply, with the same rules the real consumer
// applies — the CRDs' schemas, the collector's wiring, the Secrets a rendered chart reads.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Ajv } from 'ajv';
import YAML from 'yaml';
import { jsonSchema } from '../support/crd-schemas.ts';
import { REPO } from './markdown.ts';

/**
 * What an API server with the hub's CRDs would say of `object`: the schema's errors, or [] when it
 * would accept it. Throws for a kind the CRDs do not define.
 */
export async function hubResourceErrors(object: any): Promise<string[]> {
  const directory = path.join(REPO, 'crds');
  for (const file of (await readdir(directory)).filter((name) => name.startsWith('hub.kalypso.io_'))) {
    const crd = YAML.parse(await readFile(path.join(directory, file), 'utf8'));
    const version = crd.spec.versions.find((candidate: any) => `${crd.spec.group}/${candidate.name}` === object?.apiVersion);
    if (crd.spec.names.kind !== object?.kind || version === undefined) continue;
    const validate = new Ajv({ strict: false, validateFormats: false, allErrors: true }).compile(jsonSchema(version.schema.openAPIV3Schema));
    return validate(object) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message ?? ''}`);
  }
  throw new Error(`no CRD in crds/ defines ${String(object?.apiVersion)} ${String(object?.kind)}`);
}

type Config = Record<string, any>;
const COMPONENT_SECTIONS = ['receivers', 'processors', 'exporters'] as const;
const OTLP_EXPORTERS = new Set(['otlp', 'otlp_grpc', 'otlphttp', 'otlp_http']);
const componentType = (id: string): string => id.split('/')[0]!;

/**
 * What an OpenTelemetry Collector would refuse in `config` (undefined or unused components, queues
 * on undefined storage), and where an exporter to `hubEndpoint` lacks what the hub relies on:
 * gzip or no compression, retries that never give up, a queue kept on disk.
 */
export function collectorConfigProblems(config: Config, hubEndpoint: string): string[] {
  const problems: string[] = [];
  const pipelines = Object.entries<Config>(config['service']?.['pipelines'] ?? {});
  if (pipelines.length === 0) problems.push('service.pipelines is empty');
  const extensions = Object.keys(config['extensions'] ?? {});
  const started = (config['service']?.['extensions'] ?? []) as string[];
  for (const extension of started) if (!extensions.includes(extension)) problems.push(`service.extensions: ${extension} is not defined`);
  for (const extension of extensions) if (!started.includes(extension)) problems.push(`extensions.${extension} is not started`);
  for (const section of COMPONENT_SECTIONS) {
    const defined = Object.keys(config[section] ?? {});
    const used = new Set(pipelines.flatMap(([, pipeline]) => (pipeline[section] ?? []) as string[]));
    for (const component of used) if (!defined.includes(component)) problems.push(`${section}.${component} is used but not defined`);
    for (const component of defined) if (!used.has(component)) problems.push(`${section}.${component} is in no pipeline`);
  }
  for (const [id, pipeline] of pipelines) {
    if (componentType(id) !== 'logs') problems.push(`pipeline ${id} is not a logs pipeline`);
    if (((pipeline['receivers'] ?? []) as string[]).length === 0) problems.push(`pipeline ${id} has no receivers`);
  }
  const toHub = Object.entries<Config>(config['exporters'] ?? {}).filter(
    ([id, settings]) => OTLP_EXPORTERS.has(componentType(id)) && settings?.['endpoint'] === hubEndpoint,
  );
  if (toHub.length === 0) problems.push(`no OTLP exporter sends to ${hubEndpoint}`);
  for (const [id, settings] of toHub) {
    if (!['gzip', 'none', undefined].includes(settings['compression'])) problems.push(`exporters.${id}.compression ${String(settings['compression'])}: the hub decodes gzip or none`);
    if (![0, '0', '0s'].includes(settings['retry_on_failure']?.['max_elapsed_time'])) problems.push(`exporters.${id} gives up retrying`);
    if (settings['retry_on_failure']?.['enabled'] === false) problems.push(`exporters.${id} does not retry`);
    const storage = settings['sending_queue']?.['storage'];
    if (typeof storage !== 'string' || componentType(storage) !== 'file_storage') problems.push(`exporters.${id}.sending_queue.storage is not a file_storage`);
    else if (!started.includes(storage)) problems.push(`exporters.${id}.sending_queue.storage ${storage} is not a started extension`);
  }
  return problems;
}

/** The paths a tree drawn with ├─ └─ │ names, from the repository root (`src/`, `src/hub.ts`, …). */
export function treePaths(tree: string): string[] {
  const paths: string[] = [];
  const parents: string[] = [];
  for (const line of tree.split('\n')) {
    if (line.trim() === '') continue;
    const branch = /[├└]─ /.exec(line);
    if (branch === null && /^\s/.test(line)) continue; // a description continued
    if (branch === null && line.startsWith('│')) continue;
    const depth = branch === null ? 0 : branch.index / 3 + 1;
    const rest = branch === null ? line : line.slice(branch.index + 3);
    // Entries first (a folder ends in /, a file has an extension), then the description.
    const names: string[] = [];
    for (const token of rest.split(/ {2,}/)) {
      if (!/^[\w.-]+\/$|^[\w-]+\.[\w.]+$|^Dockerfile$/.test(token)) break;
      names.push(token);
    }
    parents.length = depth;
    for (const name of names) paths.push(`${parents.join('')}${name}`);
    const folder = names.findLast((name) => name.endsWith('/'));
    if (folder !== undefined) parents[depth] = folder;
  }
  return paths;
}

/**
 * The Secrets a script creates with `kubectl create secret generic NAME --from-literal=KEY=…`, and
 * their keys (continued lines joined).
 */
export function secretsCreated(script: string): Map<string, string[]> {
  const secrets = new Map<string, string[]>();
  for (const command of script.replace(/\\\n\s*/g, ' ').split('\n')) {
    const created = /\bkubectl\b.*\bcreate secret generic ([\w.-]+)/.exec(command);
    if (created === null) continue;
    secrets.set(created[1]!, [...command.matchAll(/--from-literal=([\w.-]+)=/g)].map((match) => match[1]!));
  }
  return secrets;
}

/** Every Secret (and the keys it must have, when named) a rendered pod template reads. */
export function secretsReferenced(objects: readonly any[]): Map<string, Set<string>> {
  const referenced = new Map<string, Set<string>>();
  const note = (name: string, key?: string): void => {
    const keys = referenced.get(name) ?? new Set<string>();
    if (key !== undefined) keys.add(key);
    referenced.set(name, keys);
  };
  for (const object of objects) {
    const pod = object?.spec?.template?.spec;
    if (pod === undefined) continue;
    for (const volume of pod.volumes ?? []) if (volume.secret?.secretName !== undefined) note(volume.secret.secretName);
    for (const container of [...(pod.containers ?? []), ...(pod.initContainers ?? [])]) {
      for (const env of container.env ?? []) if (env.valueFrom?.secretKeyRef !== undefined) note(env.valueFrom.secretKeyRef.name, env.valueFrom.secretKeyRef.key);
      // An optional Secret (Grafana's alerting settings) is one the pod starts without.
      for (const from of container.envFrom ?? []) if (from.secretRef !== undefined && from.secretRef.optional !== true) note(from.secretRef.name);
    }
  }
  return referenced;
}
