// The --arg-config file's Resource Graph sources poll on every replica, leader or not: a CRD
// watcher that stops leading (or stops) takes down the pollers of its AzureResourceGraph resources,
// never those of the file.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { AZURE_RESOURCE_GRAPHS } from '../../src/sources/kube/kube-objects.ts';
import { AzureStandIn } from '../support/azure-standin.ts';
import { fluxConfigurationRow, SUBSCRIPTION, TENANT } from '../support/flux-configurations.ts';
import { testTls } from '../support/global-tls.ts';
import { type FakeKubeApiServer, SECRETS } from '../support/kube-apiserver.ts';
import { type KubeHub, startKubeHub } from '../support/kube-hub.ts';
import { waitFor } from '../support/wait-for.ts';

let kube: KubeHub;
let api: FakeKubeApiServer;
let azure: AzureStandIn;
let hub: RunningHub;
let directory: string;
const fileSource = `file-${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  azure = new AzureStandIn(await testTls());
  await azure.start();
  const clientId = `sp-${randomUUID().slice(0, 8)}`;
  azure.clients.set(clientId, 'the-secret');
  azure.rows = [fluxConfigurationRow({ cluster: `cluster-${randomUUID().slice(0, 8)}`, commit: randomUUID().replaceAll('-', '').padEnd(40, 'a'), compliance: 'Compliant' })];
  process.env.AZURE_AUTHORITY_HOST = azure.url;
  directory = await mkdtemp(path.join(os.tmpdir(), 'kalypso-arg-'));
  await writeFile(path.join(directory, 'secret'), 'the-secret\n');
  const config = path.join(directory, 'arg-config.yaml');
  await writeFile(
    config,
    `- name: ${fileSource}\n  subscription: ${SUBSCRIPTION}\n  tenant: ${TENANT}\n  clientId: ${clientId}\n  clientSecretFile: ${path.join(directory, 'secret')}\n  interval: 10m\n`,
  );
  kube = await startKubeHub({ flags: ['--arm-endpoint', azure.url, '--arg-config', config] });
  ({ api, hub } = kube);
  // The credential of the AzureResourceGraph resource the test applies.
  api.apply(SECRETS, {
    metadata: { name: 'arg-credentials', namespace: 'kalypso-system' },
    data: { clientId: Buffer.from(clientId).toString('base64'), clientSecret: Buffer.from('the-secret').toString('base64') },
  });
});

afterAll(async () => {
  await kube.stop();
  await azure.stop();
  await rm(directory, { recursive: true, force: true });
  delete process.env.AZURE_AUTHORITY_HOST;
});

it('keeps polling the file’s sources when the CRD watcher stops leading, and stops the resources’ ones', async () => {
  const resourceSource = `graph-${randomUUID().slice(0, 8)}`;
  api.apply(AZURE_RESOURCE_GRAPHS, {
    metadata: { name: resourceSource, namespace: 'kalypso-system' },
    spec: { subscription: SUBSCRIPTION, tenant: TENANT, secretRef: { name: 'arg-credentials' }, interval: '10m' },
  });
  await waitFor(() => hub.resourceGraph.get(fileSource)?.lastStatus?.ready === true, 'the file’s source polled');
  await waitFor(() => hub.resourceGraph.get(`kalypso-system/${resourceSource}`)?.lastStatus?.ready === true, 'the resource’s source polled');
  await hub.kube!.stop();
  expect(hub.resourceGraph.get(`kalypso-system/${resourceSource}`)).toBeUndefined();
  expect(hub.resourceGraph.get(fileSource)).toBeDefined();
});
