// A hub that reports to the git-host stand-ins, and a small fleet fed through its real OTLP
// receiver (the official SDK exporter): a CD pipeline's descriptors for an environment's merge,
// and clusters reporting what they applied. Names and commits are random.
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { HubOverrides, RunningHub } from '../../src/hub.ts';
import { GitHostStandIn, type Provider } from './git-host-standin.ts';
import { buildLogRecords, createExporter, ExportResultCode, exportLogs, type LogSpec } from './otlp-client.ts';
import { randomCommit, randomName } from './random-ids.ts';
import { startTestHub } from './test-hub.ts';

export const PUBLIC_URL = 'https://kalypso.example.com';
/** Fast enough for a test: progress every 300 ms, rate limits without a named wait held 1 s. */
export const FAST_NOTIFY = { judgeEveryMs: 200, sendEveryMs: 100, progressIntervalMs: 300, firstBackoffMs: 200, rateLimitedBackoffMs: 1_000, fleetWatchEveryMs: 200 } as const;

export interface NotifyOrg {
  readonly org: string;
  readonly gitopsRepo: string;
  readonly sourceRepo: string;
}

/** An organization's GitOps and source repositories, on GitHub, a GitLab server (in a subgroup) or Azure Repos. */
export function randomOrg(provider: Provider = 'github'): NotifyOrg {
  const org = randomName('org');
  const repo = (name: string): string =>
    provider === 'github'
      ? `https://github.com/${org}/${name}`
      : provider === 'gitlab'
        ? `https://gitlab.example.com/${org}/platform/${name}`
        : `https://dev.azure.com/${org}/platform/_git/${name}`;
  return { org, gitopsRepo: repo('platform-gitops'), sourceRepo: repo(randomName('svc')) };
}

/** The repository globs that cover `randomOrg(provider)`'s repositories. */
export function orgRepos(org: NotifyOrg, provider: Provider): string[] {
  return provider === 'github'
    ? [`https://github.com/${org.org}/*`]
    : provider === 'gitlab'
      ? [`https://gitlab.example.com/${org.org}/**`]
      : [`https://dev.azure.com/${org.org}/**`];
}

/** A notifications file naming the stand-in for each provider, and a webhook; tokens and secrets in files. */
export async function notificationsFile(standIn: GitHostStandIn, options: { readonly repos: Partial<Record<Provider, readonly string[]>>; readonly webhook?: boolean }): Promise<string> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'kalypso-notify-'));
  const lines: string[] = ['commitStatus:'];
  const apiPaths: Record<Provider, [string, string]> = { github: ['github', '/github'], gitlab: ['gitlab', '/gitlab/api/v4'], azure: ['azuredevops', '/azure'] };
  for (const [provider, repos] of Object.entries(options.repos) as [Provider, readonly string[]][]) {
    const token = `${provider}-${randomCommit()}`;
    standIn.tokens.set(provider, token);
    const tokenFile = path.join(directory, `${provider}-token`);
    await writeFile(tokenFile, `${token}\n`);
    const [type, apiPath] = apiPaths[provider];
    lines.push(`  - name: ${provider}-statuses`, `    type: ${type}`, `    apiUrl: ${standIn.url}${apiPath}`, `    tokenFile: ${tokenFile}`, `    repos: [${repos.map((repo) => JSON.stringify(repo)).join(', ')}]`);
  }
  if (options.webhook === true) {
    const secret = `secret-${randomCommit()}`;
    standIn.secrets.set('decisions', secret);
    const secretFile = path.join(directory, 'webhook-secret');
    await writeFile(secretFile, secret);
    lines.push('webhooks:', '  - name: decisions', `    url: ${standIn.url}/hooks/decisions`, `    secretFile: ${secretFile}`);
  }
  const file = path.join(directory, 'notifications.yaml');
  await writeFile(file, `${lines.join('\n')}\n`);
  return file;
}

export async function startNotifyingHub(databaseUrl: string, file: string, overrides: HubOverrides = {}, flags: readonly string[] = []): Promise<RunningHub> {
  return await startTestHub(databaseUrl, ['--notifications', file, '--public-url', PUBLIC_URL, ...flags], { notifyTuning: FAST_NOTIFY, ...overrides });
}

/** A merge to an environment's branch, as the CD pipeline reports it: one descriptor per workload. */
export function mergeDescriptors(org: NotifyOrg, environment: string, merge: { commit: string; version: string; buildCommit: string; workloads: readonly string[] }): LogSpec[] {
  return merge.workloads.map((workload) => ({
    resource: { 'service.name': 'cd-pipeline' },
    eventName: 'kalypso.deployment.descriptor',
    attributes: { 'vcs.ref.head.revision': merge.commit },
    body: {
      workload: { name: workload, source: { repo: org.sourceRepo, branch: 'main', path: '.' }, application: { name: 'shop', workspace: { name: org.org } } },
      deploymentTarget: { name: 'main', environment, manifests: { repo: org.gitopsRepo, branch: environment, path: workload } },
      workloadVersion: { version: merge.version, build: `build-${merge.version}`, commit: merge.buildCommit, buildTime: new Date(Date.now() - 600_000).toISOString() },
    },
    time: new Date(),
  }));
}

/** What a cluster's reconcilers report: one state per workload, all on the given commit. */
export function clusterStates(org: NotifyOrg, environment: string, cluster: string, commit: string, status: string, workloads: readonly string[]): LogSpec[] {
  return workloads.map((workload) => ({
    resource: { 'k8s.cluster.name': cluster },
    eventName: 'kalypso.deployment.state',
    attributes: {
      'kalypso.reconciler.name': `flux-system/${workload}`,
      'kalypso.reconciler.type': 'flux',
      'vcs.repository.url.full': org.gitopsRepo,
      'vcs.ref.head.name': environment,
      'kalypso.manifests.path': workload,
      'vcs.ref.head.revision': `${environment}@sha1:${commit}`,
      'kalypso.deployment.status': status,
    },
    body: status === 'failure' ? `Health check failed for ${workload}` : `Applied revision: ${environment}@sha1:${commit}`,
    time: new Date(),
  }));
}

/** `token`: the ingest credential, where the hub asks for one. */
export async function send(hub: RunningHub, specs: readonly LogSpec[], token?: string): Promise<void> {
  const exporter = createExporter('http-protobuf', hub.ports, token === undefined ? {} : { token });
  try {
    const result = await exportLogs(exporter, await buildLogRecords(specs));
    if (result.code !== ExportResultCode.SUCCESS) throw new Error(`export failed: ${String(result.error)}`);
  } finally {
    await exporter.shutdown();
  }
}

export { GitHostStandIn };
