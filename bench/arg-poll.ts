// Resource Graph poll throughput: 5,000 flux configurations with 4 Kustomization statuses each,
// served in 1,000-row pages by the HTTPS stand-in, mapped and committed by one poll. Runs in its
// own process (started by run.ts) because Node trusts the stand-in's certificate only through
// NODE_EXTRA_CA_CERTS, read at start-up.
import { createLogger } from '../src/log/logger.ts';
import type { NormalizedRecord } from '../src/model/deployment-records.ts';
import { connectDatabase } from '../src/store/connect.ts';
import { RecordWriter } from '../src/store/record-writer.ts';
import { credentialFor } from '../src/sources/resource-graph/credentials.ts';
import { createResourceGraphMetrics } from '../src/sources/resource-graph/resource-graph-metrics.ts';
import { ResourceGraphPoller } from '../src/sources/resource-graph/resource-graph-poller.ts';
import { createResourceGraphQuery } from '../src/sources/resource-graph/resource-graph-query.ts';
import { Registry } from 'prom-client';
import { AzureStandIn } from '../test/support/azure-standin.ts';
import { connectedClusterRow, fluxConfigurationRow, SUBSCRIPTION, TENANT } from '../test/support/flux-configurations.ts';
import { progress } from './bench-report.ts';
import { writeFile } from 'node:fs/promises';

const [databaseUrl, certFile, keyFile, secretFile, resultFile] = process.argv.slice(2) as [string, string, string, string, string];
const CONFIGURATIONS = 5_000;
const WORKLOADS = 100;
const log = createLogger('warn');

const azure = new AzureStandIn({ certFile, keyFile });
await azure.start();
azure.clients.set('sp-bench', 'bench-secret');
const commit = 'b'.repeat(40);
azure.rows = Array.from({ length: CONFIGURATIONS }, (_, index): unknown =>
  fluxConfigurationRow({
    cluster: `cluster-${String(index).padStart(5, '0')}`,
    commit,
    compliance: index % 50 === 0 ? 'Non-Compliant' : 'Compliant',
    statuses: [
      { name: 'gitops-apps', compliance: 'Compliant', message: `Applied revision: dev@sha1:${commit}` },
      ...[0, 1, 2].map((target) => ({
        name: `dev.ws.app.w${(index + target) % WORKLOADS}.t${target}`,
        compliance: index % 50 === 0 && target === 0 ? ('Non-Compliant' as const) : ('Compliant' as const),
        message: index % 50 === 0 && target === 0 ? 'Health check failed after 5m0s' : `Applied revision: dev@sha1:${commit}`,
      })),
    ],
  }),
);

// Their clusters, connected (one in a hundred offline for an hour): the liveness query's rows.
azure.clusters = Array.from({ length: CONFIGURATIONS }, (_, index): unknown =>
  connectedClusterRow({
    cluster: `cluster-${String(index).padStart(5, '0')}`,
    connectivityStatus: index % 100 === 7 ? 'Offline' : 'Connected',
    lastConnectivityTime: new Date(Date.now() - (index % 100 === 7 ? 3_600_000 : 60_000)).toISOString(),
  }),
);

const database = connectDatabase({ url: databaseUrl, poolSize: 10, connectTimeoutMs: 5_000, applicationName: 'bench-arg' }, log);
const writer = new RecordWriter(database.db, log, { retryAfterSeconds: 1 });
progress('arg: seeding the deployment targets the application Kustomizations belong to');
const descriptors: NormalizedRecord[] = [];
for (let workload = 0; workload < WORKLOADS; workload += 1) {
  for (const target of [0, 1, 2]) {
    descriptors.push({
      kind: 'desired-state',
      workspace: 'ws',
      application: 'app',
      workload: { name: `w${workload}`, source: undefined },
      environment: 'dev',
      deploymentTarget: { name: `t${target}`, manifests: { storageType: 'git', endpoint: `https://github.com/contoso/app-gitops/dev/w${workload}-t${target}` } },
      workloadVersion: { version: '1.0.0', build: '', commit: undefined, buildTime: undefined },
      commitId: commit,
      assignedAt: new Date('2026-11-20T08:00:00Z'),
    });
  }
}
await writer.write(descriptors);

process.env.AZURE_AUTHORITY_HOST = azure.url;
const source = {
  name: 'bench',
  subscriptions: [SUBSCRIPTION],
  defaultWorkspace: undefined,
  defaultApplication: undefined,
  tenant: TENANT,
  credential: { kind: 'client-secret-file', clientId: 'sp-bench', secretFile } as const,
  intervalMs: 600_000,
};
const poller = new ResourceGraphPoller(
  source,
  {
    sink: writer,
    db: database.db,
    connect: async (spec) => await createResourceGraphQuery(await credentialFor(spec, process.env, undefined), azure.url, log),
    metrics: createResourceGraphMetrics(new Registry()),
    log,
    clock: () => new Date(),
  },
  () => undefined,
);
const results = [];
for (const run of ['first poll (all new)', 'second poll (unchanged)']) {
  const before = azure.requests.length;
  const started = performance.now();
  const outcome = await poller.pollOnce();
  const seconds = (performance.now() - started) / 1_000;
  const http = azure.requests.slice(before);
  results.push({
    run,
    configurations: outcome.rows,
    reconcilers: outcome.reconcilers,
    seconds: Math.round(seconds * 100) / 100,
    pages: http.filter((request) => request.kind === 'query').length,
    tokenRequests: http.filter((request) => request.kind === 'token' || request.kind === 'metadata').length,
  });
  progress(`arg: ${run}: ${outcome.reconcilers} reconcilers in ${seconds.toFixed(2)} s`);
}
await writeFile(resultFile, JSON.stringify(results));
await poller.stop();
await database.close();
await azure.stop();
