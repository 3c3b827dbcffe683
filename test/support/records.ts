// Builders for normalized records, for store-level tests.
import type { DesiredStateRecord, RealStateRecord } from '../../src/model/deployment-records.ts';

export const ENDPOINT = 'https://github.com/contoso/hello-world-gitops/dev/functional-test';

export function stateRecord(options: {
  host?: string;
  hostType?: string;
  reconciler?: string;
  type?: RealStateRecord['reconciler']['type'];
  endpoint?: string;
  commit: string;
  status?: RealStateRecord['status'];
  message?: string;
  at: Date;
}): RealStateRecord {
  return {
    kind: 'real-state',
    host: { name: options.host ?? 'aks-dev-eus', type: options.hostType },
    reconciler: { name: options.reconciler ?? 'hello-world', type: options.type ?? 'flux' },
    manifests: { storageType: 'git', endpoint: options.endpoint ?? ENDPOINT },
    commitId: options.commit,
    status: options.status ?? 'success',
    statusMessage: options.message ?? '',
    observedAt: options.at,
  };
}

export function descriptorRecord(options: {
  workspace?: string;
  application?: string;
  workload?: string;
  environment?: string;
  target?: string;
  endpoint?: string;
  version: string;
  commit: string;
  at: Date;
}): DesiredStateRecord {
  return {
    kind: 'desired-state',
    workspace: options.workspace ?? 'kaizentm',
    application: options.application ?? 'greeting-service',
    workload: { name: options.workload ?? 'hello-world', source: { repo: 'https://github.com/kaizentm/hello-world', branch: 'main', path: '.' } },
    environment: options.environment ?? 'dev',
    deploymentTarget: { name: options.target ?? 'functional-test', manifests: { storageType: 'git', endpoint: options.endpoint ?? ENDPOINT } },
    workloadVersion: { version: options.version, build: `build-${options.version}`, commit: undefined, buildTime: undefined },
    commitId: options.commit,
    assignedAt: options.at,
  };
}

export const minute = (n: number): Date => new Date(Date.UTC(2026, 10, 20, 9, 0) + n * 60_000);
