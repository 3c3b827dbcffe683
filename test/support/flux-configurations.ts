// Flux configuration rows as Azure Resource Graph returns them (kubernetesconfigurationresources,
// type microsoft.kubernetesconfiguration/fluxconfigurations), shaped after the ARM specification.
import { readFileSync } from 'node:fs';

export const SUBSCRIPTION = '00000000-0000-0000-0000-000000000001';
export const TENANT = '11111111-1111-1111-1111-111111111111';

/** The realistic non-compliant row of the shared fixtures (a failing application Kustomization). */
export function nonCompliantFixture(): any {
  return JSON.parse(readFileSync(new URL('../fixtures/fluxconfiguration-row.json', import.meta.url), 'utf8'));
}

export interface KustomizationStatus {
  readonly name: string;
  readonly kind?: string;
  readonly compliance: 'Compliant' | 'Non-Compliant' | 'Pending' | 'Unknown';
  readonly message: string;
}

export function fluxConfigurationRow(options: {
  cluster: string;
  name?: string;
  provider?: 'Microsoft.Kubernetes/connectedClusters' | 'Microsoft.ContainerService/managedClusters';
  repo?: string;
  branch?: string;
  commit: string;
  compliance: 'Compliant' | 'Non-Compliant' | 'Pending' | 'Suspended' | 'Unknown';
  kustomizations?: Record<string, string>;
  statuses?: readonly KustomizationStatus[];
  sourceKind?: string;
  statusUpdatedAt?: string;
}): any {
  const name = options.name ?? 'gitops';
  const provider = options.provider ?? 'Microsoft.Kubernetes/connectedClusters';
  const branch = options.branch ?? 'dev';
  const kustomizations = options.kustomizations ?? { apps: `./clusters/${options.cluster}` };
  const revision = `${branch}@sha1:${options.commit}`;
  const at = options.statusUpdatedAt ?? '2026-11-20T09:00:00Z';
  return {
    id: `/subscriptions/${SUBSCRIPTION}/resourceGroups/rg-fleet/providers/${provider}/${options.cluster}/providers/Microsoft.KubernetesConfiguration/fluxConfigurations/${name}`,
    name,
    type: 'microsoft.kubernetesconfiguration/fluxconfigurations',
    tenantId: TENANT,
    subscriptionId: SUBSCRIPTION,
    resourceGroup: 'rg-fleet',
    location: '',
    kind: '',
    tags: null,
    properties: {
      scope: 'cluster',
      namespace: 'flux-system',
      sourceKind: options.sourceKind ?? 'GitRepository',
      suspend: options.compliance === 'Suspended',
      gitRepository: {
        url: options.repo ?? 'https://github.com/contoso/fleet-gitops',
        timeoutInSeconds: 600,
        syncIntervalInSeconds: 120,
        repositoryRef: { branch, tag: null, semver: null, commit: null },
        provider: 'Generic',
      },
      kustomizations: Object.fromEntries(
        Object.entries(kustomizations).map(([key, path]) => [
          key,
          { name: key, path, dependsOn: [], timeoutInSeconds: 600, syncIntervalInSeconds: 120, prune: true, force: false, wait: true },
        ]),
      ),
      statuses: [
        {
          name,
          namespace: 'flux-system',
          kind: 'GitRepository',
          complianceState: 'Compliant',
          appliedBy: null,
          statusConditions: [{ lastTransitionTime: at, type: 'Ready', status: 'True', reason: 'Succeeded', message: `stored artifact for revision '${revision}'` }],
        },
        ...(options.statuses ?? Object.keys(kustomizations).map((key): KustomizationStatus => ({ name: `${name}-${key}`, compliance: 'Compliant', message: `Applied revision: ${revision}` }))).map(
          (status) => ({
            name: status.name,
            namespace: 'flux-system',
            kind: status.kind ?? 'Kustomization',
            complianceState: status.compliance,
            appliedBy: status.name.startsWith(`${name}-`) ? null : { name: `${name}-apps`, namespace: 'flux-system' },
            statusConditions: [
              {
                lastTransitionTime: at,
                type: 'Ready',
                status: status.compliance === 'Compliant' ? 'True' : status.compliance === 'Non-Compliant' ? 'False' : 'Unknown',
                reason: status.compliance === 'Compliant' ? 'ReconciliationSucceeded' : 'Progressing',
                message: status.message,
              },
            ],
          }),
        ),
      ],
      repositoryPublicKey: '',
      sourceSyncedCommitId: revision,
      sourceUpdatedAt: at,
      statusUpdatedAt: at,
      complianceState: options.compliance,
      provisioningState: 'Succeeded',
      errorMessage: '',
    },
  };
}

