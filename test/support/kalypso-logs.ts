// Kalypso records as OpenTelemetry log specs (what an edge agent or a CD pipeline emits).
import type { LogSpec } from './otlp-client.ts';

export function stateLog(options: {
  host: string;
  reconciler?: string;
  endpoint?: string;
  commit: string;
  status?: string;
  message?: string;
  at: Date;
}): LogSpec {
  return {
    resource: { 'k8s.cluster.name': options.host },
    eventName: 'kalypso.deployment.state',
    attributes: {
      'kalypso.reconciler.name': options.reconciler ?? 'flux-system/hello-world',
      'kalypso.reconciler.type': 'flux',
      'kalypso.manifests.endpoint': options.endpoint ?? 'https://github.com/contoso/hello-world-gitops/dev/functional-test',
      'vcs.ref.head.revision': options.commit,
      'kalypso.deployment.status': options.status ?? 'success',
    },
    body: options.message ?? 'Applied revision',
    time: options.at,
  };
}

export function descriptorLog(options: {
  workspace?: string;
  environment?: string;
  target?: string;
  /** The manifests repository; the endpoint is repo/endpointBranch/target unless `path` says otherwise. */
  repo?: string;
  endpointBranch?: string;
  path?: string;
  version: string;
  commit: string;
  at: Date;
}): LogSpec {
  return {
    resource: { 'service.name': 'cd-pipeline' },
    eventName: 'kalypso.deployment.descriptor',
    attributes: { 'vcs.ref.head.revision': options.commit },
    body: {
      workload: {
        name: 'hello-world',
        source: { repo: 'https://github.com/kaizentm/hello-world', branch: 'main', path: '.' },
        application: { name: 'greeting-service', workspace: { name: options.workspace ?? 'kaizentm' } },
      },
      deploymentTarget: {
        name: options.target ?? 'functional-test',
        environment: options.environment ?? 'dev',
        manifests: {
          repo: options.repo ?? 'https://github.com/contoso/hello-world-gitops.git',
          branch: options.endpointBranch ?? 'dev',
          path: options.path ?? `./${options.target ?? 'functional-test'}`,
        },
      },
      workloadVersion: { version: options.version, build: `build-${options.version}`, commit: 'ca9ee9d0ff9ec52b998fdcf64e128c84ddd0e661', buildTime: '2026-11-19T23:25:05Z' },
    },
    time: options.at,
  };
}
