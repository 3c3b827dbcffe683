// The hub's Helm chart (deploy/helm/kalypso-observability-hub) rendered by the real helm of
// npm run k8s-tools, offline: `helm install --dry-run=client` gives the manifest and NOTES.txt in
// one process, as `helm install` would render them with no release in the cluster yet (lookup
// finds nothing, so generated passwords are new ones).
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import YAML from 'yaml';
import { k8sTools } from '../../scripts/k8s-tools.ts';

const run = promisify(execFile);

export const REPO = path.resolve(import.meta.dirname, '../..');
export const CHART = path.join(REPO, 'deploy/helm/kalypso-observability-hub');
/** The release the docs install: its objects are named kalypso-hub, kalypso-hub-api, … */
export const RELEASE = { name: 'kalypso', namespace: 'kalypso-system' } as const;

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: any;
}

export interface Rendered {
  readonly objects: KubeObject[];
  readonly notes: string;
}

export interface RenderOptions {
  readonly release?: string;
  readonly namespace?: string;
  /** A chart directory or packaged .tgz other than the repository's. */
  readonly chart?: string;
}

/** Runs helm with a clean environment: no kubeconfig, so nothing can reach a cluster. */
export async function helm(args: readonly string[]): Promise<{ stdout: string; stderr: string }> {
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'kalypso-helm-'));
  try {
    return await run((await k8sTools()).helm, args, {
      maxBuffer: 64 * 1024 * 1024,
      env: {
        PATH: process.env.PATH,
        HOME: scratch,
        KUBECONFIG: path.join(scratch, 'no-kubeconfig'),
        HELM_CACHE_HOME: path.join(scratch, 'cache'),
        HELM_CONFIG_HOME: path.join(scratch, 'config'),
        HELM_DATA_HOME: path.join(scratch, 'data'),
      },
    });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** `-f` arguments for values given as objects (YAML files in a scratch directory). */
async function withValuesFiles<T>(values: readonly object[], work: (args: string[]) => Promise<T>): Promise<T> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'kalypso-values-'));
  try {
    const args: string[] = [];
    for (const [index, document] of values.entries()) {
      const file = path.join(directory, `values-${index}.yaml`);
      await writeFile(file, YAML.stringify(document));
      args.push('-f', file);
    }
    return await work(args);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

function installArgs(options: RenderOptions): string[] {
  return ['install', options.release ?? RELEASE.name, options.chart ?? CHART, '--namespace', options.namespace ?? RELEASE.namespace, '--dry-run=client', '--output', 'json'];
}

/** The chart rendered with `values` (merged over values.yaml, later files winning). */
export async function renderChart(values: object | readonly object[] = {}, options: RenderOptions = {}): Promise<Rendered> {
  const files = Array.isArray(values) ? values : [values];
  const { stdout } = await withValuesFiles(files, (args) => helm([...installArgs(options), ...args]));
  const release = JSON.parse(stdout) as { manifest: string; info: { notes?: string } };
  const objects = YAML.parseAllDocuments(release.manifest)
    .map((document) => document.toJS() as KubeObject | null)
    .filter((object): object is KubeObject => object !== null);
  return { objects, notes: release.info.notes ?? '' };
}

/** Why helm refuses to render the chart with `values` (its error output); throws if it renders. */
export async function chartRefusal(values: object | readonly object[]): Promise<string> {
  const files = Array.isArray(values) ? values : [values];
  return withValuesFiles(files, (args) =>
    helm([...installArgs({}), ...args]).then(
      () => {
        throw new Error(`the chart rendered with ${JSON.stringify(values)}`);
      },
      (error: Error & { stderr?: string }) => error.stderr ?? error.message,
    ),
  );
}

/** The RBAC rules the chart grants the hub with its default values, in the docs' release. */
export async function chartRoles(values: object = {}): Promise<KubeObject[]> {
  const { objects } = await renderChart(values);
  return objects.filter((object) => object.kind === 'ClusterRole' || object.kind === 'Role');
}
