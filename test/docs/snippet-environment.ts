// What the docs' commands run against: one hub with its CRD watcher on (against the Kubernetes
// API server stand-in, on a migrated test database of its own), fed a small fleet through its
// OTLP receiver, and a shell that runs a block as written with only its addresses replaced.
//
// The fleet the README and the guides name (the commands work on it as they are written):
//   workload contoso/shop/my-service, target `main`, manifests in github.com/contoso/app-gitops
//   dev:  version 1.4.2 at DEV_COMMIT on …/dev/my-service, applied by aks-dev-1
//   prod: version 1.4.1 at PROD_COMMIT (it starts 4f6e2a9c1d, as the docs type it) on
//         …/prod/my-service, applied by aks-prod-3 and aks-prod-4
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { k8sTools } from '../../scripts/k8s-tools.ts';
import { sendLogs, type ResourceLogsToSend } from '../../src/demo/otlp-http-sender.ts';
import type { RunningHub } from '../../src/hub.ts';
import { type KubeHub, startKubeHub } from '../support/kube-hub.ts';
import { randomCommit } from '../support/random-ids.ts';
import { type CommandResult, runCommand } from '../support/run-command.ts';
import { REPO } from './markdown.ts';

export const GITOPS_REPO = 'https://github.com/contoso/app-gitops';
export const WORKLOAD = { workspace: 'contoso', application: 'shop', name: 'my-service', target: 'main' } as const;

export interface DocsFleet {
  readonly devCommit: string;
  readonly prodCommit: string;
  readonly endpoint: (environment: string) => string;
}

export interface SnippetEnvironment {
  readonly kube: KubeHub;
  readonly hub: RunningHub;
  readonly fleet: DocsFleet;
  /** The hub's API, as a pipeline's KALYPSO_URL. */
  readonly url: string;
  /** Connection string of the hub's database, as its owner. */
  readonly databaseUrl: string;
  /** The documented addresses and connection strings replaced by this environment's. */
  substitute(text: string): string;
  /** Runs `script` with bash (`set -eo pipefail` first), `kalypso-hub` on the PATH, in `cwd` (default: the repository). */
  shell(script: string, options?: { readonly env?: NodeJS.ProcessEnv; readonly cwd?: string; readonly timeoutMs?: number }): Promise<CommandResult>;
  /** Runs `work` on a connection as `kalypso_reader`, the role Grafana reads with. */
  asReader<T>(work: (client: pg.Client) => Promise<T>): Promise<T>;
  /** Runs `work` on a connection as the database's owner, in a transaction that is rolled back. */
  rolledBack<T>(work: (client: pg.Client) => Promise<T>): Promise<T>;
  stop(): Promise<void>;
}

export async function startSnippetEnvironment(): Promise<SnippetEnvironment> {
  const kube = await startKubeHub();
  const { hub } = kube;
  const bin = await mkdtemp(path.join(os.tmpdir(), 'kalypso-docs-bin-'));
  // As `npm link` would install the package's command: a link to bin/kalypso-hub.js, whose
  // `#!/usr/bin/env node` finds the Node that runs the suite first on the PATH.
  await symlink(path.join(REPO, 'bin/kalypso-hub.js'), path.join(bin, 'kalypso-hub'));
  // The docs' kubectl and helm are those of npm run k8s-tools (a name alone: already on the PATH).
  for (const [name, tool] of Object.entries(await k8sTools())) if (path.isAbsolute(tool)) await symlink(tool, path.join(bin, name));
  const url = `http://127.0.0.1:${hub.ports.http}`;
  const database = new URL(kube.testDb.url);
  const fleet = await feedDocsFleet(`http://127.0.0.1:${hub.ports.otlpHttp}`);

  const substitute = (text: string): string =>
    text
      .replaceAll('postgres://postgres:kalypso@127.0.0.1:5433/kalypso', kube.testDb.url)
      .replaceAll('127.0.0.1:5433', database.host)
      .replaceAll('https://hub.example.com', url)
      .replaceAll('http://hub.example.com:4318', `http://127.0.0.1:${hub.ports.otlpHttp}`)
      .replaceAll('hub.example.com:4317', `127.0.0.1:${hub.ports.otlpGrpc}`)
      .replaceAll('localhost:8080', `127.0.0.1:${hub.ports.http}`)
      .replaceAll('localhost:4318', `127.0.0.1:${hub.ports.otlpHttp}`)
      .replaceAll('localhost:4317', `127.0.0.1:${hub.ports.otlpGrpc}`);

  const withClient = async <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: kube.testDb.url });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };

  return {
    kube,
    hub,
    fleet,
    url,
    databaseUrl: kube.testDb.url,
    substitute,
    shell: (script, options = {}) =>
      runCommand('bash', ['-c', `set -eo pipefail\n${script}`], {
        cwd: options.cwd ?? REPO,
        env: { PATH: [bin, path.dirname(process.execPath), process.env.PATH].join(path.delimiter), ...options.env },
        timeoutMs: options.timeoutMs ?? 60_000,
      }),
    asReader: (work) =>
      withClient(async (client) => {
        await client.query('SET ROLE kalypso_reader');
        return work(client);
      }),
    rolledBack: (work) => kube.testDb.rolledBack(work),
    stop: async () => {
      await kube.stop();
      await rm(bin, { recursive: true, force: true });
    },
  };
}

