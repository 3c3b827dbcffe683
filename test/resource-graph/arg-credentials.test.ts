// Every credential a source can use, with the real @azure/identity against the HTTPS stand-in:
// a managed identity (App Service style endpoint), AKS workload identity (a federated token file),
// and a client secret (from a file; secretRef is covered with the CRD watcher).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.ts';
import type { ResourceGraphSourceSpec } from '../../src/normalize/kube-resources.ts';
import { credentialFor } from '../../src/sources/resource-graph/credentials.ts';
import { createResourceGraphQuery, FLUX_CONFIGURATIONS_QUERY } from '../../src/sources/resource-graph/resource-graph-query.ts';
import { AzureStandIn } from '../support/azure-standin.ts';
import { testTls } from '../support/global-tls.ts';
import { fluxConfigurationRow, SUBSCRIPTION, TENANT } from '../support/flux-configurations.ts';

let azure: AzureStandIn;
let directory: string;
const log = createLogger('silent');

const source = (credential: ResourceGraphSourceSpec['credential']): ResourceGraphSourceSpec => ({
  name: 'test',
  subscriptions: [SUBSCRIPTION],
  defaultWorkspace: undefined,
  defaultApplication: undefined,
  tenant: TENANT,
  credential,
  intervalMs: 60_000,
});

async function query(credentialSource: ResourceGraphSourceSpec, env: NodeJS.ProcessEnv): Promise<number> {
  const credential = await credentialFor(credentialSource, env, undefined);
  const result = await (await createResourceGraphQuery(credential, azure.url, log)).queryAll([SUBSCRIPTION], FLUX_CONFIGURATIONS_QUERY, new AbortController().signal);
  return result.rows.length;
}

beforeAll(async () => {
  azure = new AzureStandIn(await testTls());
  await azure.start();
  azure.rows = [fluxConfigurationRow({ cluster: 'c1', commit: 'a'.repeat(40), compliance: 'Compliant' })];
  directory = await mkdtemp(path.join(os.tmpdir(), 'kalypso-credentials-'));
});

afterAll(async () => {
  await azure.stop();
  await rm(directory, { recursive: true, force: true });
});

describe('credentials', () => {
  it('uses a client secret from a file, against a custom authority', async () => {
    azure.clients.set('sp-file', 'from-file');
    const file = path.join(directory, 'secret');
    await writeFile(file, 'from-file\n');
    expect(await query(source({ kind: 'client-secret-file', clientId: 'sp-file', secretFile: file }), { AZURE_AUTHORITY_HOST: azure.url })).toBe(1);
    expect(azure.count('metadata')).toBeGreaterThan(0);
    expect(azure.count('token')).toBe(1);
  });

  it('uses AKS workload identity when the pod has a federated token file', async () => {
    const tokenFile = path.join(directory, 'azure-identity-token');
    await writeFile(tokenFile, 'federated-token-from-kubelet');
    azure.assertions.add('federated-token-from-kubelet');
    const before = azure.count('token');
    expect(
      await query(source({ kind: 'managed-identity', clientId: 'workload-client' }), {
        AZURE_AUTHORITY_HOST: azure.url,
        AZURE_FEDERATED_TOKEN_FILE: tokenFile,
      }),
    ).toBe(1);
    expect(azure.count('token')).toBe(before + 1);
  });

  it('uses a managed identity endpoint', async () => {
    process.env.IDENTITY_ENDPOINT = `${azure.url}/msi/token`;
    process.env.IDENTITY_HEADER = azure.identityHeader;
    try {
      expect(await query(source({ kind: 'managed-identity', clientId: 'mi-client' }), process.env)).toBe(1);
      expect(azure.count('managed-identity')).toBe(1);
    } finally {
      delete process.env.IDENTITY_ENDPOINT;
      delete process.env.IDENTITY_HEADER;
    }
  });

  it('fails clearly with a wrong secret', async () => {
    const file = path.join(directory, 'wrong');
    await writeFile(file, 'not-the-secret');
    await expect(query(source({ kind: 'client-secret-file', clientId: 'sp-file', secretFile: file }), { AZURE_AUTHORITY_HOST: azure.url })).rejects.toThrow(
      /AADSTS7000215/,
    );
  });
});
