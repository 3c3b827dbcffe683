// The Azure credential of a poll source: a managed identity (AKS workload identity when the pod
// has a federated token file), or a service principal's client secret from a Kubernetes Secret
// (secretRef) or a file. Sovereign clouds: AZURE_AUTHORITY_HOST names the authority.
import { readFile } from 'node:fs/promises';
import type { TokenCredential } from '@azure/identity';
import type { ResourceGraphSourceSpec } from '../../normalize/kube-resources.ts';
import type { SecretReader } from './resource-graph-pollers.ts';

const PUBLIC_AUTHORITY = 'https://login.microsoftonline.com';

export async function credentialFor(
  source: ResourceGraphSourceSpec,
  env: NodeJS.ProcessEnv,
  readSecret: SecretReader | undefined,
): Promise<TokenCredential> {
  const { ClientSecretCredential, ManagedIdentityCredential, WorkloadIdentityCredential } = await import('@azure/identity');
  const authorityHost = env.AZURE_AUTHORITY_HOST?.replace(/\/+$/, '');
  // Instance discovery asks the public cloud about the authority: skip it for any other authority.
  const authority =
    authorityHost === undefined ? {} : { authorityHost, disableInstanceDiscovery: authorityHost !== PUBLIC_AUTHORITY };
  const credential = source.credential;
  switch (credential.kind) {
    case 'managed-identity': {
      const clientId = credential.clientId ?? env.AZURE_CLIENT_ID;
      if (env.AZURE_FEDERATED_TOKEN_FILE !== undefined && env.AZURE_FEDERATED_TOKEN_FILE !== '') {
        return new WorkloadIdentityCredential({
          tenantId: source.tenant,
          ...(clientId === undefined ? {} : { clientId }),
          tokenFilePath: env.AZURE_FEDERATED_TOKEN_FILE,
          ...authority,
        });
      }
      return clientId === undefined ? new ManagedIdentityCredential() : new ManagedIdentityCredential({ clientId });
    }
    case 'client-secret': {
      const [namespace, name] = splitName(source.name, credential.secretName);
      if (readSecret === undefined) throw new Error(`secretRef ${credential.secretName} needs the Kubernetes API, which this hub does not use`);
      const data = await readSecret(namespace, name);
      const clientId = data['clientId'] ?? data['AZURE_CLIENT_ID'];
      const clientSecret = data['clientSecret'] ?? data['AZURE_CLIENT_SECRET'];
      if (clientId === undefined || clientSecret === undefined) {
        throw new Error(`Secret ${namespace}/${name} needs the keys clientId and clientSecret`);
      }
      return new ClientSecretCredential(source.tenant, clientId, clientSecret, authority);
    }
    case 'client-secret-file': {
      const clientSecret = (await readFile(credential.secretFile, 'utf8')).trim();
      return new ClientSecretCredential(source.tenant, credential.clientId, clientSecret, authority);
    }
  }
}

/** A secretRef lives in its resource's namespace (the source name is `namespace/name`). */
function splitName(sourceName: string, secretName: string): [string, string] {
  const slash = sourceName.indexOf('/');
  return [slash < 0 ? 'default' : sourceName.slice(0, slash), secretName];
}
