// Every fenced code block of the README and the guides (docs/*.md; not the benchmark logs or the
// research notes) is either exercised here — the line before it is `<!-- snippet: <id> -->` and
// CASES has that id — or says why it is not: `<!-- not run: <reason> -->`.
//
// Exercised means run as written against real parts, with only the documented placeholders
// replaced (docs/testing.md, "The docs' commands"): shell blocks run with bash against one hub
// started here (its addresses for localhost:8080/4317/4318, hub.example.com and the embedded
// PostgreSQL's); SQL runs as kalypso_reader on the hub's database; resources go through the CRDs'
// schemas and the Kubernetes API server stand-in to the hub's watcher; pipeline YAML runs its
// steps' scripts with the pipeline's expressions filled in. Where a tool needs a cluster or Azure
// (kubectl apply, helm install, port-forward), a stand-in shell function says so and hands what
// the command would apply to the real renderer (`kubectl kustomize`, `--dry-run=client`, `helm
// template`).
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import YAML from 'yaml';
import { ALERT_RULES, CONTACT_POINT } from '../../scripts/grafana-alerts.ts';
import { loadArgConfig } from '../../src/sources/resource-graph/arg-config.ts';
import { loadNotifications } from '../../src/notify/notifications-file.ts';
import { loadChannels } from '../../src/notify/notifications.ts';
import { signature } from '../../src/notify/providers/webhook.ts';
import { resolveHubConfig } from '../../src/settings.ts';
import { loadAuthConfig } from '../../src/security/auth-config-file.ts';
import { parseServiceTokens } from '../../src/security/service-tokens-file.ts';
import { startBanner } from '../../src/cli/start-banner.ts';
import { normalizeDescriptorSpec } from '../../src/normalize/deployment-descriptor.ts';
import { parseResourceGraphSpec } from '../../src/normalize/kube-resources.ts';
import { ARGOCD_APPLICATIONS, DEPLOYMENT_DESCRIPTORS, RECONCILERS } from '../../src/sources/kube/kube-objects.ts';
import { apiGet } from '../support/api-get.ts';
import { type KubeObject, renderChart } from '../support/helm-chart.ts';
import { readyzStatus } from '../support/hub-process.ts';
import { kubeSchemaErrors } from '../support/kube-schemas.ts';
import { freePort } from '../support/ports.ts';
import { randomCommit } from '../support/random-ids.ts';
import { withServerRoles } from '../support/server-roles.ts';
import { createTestDatabase } from '../support/test-database.ts';
import { waitFor } from '../support/wait-for.ts';
import { type CodeBlock, codeBlocks, documentationFiles, REPO } from './markdown.ts';
import {
  collectorConfigProblems,
  hubResourceErrors,
  secretsCreated,
  secretsReferenced,
  treePaths,
} from './snippet-checks.ts';
import { GITOPS_REPO, type SnippetEnvironment, startSnippetEnvironment } from './snippet-environment.ts';

const files = (await documentationFiles()).filter((file) => !/^docs\/(benchmarks|research)\//.test(file.path));
const blocks = files.flatMap(codeBlocks);
const where = (block: CodeBlock): string => `${block.file}:${block.line}`;

function snippet(id: string): CodeBlock {
  const found = blocks.find((block) => block.marker.kind === 'snippet' && block.marker.id === id);
  if (found === undefined) throw new Error(`no block is marked <!-- snippet: ${id} -->`);
  return found;
}

const runs = (tool: string): Promise<boolean> =>
  new Promise((resolve) => spawn(tool, ['--version']).once('error', () => resolve(false)).once('exit', (code) => resolve(code === 0)));
const TOOLS = { curl: await runs('curl'), jq: await runs('jq'), psql: await runs('psql') };

/** Skips the case, saying why, when a tool its block calls is not installed here. */
function needs(context: TestContext, ...tools: (keyof typeof TOOLS)[]): void {
  const missing = tools.filter((tool) => !TOOLS[tool]);
  if (missing.length > 0) context.skip(`${missing.join(' and ')} not installed`);
}

let env: SnippetEnvironment;
let scratch: string;

/** A fresh directory for one case's files (descriptor-spec.json, sources.yaml, a values file). */
async function workDirectory(name: string): Promise<string> {
  return mkdtemp(path.join(scratch, `${name}-`));
}

/**
 * Stand-ins for the parts of kubectl and helm that need a cluster, as bash functions defined
 * before a block runs: what `apply` and `create secret` would send is rendered by the real kubectl
 * (kustomize, --dry-run=client) into $KUBECTL_APPLIED, what `helm install` / `helm upgrade
 * [--install]` would install by the real `helm template` with the same arguments; `delete` is
 * written to $KUBECTL_DELETED; port-forward, rollout status and helm uninstall have nothing to do
 * without a cluster (the test hub plays the forwarded Service). Other helm commands (show,
 * template) run as written: they need no cluster.
 */
const CLUSTER_STAND_INS = [
  'kubectl() {',
  '  case "$*" in',
  '    "apply -k "*) command kubectl kustomize "$3" >> "$KUBECTL_APPLIED"; echo --- >> "$KUBECTL_APPLIED" ;;',
  '    "apply --server-side -f -"|"apply --server-side --force-conflicts -f -") cat >> "$KUBECTL_APPLIED"; echo --- >> "$KUBECTL_APPLIED" ;;',
  '    *" create namespace "*|"create namespace "*) echo "namespace/${*: -1} (stand-in: no cluster)" ;;',
  '    *" create secret generic "*) command kubectl "$@" --dry-run=client -o yaml >> "$KUBECTL_APPLIED"; echo --- >> "$KUBECTL_APPLIED" ;;',
  '    *" delete "*) echo "$*" >> "$KUBECTL_DELETED" ;;',
  '    *" port-forward "*|*" rollout status "*) : ;;',
  '    *) echo "stand-in kubectl: \'$*\' needs a cluster" >&2; return 99 ;;',
  '  esac',
  '}',
  'helm() {',
  '  case "$1" in',
  '    install) shift; command helm template "$@" >> "$KUBECTL_APPLIED"; echo --- >> "$KUBECTL_APPLIED" ;;',
  '    upgrade) shift; [ "$1" != --install ] || shift; command helm template "$@" >> "$KUBECTL_APPLIED"; echo --- >> "$KUBECTL_APPLIED" ;;',
  '    uninstall) echo "release $2 uninstalled (stand-in: no cluster)" ;;',
  '    *) command helm "$@" ;;',
  '  esac',
  '}',
].join('\n');

async function applied(file: string): Promise<any[]> {
  return YAML.parseAllDocuments(await readFile(file, 'utf8'))
    .map((document) => document.toJS())
    .filter((object) => object !== null);
}

/** A pipeline's `${{ expression }}` (GitHub) or `$(Name)` (Azure) replaced by `values`; an unknown one fails. */
function withExpressions(text: string, values: Record<string, string>): string {
  return text.replace(/\$\{\{\s*([^}]+?)\s*\}\}|\$\(([\w.]+)\)/g, (whole, github: string | undefined, azure: string | undefined) => {
    const name = github ?? azure!;
    if (!(name in values)) throw new Error(`no value for ${whole}`);
    return values[name]!;
  });
}