/** The docs' fleet, sent as a CD pipeline and the clusters would send it: OTLP records to the receiver. */
async function feedDocsFleet(otlpEndpoint: string): Promise<DocsFleet> {
  const devCommit = randomCommit();
  const prodCommit = `4f6e2a9c1d${randomCommit().slice(10)}`;
  const endpoint = (environment: string): string => `${GITOPS_REPO}/${environment}/${WORKLOAD.name}`;
  const now = Date.now();
  const descriptor = (environment: string, version: string, build: string, commit: string): ResourceLogsToSend => ({
    resource: { 'service.name': 'cd-pipeline' },
    logs: [
      {
        eventName: 'kalypso.deployment.descriptor',
        time: new Date(now - 20 * 60_000),
        attributes: { 'vcs.ref.head.revision': commit },
        body: JSON.stringify({
          workload: {
            name: WORKLOAD.name,
            source: { repo: `https://github.com/contoso/${WORKLOAD.name}`, branch: 'main', path: '.' },
            application: { name: WORKLOAD.application, workspace: { name: WORKLOAD.workspace } },
          },
          deploymentTarget: { name: WORKLOAD.target, environment, manifests: { repo: GITOPS_REPO, branch: environment, path: WORKLOAD.name } },
          workloadVersion: { version, build, commit: randomCommit(), buildTime: new Date(now - 60 * 60_000).toISOString() },
        }),
      },
    ],
  });
  const state = (host: string, environment: string, commit: string, minutesAgo: number): ResourceLogsToSend => ({
    resource: { 'k8s.cluster.name': host },
    logs: [
      {
        eventName: 'kalypso.deployment.state',
        time: new Date(now - minutesAgo * 60_000),
        attributes: {
          'kalypso.reconciler.name': `flux-system/${WORKLOAD.name}`,
          'kalypso.reconciler.type': 'flux',
          'vcs.repository.url.full': GITOPS_REPO,
          'vcs.ref.head.name': environment,
          'kalypso.manifests.path': WORKLOAD.name,
          'vcs.ref.head.revision': commit,
          'kalypso.deployment.status': 'success',
        },
        body: `Applied revision: ${environment}@sha1:${commit}`,
      },
    ],
  });
  // One request per environment, dev first: that is the promotion order the hub learns.
  for (const batch of [
    [descriptor('dev', '1.4.2', 'build-812', devCommit)],
    [descriptor('prod', '1.4.1', 'build-790', prodCommit)],
    [state('aks-dev-1', 'dev', devCommit, 3), state('aks-prod-3', 'prod', prodCommit, 2), state('aks-prod-4', 'prod', prodCommit, 1)],
  ]) {
    const sent = await sendLogs(otlpEndpoint, batch);
    if (sent.rejected > 0) throw new Error(`the docs fleet was refused: ${sent.errorMessage}`);
  }
  return { devCommit, prodCommit, endpoint };
}