/**
 * An Arc-enabled cluster as Resource Graph's `resources` table holds it (type
 * microsoft.kubernetes/connectedclusters; properties after the ARM specification, 2024-01-01).
 */
export function connectedClusterRow(options: { cluster: string; connectivityStatus: 'Connecting' | 'Connected' | 'Offline' | 'Expired' | 'AgentNotInstalled'; lastConnectivityTime: string }): any {
  return {
    id: `/subscriptions/${SUBSCRIPTION}/resourceGroups/rg-fleet/providers/Microsoft.Kubernetes/connectedClusters/${options.cluster}`,
    name: options.cluster,
    type: 'microsoft.kubernetes/connectedclusters',
    tenantId: TENANT,
    kind: '',
    location: 'westeurope',
    resourceGroup: 'rg-fleet',
    subscriptionId: SUBSCRIPTION,
    managedBy: '',
    sku: null,
    plan: null,
    properties: {
      agentPublicKeyCertificate: 'MIICCgKCAgEAx2cXsExample',
      kubernetesVersion: '1.30.4',
      totalNodeCount: 3,
      totalCoreCount: 12,
      agentVersion: '1.21.10',
      provisioningState: 'Succeeded',
      distribution: 'k3s',
      distributionVersion: null,
      infrastructure: 'generic',
      offering: null,
      managedIdentityCertificateExpirationTime: '2027-02-10T08:00:00Z',
      lastConnectivityTime: options.lastConnectivityTime,
      connectivityStatus: options.connectivityStatus,
      privateLinkState: 'Disabled',
      azureHybridBenefit: 'NotApplicable',
    },
    tags: {},
    identity: { type: 'SystemAssigned', principalId: '22222222-2222-2222-2222-222222222222', tenantId: TENANT },
    zones: null,
    extendedLocation: null,
  };
}

/** An AKS cluster as Resource Graph's `resources` table holds it (type microsoft.containerservice/managedclusters). */
export function managedClusterRow(options: { cluster: string; powerState: 'Running' | 'Stopped' }): any {
  return {
    id: `/subscriptions/${SUBSCRIPTION}/resourceGroups/rg-fleet/providers/Microsoft.ContainerService/managedClusters/${options.cluster}`,
    name: options.cluster,
    type: 'microsoft.containerservice/managedclusters',
    tenantId: TENANT,
    kind: 'Base',
    location: 'westeurope',
    resourceGroup: 'rg-fleet',
    subscriptionId: SUBSCRIPTION,
    managedBy: '',
    sku: { name: 'Base', tier: 'Standard' },
    plan: null,
    properties: {
      provisioningState: 'Succeeded',
      powerState: { code: options.powerState },
      kubernetesVersion: '1.30',
      currentKubernetesVersion: '1.30.6',
      dnsPrefix: `${options.cluster}-dns`,
      fqdn: `${options.cluster}-dns-abc123.hcp.westeurope.azmk8s.io`,
      azurePortalFQDN: `${options.cluster}-dns-abc123.portal.hcp.westeurope.azmk8s.io`,
      agentPoolProfiles: [
        { name: 'system', count: 3, vmSize: 'Standard_D4ds_v5', osType: 'Linux', mode: 'System', powerState: { code: options.powerState }, provisioningState: 'Succeeded' },
      ],
      nodeResourceGroup: `MC_rg-fleet_${options.cluster}_westeurope`,
      enableRBAC: true,
      networkProfile: { networkPlugin: 'azure', networkPolicy: 'cilium', loadBalancerSku: 'standard' },
    },
    tags: {},
    identity: { type: 'SystemAssigned', principalId: '33333333-3333-3333-3333-333333333333', tenantId: TENANT },
    zones: null,
    extendedLocation: null,
  };
}