/**
 * A pipeline step's script as this repository's checkout runs it: the expressions filled in, and
 * its first line — `npm install --omit=dev …`, which would strip the devDependencies the suite
 * runs on from this very checkout — left out (the checkout here is installed already).
 */
function stepScript(script: string, values: Record<string, string>): string {
  const lines = withExpressions(script, values).split('\n');
  expect(lines[0], 'the step installs the production dependencies first').toBe('npm install --omit=dev --no-audit --no-fund');
  return lines.slice(1).join('\n');
}

function stepEnv(stepEnvironment: Record<string, string>, values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(stepEnvironment).map(([name, value]) => [name, withExpressions(value, values)]));
}

async function hostState(host: string): Promise<any> {
  const answer = await apiGet(env.hub, `/hosts/${host}/state`);
  return answer.status === 200 ? answer.body : undefined;
}

async function targetState(environment: string): Promise<any> {
  const answer = await apiGet(env.hub, `/environments/${environment}/state`);
  return answer.status === 200 ? answer.body.items.find((item: any) => item.workload === 'my-service' && item.deploymentTarget === 'main') : undefined;
}

/** The chart as docs/install-aks.md installs it: its values file (the identity's client id as written). */
async function renderedAks(): Promise<KubeObject[]> {
  return (await renderChart(YAML.parse(snippet('aks-values').content))).objects;
}

/** docs/grafana-and-sql.md's embedded case: the snippet's variables, and Grafana's login with them. */
async function grafanaEmbedded(block: CodeBlock): Promise<void> {
  const result = await env.shell(`${env.substitute(block.content)}\nprintf '%s\\n' "$KALYPSO_DB_HOST" "$KALYPSO_DB_NAME" "$KALYPSO_DB_SSLMODE" "$KALYPSO_DB_USER" "$KALYPSO_DB_PASSWORD"`);
  try {
    expect(result.code, result.stderr).toBe(0);
    const [host, name, sslmode, user, password] = result.stdout.trim().split('\n').slice(-5);
    // Grafana's datasource is configured from exactly these variables.
    const datasource = await readFile(path.join(REPO, 'deploy/grafana/provisioning/datasources/kalypso.yaml'), 'utf8');
    const used = [...datasource.matchAll(/\$\{(KALYPSO_DB_\w+)\}/g)].map((match) => match[1]);
    expect(new Set(used)).toEqual(new Set(['KALYPSO_DB_HOST', 'KALYPSO_DB_NAME', 'KALYPSO_DB_SSLMODE', 'KALYPSO_DB_USER', 'KALYPSO_DB_PASSWORD']));
    expect([name, sslmode]).toEqual(['kalypso', 'disable']);
    // As Grafana would connect, to the test database that plays the embedded `kalypso`.
    const [hostname, port] = host!.split(':');
    const grafana = new pg.Client({ host: hostname, port: Number(port), user, password, database: new URL(env.databaseUrl).pathname.slice(1), ssl: false });
    await grafana.connect();
    try {
      await grafana.query('SELECT count(*) FROM kalypso_environment_state');
      await expect(grafana.query('SELECT count(*) FROM deployment_state')).rejects.toThrow(/permission denied/);
    } finally {
      await grafana.end();
    }
  } finally {
    const admin = new pg.Client({ connectionString: env.databaseUrl });
    await admin.connect();
    await admin.query('ALTER ROLE kalypso_reader NOLOGIN PASSWORD NULL');
    await admin.end();
  }
}

/** Runs a block with the cluster stand-ins in `directory`; what it would apply and delete. */
async function withStandIns(block: CodeBlock, directory: string, variables: Record<string, string> = {}): Promise<{ applied: KubeObject[]; deleted: string[] }> {
  const output = path.join(directory, 'applied.yaml');
  const deletions = path.join(directory, 'deleted.txt');
  await writeFile(output, '');
  await writeFile(deletions, '');
  const result = await env.shell(`${CLUSTER_STAND_INS}\n${block.content}`, { cwd: directory, env: { KUBECTL_APPLIED: output, KUBECTL_DELETED: deletions, ...variables } });
  expect(result.code, `${result.stdout}${result.stderr}`).toBe(0);
  return { applied: await applied(output), deleted: (await readFile(deletions, 'utf8')).split('\n').filter((line) => line !== '') };
}

/** A scratch directory where `deploy/helm/…` and `crds/` resolve as in a checkout. */
async function inCheckout(name: string): Promise<string> {
  const directory = await workDirectory(name);
  for (const entry of ['deploy', 'crds']) await symlink(path.join(REPO, entry), path.join(directory, entry));
  return directory;
}

/** What `helm install kalypso … --namespace kalypso-system` installs with the defaults holds together. */
function checkDefaultInstall(objects: readonly KubeObject[]): void {
  const hub = objects.find((object) => object.kind === 'Deployment' && object.metadata.name === 'kalypso-hub');
  expect(hub?.metadata.namespace).toBe('kalypso-system');
  expect(objects.find((object) => object.kind === 'StatefulSet')?.metadata.name, 'the bundled PostgreSQL').toBe('kalypso-postgresql');
  const api = objects.find((object) => object.kind === 'Service' && object.metadata.name === 'kalypso-hub-api');
  expect(api?.['spec'].ports.map((port: any) => port.port)).toEqual([8080]);
}

type Case = (block: CodeBlock, context: TestContext) => Promise<void> | void;

const CASES: Record<string, Case> = {
  // README
  'readme-otlp-curl': async (block, context) => {
    needs(context, 'curl');
    const result = await env.shell(env.substitute(block.content));
    expect(result.code, result.stderr).toBe(0);
    expect(Number(JSON.parse(result.stdout).partialSuccess?.rejectedLogRecords ?? 0)).toBe(0);
    expect((await hostState('aks-dev-1')).reconcilers).toContainEqual(
      expect.objectContaining({ reconciler: 'flux-system/hello-world', type: 'flux', status: 'success', commit: 'ca9ee9d0ff9ec52b998fdcf64e128c84ddd0e661' }),
    );
  },
  'readme-reconciler': async (block) => {
    const resource = YAML.parse(block.content);
    expect(await hubResourceErrors(resource)).toEqual([]);
    env.kube.api.apply(RECONCILERS, resource);
    const reconciler = await waitFor(
      async () => (await hostState('store-042'))?.reconcilers.find((candidate: any) => candidate.reconciler === 'flux-system/hello-world'),
      'the Reconciler in the hub',
    );
    expect(reconciler).toMatchObject({ status: 'success', commit: 'ca9ee9d0ff9ec52b998fdcf64e128c84ddd0e661', statusMessage: 'Resource is Ready' });
    const written = await waitFor(
      () => env.kube.api.get(RECONCILERS, 'dev', resource.metadata.name)?.status?.conditions?.find((condition: any) => condition.type === 'Ready'),
      'its Ready condition',
    );
    expect(written.status).toBe('True');
  },
  'readme-arg-config': async (block) => {
    const file = path.join(await workDirectory('arg'), 'sources.yaml');
    await writeFile(file, block.content);
    expect(await loadArgConfig(file)).toEqual([
      {
        name: 'contoso-prod',
        subscriptions: ['7be1b9e7-57ca-47ff-b5ab-82e7ccb8c611'],
        tenant: '16b3c013-d300-468d-ac64-7eda0820b6d3',
        credential: { kind: 'managed-identity', clientId: '02552706-98f9-4301-a473-017752fc430b' },
        intervalMs: 5 * 60_000,
        defaultWorkspace: undefined,
        defaultApplication: undefined,
      },
    ]);
    expect(resolveHubConfig(['--arg-config', file], {}).argConfig).toBe(file);
  },
  'readme-check-promote': async (block) => {
    const result = await env.shell(env.substitute(block.content), { env: { KALYPSO_URL: env.url } });
    expect(result.code, `${result.stdout}${result.stderr}`).toBe(0);
    expect(result.stdout).toMatch(/aks-prod-3[\s\S]*aks-prod-4|aks-prod-4[\s\S]*aks-prod-3/);
    expect(result.stdout).toContain(`commit ${env.fleet.prodCommit} in environment prod: 2/2 succeeded`);
  },
  'readme-api-curl': async (block, context) => {
    needs(context, 'curl');
    const result = await env.shell(env.substitute(block.content));
    expect(result.code, result.stderr).toBe(0);
    const host = JSON.parse(result.stdout);
    expect(host.name).toBe('aks-dev-1');
    expect(host.reconcilers).toContainEqual(expect.objectContaining({ reconciler: 'flux-system/my-service', commit: env.fleet.devCommit, status: 'success' }));
  },
  'readme-sql': async (block) => {
    await apiGet(env.hub, '/environments'); // a report folds the summary queue in, as the refresher would within a second
    const rows = await env.asReader(async (client) => (await client.query(block.content)).rows);
    expect(rows).toContainEqual(
      expect.objectContaining({ environment: 'prod', workload: 'my-service', deployment_target: 'main', desired_version: '1.4.1', deployed_versions: '1.4.1', status: 'success' }),
    );
    expect(rows.map((row) => row.environment)).toContain('dev');
  },
  'readme-notifications': async (block) => {
    const file = path.join(await workDirectory('readme-notifications'), 'notifications.yaml');
    await writeFile(file, block.content);
    const channels = await loadNotifications(file, { GITHUB_TOKEN: 'ghp_x', KALYPSO_WEBHOOK_SECRET: 'secret' });
    expect(channels.map((channel) => [channel.name, channel.kind])).toEqual([
      ['apps', 'commit-status'],
      ['decisions', 'webhook'],
    ]);
  },
  'readme-test-commands': async (block) => {
    // Not run from inside the suite they belong to: each names test folders and npm scripts that exist.
    const scripts = JSON.parse(await readFile(path.join(REPO, 'package.json'), 'utf8')).scripts as Record<string, string>;
    const commands = block.content.split('\n').map((line) => line.replace(/#.*$/, '').trim()).filter((line) => line !== '');
    for (const command of commands) {
      const vitest = /^npx vitest run (.+)$/.exec(command);
      const npmRun = /^npm run ([\w:-]+)$/.exec(command);
      expect(vitest !== null || npmRun !== null, command).toBe(true);
      for (const folder of vitest?.[1]?.split(/\s+/) ?? []) expect(await readFile(path.join(REPO, folder)).catch((error: NodeJS.ErrnoException) => error.code), folder).toBe('EISDIR');
      if (npmRun !== null) expect(Object.keys(scripts), command).toContain(npmRun[1]);
    }
  },

  // docs/sending-data.md
  'descriptor-spec': (block) => {
    const commit = randomCommit();
    const normalized = normalizeDescriptorSpec(JSON.parse(block.content), { prefix: 'body', commitId: commit, commitField: 'vcs.ref.head.revision', assignedAt: new Date() });
    expect(normalized).toMatchObject({
      ok: true,
      value: {
        kind: 'desired-state',
        workspace: 'contoso',
        application: 'shop',
        environment: 'dev',
        deploymentTarget: { name: 'main', manifests: { endpoint: `${GITOPS_REPO}/dev/my-service` } },
        workloadVersion: { version: '1.4.2', build: 'build-812' },
        commitId: commit,
      },
    });
  },
  'descriptor-curl': async (block, context) => {
    needs(context, 'curl', 'jq');
    const directory = await workDirectory('pipeline');
    await writeFile(path.join(directory, 'descriptor-spec.json'), snippet('descriptor-spec').content);
    const commit = randomCommit();
    const result = await env.shell(env.substitute(block.content), { cwd: directory, env: { GITOPS_COMMIT: commit } });
    expect(result.code, result.stderr).toBe(0);
    expect(Number(JSON.parse(result.stdout).partialSuccess?.rejectedLogRecords ?? 0)).toBe(0);
    expect((await targetState('dev')).desired).toMatchObject({ version: '1.4.2', build: 'build-812', commit });
  },
  'collector-exporter': (block) => {
    const document = YAML.parseDocument(block.content);
    expect(document.errors).toEqual([]);
    // The collector's own wiring rules and the hub's needs; no collector binary can run here.
    expect(collectorConfigProblems(document.toJS(), 'hub.example.com:4317')).toEqual([]);
    expect(resolveHubConfig([], {}).otlpGrpcPort, 'the exporter sends to the hub’s OTLP/gRPC port').toBe(4317);
  },

  // docs/api.md
  'api-compare': async (block, context) => {
    needs(context, 'curl', 'jq');
    const result = await env.shell(env.substitute(block.content));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.split('\n')).toContain('my-service/main');
  },

  // docs/check-promote.md
  'rollout-cli': async (block) => {
    const result = await env.shell(env.substitute(block.content), {
      env: { REPO: GITOPS_REPO, BRANCH: 'dev', PATH_IN_REPO: 'my-service', GITOPS_COMMIT: env.fleet.devCommit },
    });
    expect(result.code, `${result.stdout}${result.stderr}`).toBe(0);
    expect(result.stdout).toContain(`commit ${env.fleet.devCommit} on ${env.fleet.endpoint('dev')}: 1/1 succeeded`);
    expect(result.stdout).toContain(`commit ${env.fleet.prodCommit} in environment prod: 2/2 succeeded`);
  },
  'rollout-github-actions': async (block) => {
    const steps = YAML.parse(block.content) as any[];
    const setup = steps.find((step) => String(step.uses).startsWith('actions/setup-node@'));
    expect(Number(setup.with['node-version'])).toBeGreaterThanOrEqual(23); // ≥ 22.18 runs TypeScript directly
    const checkout = steps.find((step) => String(step.uses).startsWith('actions/checkout@'));
    const wait = steps.find((step) => typeof step.run === 'string');
    expect(wait['working-directory']).toBe(checkout.with.path);
    const script = stepScript(wait.run, { 'steps.gitops.outputs.commit': env.fleet.devCommit });
    const result = await env.shell(script, { env: stepEnv(wait.env, { 'vars.KALYPSO_HUB_URL': env.url }) });
    expect(result.code, `${result.stdout}${result.stderr}`).toBe(0);
    expect(result.stdout).toMatch(/: 1\/1 succeeded, 0 failed, 0 in progress, 0 stale: rolled out/);
  },
  'rollout-azure-pipelines': async (block) => {
    const steps = YAML.parse(block.content) as any[];
    expect(steps[0]).toMatchObject({ task: 'NodeTool@0', inputs: { versionSpec: '24.x' } });
    const wait = steps.find((step) => typeof step.script === 'string');
    expect(wait.workingDirectory).toBe('$(Build.SourcesDirectory)/kalypso-observability-hub');
    const values = { GitOpsEndpoint: env.fleet.endpoint('dev'), GitOpsCommit: env.fleet.devCommit, KalypsoHubUrl: env.url };
    const result = await env.shell(stepScript(wait.script, values), { env: stepEnv(wait.env, values) });
    expect(result.code, `${result.stdout}${result.stderr}`).toBe(0);
    expect(result.stdout).toMatch(/: 1\/1 succeeded, 0 failed, 0 in progress, 0 stale: rolled out/);
  },
  'rollout-curl': async (block, context) => {
    needs(context, 'curl', 'jq');
    const result = await env.shell(env.substitute(block.content), {
      env: { KALYPSO_URL: env.url, ENDPOINT: env.fleet.endpoint('dev'), COMMIT: env.fleet.devCommit },
    });
    expect(result.code, `${result.stdout}${result.stderr}`).toBe(0);
    expect(result.stdout.trim()).toBe('true');
  },
  'check-promote-cli': async (block) => {
    const result = await env.shell(env.substitute(block.content), { env: { KALYPSO_URL: env.url, ENV: 'prod', MERGE_COMMIT: env.fleet.prodCommit } });
    expect(result.code, `${result.stdout}${result.stderr}`).toBe(0);
    expect(result.stdout).toMatch(/: 2\/2 succeeded, 0 failed, 0 in progress, 0 stale: rolled out/);
  },
  'check-promote-github-actions': async (block) => {
    const steps = YAML.parse(block.content) as any[];
    const check = steps.findIndex((step) => step.name === 'Check Promote');
    const promote = steps.findIndex((step) => step.name === 'Promote to the next environment');
    expect(check).toBeGreaterThanOrEqual(0);
    expect(promote, 'promotion follows the check').toBeGreaterThan(check);
    expect(steps[promote].if, 'and runs only when it passed').toBe('success()');
    const values = {
      'inputs.environment': 'prod',
      'github.event.client_payload.merge_commit': env.fleet.prodCommit,
      'vars.KALYPSO_HUB_URL': env.url,
      'secrets.KALYPSO_API_TOKEN': 'a-token-the-test-hub-does-not-ask-for',
    };
    const result = await env.shell(stepScript(steps[check].run, values), { env: stepEnv(steps[check].env, values) });
    expect(result.code, `${result.stdout}${result.stderr}`).toBe(0);
    expect(result.stdout).toMatch(/: 2\/2 succeeded, 0 failed, 0 in progress, 0 stale: rolled out/);
  },
  'check-promote-azure-pipelines': async (block) => {
    const steps = YAML.parse(block.content) as any[];
    const check = steps.findIndex((step) => step.displayName === 'Check Promote');
    expect(steps.at(-1), 'promotion is the step after the check').toMatchObject({ template: 'promote.yaml' });
    expect(steps.length - 1).toBeGreaterThan(check);
    const values = {
      Environment: 'prod',
      MergeCommit: env.fleet.prodCommit,
      KalypsoHubUrl: env.url,
      KalypsoApiToken: 'a-token-the-test-hub-does-not-ask-for',
    };
    const result = await env.shell(stepScript(steps[check].script, values), { env: stepEnv(steps[check].env, values) });
    expect(result.code, `${result.stdout}${result.stderr}`).toBe(0);
    expect(result.stdout).toMatch(/: 2\/2 succeeded, 0 failed, 0 in progress, 0 stale: rolled out/);
  },

  // docs/kubernetes.md
  'kube-install-crds': async (block) => {
    const directory = await workDirectory('kubectl');
    const output = path.join(directory, 'applied.yaml');
    const result = await env.shell(`${CLUSTER_STAND_INS}\n${block.content}`, { env: { KUBECTL_APPLIED: output } });
    expect(result.code, result.stderr).toBe(0);
    const crds = await applied(output);
    expect(crds.map((crd) => `${crd.kind} ${crd.metadata.name}`).sort()).toEqual([
      'CustomResourceDefinition azureresourcegraphs.hub.kalypso.io',
      'CustomResourceDefinition deploymentdescriptors.hub.kalypso.io',
      'CustomResourceDefinition reconcilers.hub.kalypso.io',
    ]);
  },
  'kube-deployment-descriptor': async (block) => {
    const resource = YAML.parse(block.content);
    expect(await hubResourceErrors(resource)).toEqual([]);
    env.kube.api.apply(DEPLOYMENT_DESCRIPTORS, resource);
    const commit = resource.spec.deploymentTarget.manifests.commit as string;
    const target = await waitFor(async () => {
      const state = await targetState('qa');
      return state?.desired?.commit === commit ? state : undefined;
    }, 'the descriptor as desired state of qa');
    expect(target).toMatchObject({ workspace: 'contoso', application: 'shop', manifestsEndpoint: `${GITOPS_REPO}/qa/my-service`, desired: { version: '1.4.2' } });
    const status = await waitFor(() => env.kube.api.get(DEPLOYMENT_DESCRIPTORS, 'qa', resource.metadata.name)?.status, 'its status');
    expect(status.gitOpsCommitId).toBe(commit);
    expect(status.conditions).toContainEqual(expect.objectContaining({ type: 'Ready', status: 'True' }));
  },

  // docs/notifications.md
  'notifications-serve': (block) => {
    const [command, ...flags] = block.content.trim().split(/\s+/);
    expect(command).toBe('kalypso-hub');
    expect(flags[0]).toBe('serve');
    expect(resolveHubConfig(flags.slice(1), {})).toMatchObject({ notifications: '/etc/kalypso/notifications.yaml', publicUrl: 'https://kalypso.example.com' });
  },
  'notifications-file': async (block) => {
    const file = path.join(await workDirectory('notifications'), 'notifications.yaml');
    await writeFile(file, block.content);
    const channels = await loadNotifications(file, { GITHUB_TOKEN: 'ghp_x', GITLAB_TOKEN: 'glpat_x', KALYPSO_WEBHOOK_SECRET: 'secret' });
    expect(channels.map((channel) => [channel.name, channel.kind === 'webhook' ? 'webhook' : channel.type])).toEqual([
      ['apps', 'github'],
      ['platform', 'gitlab'],
      ['decisions', 'webhook'],
    ]);
    const [apps, platform] = channels.filter((channel) => channel.kind === 'commit-status');
    expect(apps!.repos[0]!.matches('https://github.com/contoso/platform-gitops.git')).toBe(true);
    expect(platform!.repos[0]!.matches('https://gitlab.contoso.com/platform/team/gitops')).toBe(true);
    expect(platform!.apiUrl).toBe('https://gitlab.contoso.com/api/v4');
  },
  'webhook-signature': async (block) => {
    const directory = await workDirectory('signature');
    const body = JSON.stringify({ specversion: '1.0', id: randomCommit(), type: 'io.kalypso.rollout.succeeded', source: 'https://kalypso.example.com', data: { total: 1 } });
    await writeFile(path.join(directory, 'body.json'), body);
    const secret = `s3cr3t-${randomCommit()}`;
    const signed = await env.shell(block.content, { cwd: directory, env: { KALYPSO_WEBHOOK_SECRET: secret, SIGNATURE: signature(body, secret) } });
    expect(signed.stdout.trim()).toBe('signed by the hub');
    const forged = await env.shell(block.content, { cwd: directory, env: { KALYPSO_WEBHOOK_SECRET: secret, SIGNATURE: signature(`${body} `, secret) } });
    expect(forged.stdout.trim()).toBe('');
  },

  'notifications-chart-values': async (block) => {
    const { objects } = await renderChart(YAML.parse(block.content));
    const hub = objects.find((object) => object.kind === 'Deployment' && object.metadata.name === 'kalypso-hub')!['spec'].template.spec;
    const variable = (name: string): string => hub.containers[0].env.find((candidate: any) => candidate.name === name).value;
    const file = variable('KALYPSO_NOTIFICATIONS');
    const mount = hub.containers[0].volumeMounts.find((candidate: any) => file.startsWith(`${candidate.mountPath}/`));
    const sources = hub.volumes.find((volume: any) => volume.name === mount.name).projected.sources;
    // The pod's files under a scratch root: the rendered file, and each Secret key it mounts beside it.
    const root = await workDirectory('notifications-chart');
    const local = (mounted: string): string => path.join(root, mounted);
    const rendered = objects.find((object) => object.kind === 'Secret' && object.metadata.name === sources[0].secret.name)!;
    await mkdir(path.dirname(local(file)), { recursive: true });
    await writeFile(local(file), rendered['stringData'][path.basename(file)].replaceAll(`${mount.mountPath}/`, `${local(mount.mountPath)}/`));
    for (const source of sources.slice(1)) {
      for (const item of source.secret.items) {
        await mkdir(path.dirname(local(`${mount.mountPath}/${item.path}`)), { recursive: true });
        await writeFile(local(`${mount.mountPath}/${item.path}`), `${source.secret.name}-${item.key}\n`);
      }
    }
    const channels = await loadChannels(resolveHubConfig([], { KALYPSO_NOTIFICATIONS: local(file), KALYPSO_PUBLIC_URL: variable('KALYPSO_PUBLIC_URL') }), {});
    expect(channels.map((channel) => channel.name)).toEqual(['apps', 'decisions']);
    expect(await (channels[0] as any).token.read()).toBe('github-status-token');
    expect(await (channels[1] as any).secret.read()).toBe('kalypso-webhook-secret');
  },

  // docs/argocd.md
  'argocd-chart-values': async (block) => {
    const { objects } = await renderChart(YAML.parse(block.content));
    const role = objects.find((object) => object.kind === 'ClusterRole')!;
    expect(role['rules']).toContainEqual({ apiGroups: ['argoproj.io'], resources: ['applications'], verbs: ['list', 'watch'] });
    const hub = objects.find((object) => object.kind === 'Deployment' && object.metadata.name === 'kalypso-hub')!['spec'].template.spec.containers[0];
    const environment = Object.fromEntries(hub.env.filter((variable: any) => /^KALYPSO_(KUBE|ARGOCD)/.test(variable.name)).map((variable: any) => [variable.name, variable.value]));
    // As the flags of the block above.
    expect(resolveHubConfig([], environment)).toMatchObject({ kube: 'on', argocd: 'on', kubeClusterName: 'aks-mgmt-weu' });
  },
  'argocd-hub-flags': async (block) => {
    const [command, flags] = block.content.trim().split(' -- ') as [string, string];
    expect(command).toBe('npm start');
    expect(Object.keys(JSON.parse(await readFile(path.join(REPO, 'package.json'), 'utf8')).scripts)).toContain('start');
    expect(resolveHubConfig(flags.split(/\s+/), {})).toMatchObject({ kube: 'on', argocd: 'on', kubeClusterName: 'aks-mgmt-weu' });
  },
  'argocd-application': async (block) => {
    // Applied as Argo CD's controller writes it, to the stand-in API server the docs' hub watches.
    env.kube.api.apply(ARGOCD_APPLICATIONS, YAML.parse(block.content), 'argocd-application-controller');
    const reconciler = await waitFor(
      async () => (await hostState('aks-prod-weu-01'))?.reconcilers.find((candidate: any) => candidate.reconciler === 'argocd/checkout'),
      'the application in the hub',
    );
    expect(reconciler).toMatchObject({
      type: 'argocd',
      manifestsEndpoint: `${GITOPS_REPO}/prod/checkout`,
      commit: '6ee9b747ec30a41fe214193938d7c3c4c2e8201e',
      status: 'success',
      statusMessage: 'successfully synced (all tasks run)',
      argocd: { sync: 'Synced', health: 'Healthy', operation: 'Succeeded' },
    });
  },

  // docs/moving-from-the-original-hub.md
  'original-hub-crds': (block, context) => CASES['kube-install-crds']!(block, context),
  'original-hub-reconciler': async (block) => {
    // As kubectl applies a resource without a namespace: into `default`.
    const resource = YAML.parse(block.content);
    expect(await hubResourceErrors(resource)).toEqual([]);
    env.kube.api.apply(RECONCILERS, { ...resource, metadata: { ...resource.metadata, namespace: 'default' } });
    const reconciler = await waitFor(
      async () => (await hostState('kalypso-rg-flux'))?.reconcilers.find((candidate: any) => candidate.reconciler === 'kalypso-rg-flux-hello-world'),
      'the Reconciler in the hub',
    );
    expect(reconciler).toMatchObject({ type: 'flux', status: 'success', commit: '5ce065315cc1702b6cb4eb9d3f804413706570d8' });
  },

  // docs/azure-resource-graph.md
  'arg-config-full': async (block) => {
    const file = path.join(await workDirectory('arg'), 'sources.yaml');
    await writeFile(file, block.content);
    expect(await loadArgConfig(file)).toEqual([
      {
        name: 'contoso-dev',
        subscriptions: ['7be1b9e7-57ca-47ff-b5ab-82e7ccb8c611'],
        tenant: '16b3c013-d300-468d-ac64-7eda0820b6d3',
        credential: { kind: 'managed-identity', clientId: '02552706-98f9-4301-a473-017752fc430b' },
        intervalMs: 5 * 60_000,
        defaultWorkspace: 'kaizen',
        defaultApplication: 'greeting-app',
      },
    ]);
  },
  'arg-resource': async (block) => {
    // Not applied to the stand-in: its poller would sign in to Azure. The API server's schema, then
    // the same reading of the spec the watcher gives every AzureResourceGraph.
    const resource = YAML.parse(block.content);
    expect(await hubResourceErrors(resource)).toEqual([]);
    expect(parseResourceGraphSpec(`${resource.metadata.namespace}/${resource.metadata.name}`, resource.spec)).toMatchObject({
      ok: true,
      value: { subscriptions: ['7be1b9e7-57ca-47ff-b5ab-82e7ccb8c611'], credential: { kind: 'client-secret', secretName: 'contoso-dev-reader' }, intervalMs: 5 * 60_000 },
    });
  },

  // docs/delivery-analytics.md
  'delivery-sql': async (block) => {
    await apiGet(env.hub, '/metrics/delivery'); // folds the rollout queue in (read-your-writes), as the refresher would within 2 s
    const results = (await env.asReader((client) => client.query(block.content))) as unknown as pg.QueryResult[];
    expect(results).toHaveLength(2);
    expect(results[0]!.rows).toHaveLength(1);
    expect(Object.keys(results[0]!.rows[0])).toEqual(['deployments_per_day', 'lead_time_last_host_median', 'convergence_90_median', 'change_failure_rate', 'restore_median']);
    expect(results[1]!.rows).toContainEqual(expect.objectContaining({ environment: 'prod', workload: 'my-service', version: '1.4.1', status: 'succeeded' }));
  },

  // docs/grafana-and-sql.md
  'grafana-login-role': async (block) => {
    await env.rolledBack(async (client) => {
      await client.query(block.content);
      expect((await client.query(`SELECT pg_has_role('grafana', 'kalypso_reader', 'member') AS member`)).rows[0].member).toBe(true);
      await client.query('SET ROLE grafana');
      await client.query('SELECT count(*) FROM kalypso_environment_state');
      await client.query('SAVEPOINT before_table');
      await expect(client.query('SELECT count(*) FROM deployment_state')).rejects.toThrow(/permission denied/);
      await client.query('ROLLBACK TO SAVEPOINT before_table');
    });
  },
  'grafana-embedded': async (block, context) => {
    needs(context, 'psql');
    // The snippet gives the server's kalypso_reader a login: no other file reads roles meanwhile.
    await withServerRoles('change', () => grafanaEmbedded(block));
  },

  // docs/alerts.md
  'alerts-secret': async (block) => {
    const { applied: [secret, ...others] } = await withStandIns(block, await workDirectory('alerting-secret'));
    expect(others).toEqual([]);
    // The Secret and key the values below name.
    const named = YAML.parse(snippet('alerts-values').content).grafana.alerting.webhookUrlFrom.secretKeyRef;
    expect(secret).toMatchObject({ kind: 'Secret', metadata: { name: named.name, namespace: 'kalypso-system' } });
    expect(Object.keys(secret!['data'])).toEqual([named.key]);
  },
  'alerts-values': async (block) => {
    const { objects } = await renderChart(YAML.parse(block.content));
    const pod = objects.find((object) => object.kind === 'Deployment' && object.metadata.name === 'kalypso-grafana')!['spec'].template.spec;
    const [init] = pod.initContainers;
    // Both Grafana containers read the variables: the init container picks the files, Grafana expands them.
    expect(init.env).toEqual(pod.containers[0].env.filter((variable: any) => init.env.some((other: any) => other.name === variable.name)));
    // The variables as the pod gets them, the webhook URL from the Secret of the block above.
    const { applied: [secret] } = await withStandIns(snippet('alerts-secret'), await workDirectory('alerting-secret'));
    const variables: Record<string, string> = {};
    for (const variable of init.env) {
      const ref = variable.valueFrom?.secretKeyRef;
      variables[variable.name] = ref === undefined ? variable.value : Buffer.from(secret!['data'][ref.key], 'base64').toString();
      if (ref !== undefined) expect(ref.name).toBe(secret!.metadata.name);
    }
    expect(Object.keys(variables).sort()).toEqual(['KALYPSO_ALERT_WEBHOOK_URL', 'KALYPSO_PUBLIC_URL']);
    const hub = objects.find((object) => object.kind === 'Deployment' && object.metadata.name === 'kalypso-hub')!['spec'].template.spec.containers[0];
    expect(hub.env).toContainEqual({ name: 'KALYPSO_PUBLIC_URL', value: variables['KALYPSO_PUBLIC_URL'] });
    // What the init container then provisions with them.
    const target = await workDirectory('alerting');
    const selected = await env.shell(`deploy/grafana/select-alerting.sh deploy/grafana/provisioning ${target}`, { env: variables });
    expect(selected.code, selected.stderr).toBe(0);
    expect(YAML.parse(await readFile(path.join(target, 'kalypso-contact-point.yaml'), 'utf8')).contactPoints[0].receivers[0].type).toBe('slack');
  },
  'alerts-prometheus-rule': async (block) => {
    const { objects } = await renderChart(YAML.parse(block.content));
    const rule = objects.find((object) => object.kind === 'PrometheusRule')!;
    const file = YAML.parse(await readFile(path.join(REPO, 'deploy/prometheus/kalypso-hub-rules.yaml'), 'utf8'));
    expect(rule['spec'].groups.map((group: any) => group.rules.map((each: any) => each.alert))).toEqual(file.spec.groups.map((group: any) => group.rules.map((each: any) => each.alert)));
    expect(rule.metadata.labels?.['release']).toBe('prometheus');
    const monitor = objects.find((object) => object.kind === 'ServiceMonitor')!;
    expect(monitor.metadata.labels?.['release']).toBe('prometheus');
  },
  'alerts-select': async (block) => {
    const grafana = await workDirectory('grafana-provisioning');
    await mkdir(path.join(grafana, 'alerting'));
    const result = await env.shell(block.content, { env: { GRAFANA_PROVISIONING: grafana } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).not.toContain('XXXXXXXX');
    expect((await readdir(path.join(grafana, 'alerting'))).sort()).toEqual(['kalypso-alerts.yaml', 'kalypso-contact-point.yaml']);
    const rules = YAML.parse(await readFile(path.join(grafana, 'alerting/kalypso-alerts.yaml'), 'utf8'));
    expect(rules.groups[0].rules[0].notification_settings.receiver).toBe(CONTACT_POINT);
  },
  'security-service-tokens': (block) => {
    const tokens = parseServiceTokens('service-tokens.yaml', block.content);
    expect(tokens.map((token) => [token.name, [...token.roles], token.workspaces])).toEqual([
      ['gate-app-a', ['pipeline'], ['payments']],
      ['edge-collectors', ['ingest'], 'all'],
      ['cd-payments', ['ingest'], ['payments']],
      ['grafana-team-a', ['viewer'], ['billing', 'payments']],
    ]);
  },
  'security-auth-config': async (block) => {
    const file = path.join(await mkdtemp(path.join(os.tmpdir(), 'kalypso-auth-')), 'auth.yaml');
    await writeFile(file, block.content);
    const config = await loadAuthConfig(file);
    expect(config.issuers.map((issuer) => issuer.issuer)).toEqual(['https://token.actions.githubusercontent.com', 'https://login.microsoftonline.com/<tenant>/v2.0']);
    expect(config.clockTolerance).toBe(60_000);
  },
  'alerts-thresholds': async (block) => {
    const direct = await env.asReader(async (client) => (await client.query(block.content)).rows);
    expect(direct).toHaveLength(1);
    expect(Object.keys(direct[0])).toEqual(['stale_after', 'rollout_window', 'off_commit_after']);
    // The test hub runs with the defaults.
    expect(direct[0].rollout_window).toMatchObject({ minutes: 30 });
    expect(direct[0].off_commit_after).toMatchObject({ hours: 1 });
  },
  ...Object.fromEntries(
    ALERT_RULES.map((rule): [string, Case] => [
      `alert-sql-${rule.runbook}`,
      async (block) => {
        // The query the provisioned rule runs, word for word, and it runs as Grafana's role.
        expect(block.content.trim()).toBe(rule.sql);
        const result = await env.asReader((client) => client.query(block.content));
        expect(result.fields.map((field) => field.name)).toEqual([...rule.labels, rule.value]);
      },
    ]),
  ),

  // docs/configuration.md
  'config-precedence': async (block) => {
    // `npm start` as written, against a test database instead of an embedded server (DATABASE_URL),
    // its ports free ones (8081 and 9090 too), the Kubernetes watcher off.
    const testDb = await createTestDatabase();
    const [flagPort, envPort, grpc, http] = [await freePort(), await freePort(), await freePort(), await freePort()];
    const command = block.content.replace(/#.*$/m, '').replaceAll('8081', String(flagPort)).replaceAll('9090', String(envPort)).trim();
    const child = spawn('bash', ['-c', command], {
      cwd: REPO,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        PATH: [path.dirname(process.execPath), process.env.PATH].join(path.delimiter),
        DATABASE_URL: testDb.url,
        KALYPSO_KUBE: 'off',
        KALYPSO_LISTEN_HOST: '127.0.0.1',
        KALYPSO_OTLP_GRPC_PORT: String(grpc),
        KALYPSO_OTLP_HTTP_PORT: String(http),
      },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      await waitFor(async () => (await readyzStatus(flagPort)) === 200, `npm start on the flag's port\n${output}`, 30_000);
      expect(await readyzStatus(envPort), 'the variable lost to the flag').toBe(0);
      const [settings] = await testDb.query<{ minutes: number }>('SELECT extract(epoch FROM stale_after) / 60 AS minutes FROM kalypso_settings');
      expect(Number(settings!.minutes), 'the variable without a flag wins over the default').toBe(5);
      process.kill(-child.pid!, 'SIGTERM'); // the process group, as a terminal's Ctrl-C reaches bash, npm and the hub
      await exited;
      await waitFor(async () => (await readyzStatus(flagPort)) === 0, `the hub stopping\n${output}`);
    } finally {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
      await testDb.drop();
    }
  },

  // docs/operating.md
  'start-banner': (block) => {
    const defaults = resolveHubConfig([], {});
    const psql = `psql postgres://postgres:${defaults.embeddedPgPassword}@127.0.0.1:${defaults.embeddedPgPort}/kalypso`;
    const banner = startBanner({
      listenHost: defaults.listenHost,
      tls: false,
      ports: { http: defaults.httpPort, otlpGrpc: defaults.otlpGrpcPort, otlpHttp: defaults.otlpHttpPort },
      databaseUrl: psql.slice('psql '.length),
      embedded: { psql, dataDir: '/home/you/kalypso-observability-hub/.kalypso-hub' },
    });
    expect(block.content.trimEnd()).toBe(banner.replace(/^\n/, '').trimEnd());
  },

  // docs/architecture.md
  'architecture-layout': async (block) => {
    const paths = treePaths(block.content);
    expect(paths.length).toBeGreaterThan(20);
    const missing: string[] = [];
    for (const entry of paths) {
      const kind = await readFile(path.join(REPO, entry)).then(
        () => 'file',
        (error: NodeJS.ErrnoException) => (error.code === 'EISDIR' ? 'folder' : 'missing'),
      );
      if (kind !== (entry.endsWith('/') ? 'folder' : 'file')) missing.push(entry);
    }
    expect(missing, 'the layout names what is not there').toEqual([]);
  },

  // README and docs/deploying.md: the Helm chart
  'readme-helm-install': async (block) => {
    const { applied: objects } = await withStandIns(block, await inCheckout('readme-helm'));
    checkDefaultInstall(objects);
  },
  'deploy-install': async (block) => {
    const { applied: objects } = await withStandIns(block, await inCheckout('deploy-install'));
    checkDefaultInstall(objects);
    const forwarded = /port-forward svc\/(\S+) (\d+)/.exec(block.content)!;
    const service = objects.find((object) => object.kind === 'Service' && object.metadata.name === forwarded[1]);
    expect(service?.['spec'].ports.map((port: any) => String(port.port))).toContain(forwarded[2]);
  },
  'deploy-production-values': async (block) => {
    const { objects } = await renderChart(YAML.parse(block.content));
    for (const object of objects) expect(await kubeSchemaErrors(object)).toEqual([]);
    // Every Secret the pods read and the chart does not render is one the block's comments name.
    const rendered = new Set(objects.filter((object) => object.kind === 'Secret').map((object) => object.metadata.name));
    const yours = [...secretsReferenced(objects).keys()].filter((name) => !rendered.has(name));
    expect(yours.sort()).toEqual(['kalypso-database', 'kalypso-grafana-admin', 'kalypso-grafana-database', 'kalypso-hub-tls', 'kalypso-hub-tokens']);
    expect(objects.filter((object) => object.kind === 'StatefulSet')).toEqual([]);
    for (const kind of ['Ingress', 'HorizontalPodAutoscaler', 'ServiceMonitor', 'PrometheusRule']) expect(objects.map((object) => object.kind), kind).toContain(kind);
  },
  'deploy-upgrade': async (block) => {
    const directory = await inCheckout('deploy-upgrade');
    await writeFile(path.join(directory, 'values-production.yaml'), snippet('deploy-production-values').content);
    const { applied: objects } = await withStandIns(block, directory);
    expect(objects.filter((object) => object.kind === 'CustomResourceDefinition').map((crd) => crd.metadata.name).sort()).toEqual([
      'azureresourcegraphs.hub.kalypso.io',
      'deploymentdescriptors.hub.kalypso.io',
      'reconcilers.hub.kalypso.io',
    ]);
    expect(objects.find((object) => object.kind === 'Deployment' && object.metadata.name === 'kalypso-hub')).toBeDefined();
    expect(objects.filter((object) => object.kind === 'StatefulSet'), 'the production values: no bundled database').toEqual([]);
  },
  'deploy-uninstall': async (block) => {
    const { deleted } = await withStandIns(block, await workDirectory('deploy-uninstall'));
    // Exactly what the chart leaves behind: the claim of its StatefulSet and the Secrets it keeps.
    const { objects } = await renderChart();
    const postgres = objects.find((object) => object.kind === 'StatefulSet')!;
    const claim = `${postgres['spec'].volumeClaimTemplates[0].metadata.name}-${postgres.metadata.name}-0`;
    const kept = objects.filter((object) => object.metadata.annotations?.['helm.sh/resource-policy'] === 'keep');
    expect(kept.every((object) => object.kind === 'Secret')).toBe(true);
    expect(deleted[0]).toBe(`-n kalypso-system delete pvc ${claim}`);
    expect(deleted[1]!.replace('-n kalypso-system delete secret ', '').split(' ').sort()).toEqual(kept.map((secret) => secret.metadata.name).sort());
    expect(deleted).toHaveLength(2);
  },
  'deploy-template': async (block) => {
    const directory = await inCheckout('deploy-template');
    await writeFile(path.join(directory, 'values-production.yaml'), snippet('deploy-production-values').content);
    await withStandIns(block, directory);
    const objects = await applied(path.join(directory, 'kalypso.yaml'));
    expect(objects.filter((object) => object.kind === 'CustomResourceDefinition')).toHaveLength(3);
    expect(objects.find((object) => object.kind === 'Deployment' && object.metadata.name === 'kalypso-hub')?.metadata.namespace).toBe('kalypso-system');
  },

  // docs/install-aks.md
  'aks-secrets': async (block) => {
    const output = path.join(await workDirectory('secrets'), 'applied.yaml');
    const result = await env.shell(`${CLUSTER_STAND_INS}\n${block.content}`, {
      env: { KUBECTL_APPLIED: output, PG: 'kalypso-pg-1', HUB_DB_PASSWORD: 'hub-secret', GRAFANA_DB_PASSWORD: 'grafana-secret', GRAFANA_ADMIN_PASSWORD: 'admin-secret' },
    });
    expect(result.code, result.stderr).toBe(0);
    const created = new Map((await applied(output)).map((secret) => [secret.metadata.name as string, Object.keys(secret.data ?? {}).sort()]));
    expect(created).toEqual(new Map([...secretsCreated(block.content)].map(([name, keys]) => [name, keys.sort()])));
    // Exactly the Secrets the pods of the chart with aks-values.yaml read and it does not render, with their keys
    // (kalypso-hub-tls comes from the Certificate below).
    const objects = await renderedAks();
    const rendered = new Set(objects.filter((object) => object.kind === 'Secret').map((object) => object.metadata.name));
    const needed = [...secretsReferenced(objects)].filter(([name]) => !rendered.has(name) && name !== 'kalypso-hub-tls');
    expect([...created.keys()].sort()).toEqual(needed.map(([name]) => name).sort());
    for (const [name, keys] of needed) expect(created.get(name), name).toEqual(expect.arrayContaining([...keys]));
  },
  'aks-certificate': async (block) => {
    const certificate = YAML.parse(block.content);
    expect(certificate).toMatchObject({ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { namespace: 'kalypso-system' } });
    const objects = await renderedAks();
    expect([...secretsReferenced(objects).keys()], 'the hub mounts the Secret cert-manager writes').toContain(certificate.spec.secretName);
    const otlp = objects.find((object) => object.kind === 'Service' && object.metadata.name === 'kalypso-hub-otlp')!;
    expect(certificate.spec.dnsNames).toContain(`${otlp.metadata.name}.${otlp.metadata.namespace}.svc`);
  },
  'aks-values': async (block) => {
    // The identity's client id is replaced by --set in the install command below; the rest stands.
    const values = YAML.parse(block.content);
    const { objects } = await renderChart(values);
    for (const object of objects) expect(await kubeSchemaErrors(object)).toEqual([]);
    const find = (kind: string, name: string): KubeObject | undefined => objects.find((object) => object.kind === kind && object.metadata.name === name);
    expect(objects.filter((object) => object.kind === 'StatefulSet'), 'no database in the cluster').toEqual([]);
    const otlp = find('Service', 'kalypso-hub-otlp')!;
    expect(otlp['spec'].type).toBe('LoadBalancer');
    expect(otlp.metadata.annotations?.['service.beta.kubernetes.io/azure-load-balancer-internal']).toBe('true');
    expect(find('HorizontalPodAutoscaler', 'kalypso-hub')).toBeDefined();
    // The federated credential of step 4 trusts this ServiceAccount.
    const guide = await readFile(path.join(REPO, block.file), 'utf8');
    const subject = /--subject (system:serviceaccount:\S+)/.exec(guide)![1];
    const account = find('ServiceAccount', 'kalypso-hub')!;
    expect(subject).toBe(`system:serviceaccount:${account.metadata.namespace}:${account.metadata.name}`);
  },
  'aks-install': async (block) => {
    const directory = await inCheckout('aks-install');
    await writeFile(path.join(directory, 'aks-values.yaml'), snippet('aks-values').content);
    const clientId = 'a1b2c3d4-0000-4000-8000-00000000c0de';
    const { applied: objects } = await withStandIns(block, directory, { CLIENT_ID: clientId, ACR: 'kalypsoacr4242' });
    const serviceAccount = objects.find((object) => object.kind === 'ServiceAccount' && object.metadata.name === 'kalypso-hub')!;
    expect(serviceAccount.metadata.annotations?.['azure.workload.identity/client-id']).toBe(clientId);
    const hub = objects.find((object) => object.kind === 'Deployment' && object.metadata.name === 'kalypso-hub')!;
    expect(hub['spec'].template.spec.containers[0].image).toBe('kalypsoacr4242.azurecr.io/kalypso-hub:0.1.0');
    expect(hub['spec'].template.metadata.labels['azure.workload.identity/use']).toBe('true');
    expect(hub.metadata.namespace).toBe('kalypso-system');
  },
  'aks-resource-graph': async (block) => {
    const resource = YAML.parse(block.content);
    expect(await hubResourceErrors(resource)).toEqual([]);
    expect(parseResourceGraphSpec(`${resource.metadata.namespace}/${resource.metadata.name}`, resource.spec)).toMatchObject({
      ok: true,
      value: { credential: { kind: 'managed-identity', clientId: undefined }, intervalMs: 5 * 60_000 },
    });
  },
  'aks-check': async (block, context) => {
    needs(context, 'curl');
    // The test hub plays the port-forwarded kalypso-hub-api; the answers are what the comments say.
    const result = await env.shell(`${CLUSTER_STAND_INS}\n${env.substitute(block.content)}\nwait`);
    expect(result.code, result.stderr).toBe(0);
    // curl prints no newline of its own: the second answer follows the first on the same line.
    expect(result.stdout.startsWith(/# (\{.*\})/.exec(block.content)![1]!)).toBe(true);
    expect(JSON.parse(result.stdout.slice(result.stdout.indexOf('}') + 1)).items.length).toBeGreaterThan(0);
    const services = (await renderedAks()).filter((object) => object.kind === 'Service');
    for (const [name, port] of [['kalypso-hub-api', 8080], ['kalypso-grafana', 3000]] as const) {
      expect(services.find((service) => service.metadata.name === name)?.spec.ports.map((entry: any) => entry.port), name).toContain(port);
    }
  },
};

describe('code blocks of the README and the guides', () => {
  it('are found', () => {
    expect(files.map((file) => file.path)).toContain('README.md');
    expect(blocks.length).toBeGreaterThan(30);
  });

  it('each is exercised by a case here or says why it is not run', () => {
    const unmarked = blocks.filter((block) => block.marker.kind === 'none').map((block) => `${where(block)}: add <!-- snippet: <id> --> or <!-- not run: <reason> --> on the line before`);
    expect(unmarked).toEqual([]);
  });

  it('each snippet id has a case, once', () => {
    const seen = new Map<string, string>();
    const problems: string[] = [];
    for (const block of blocks) {
      if (block.marker.kind !== 'snippet') continue;
      const { id } = block.marker;
      if (seen.has(id)) problems.push(`${where(block)}: snippet ${id} is already used at ${seen.get(id)}`);
      seen.set(id, where(block));
      if (!(id in CASES)) problems.push(`${where(block)}: snippet ${id} has no case in test/docs/snippets.test.ts`);
    }
    expect(problems).toEqual([]);
  });

  it('each case has its snippet in a doc', () => {
    const ids = new Set(blocks.flatMap((block) => (block.marker.kind === 'snippet' ? [block.marker.id] : [])));
    expect(Object.keys(CASES).filter((id) => !ids.has(id)).map((id) => `test/docs/snippets.test.ts: case ${id} has no <!-- snippet: ${id} --> in README.md or docs/*.md`)).toEqual([]);
  });
});

describe('snippets, run against a hub', () => {
  beforeAll(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'kalypso-docs-'));
    env = await startSnippetEnvironment();
  }, 120_000);

  afterAll(async () => {
    await env?.stop();
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
  });

  const exercised = blocks.flatMap((block) => (block.marker.kind === 'snippet' && block.marker.id in CASES ? [{ id: block.marker.id, at: where(block), block }] : []));
  it.for(exercised)('$id ($at)', { timeout: 90_000 }, ({ id, block }, context) => CASES[id]!(block, context));
});
