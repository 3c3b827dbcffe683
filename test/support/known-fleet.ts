// A small fleet whose every report is known, for checking the API field by field.
//
//   environments (in promotion order): dev, qa, staging, prod
//   workloads: kaizentm/greeting-service/hello-world (target functional-test, in all four),
//              kaizentm/greeting-service/greeter-api (target main, not in staging),
//              contoso/shop/cart (target edge, dev and prod)
import type { Kysely } from 'kysely';
import { createLogger } from '../../src/log/logger.ts';
import type { NormalizedRecord } from '../../src/model/deployment-records.ts';
import type { HubDatabase } from '../../src/store/database-schema.ts';
import { RecordWriter } from '../../src/store/record-writer.ts';

export const ENVIRONMENTS = ['dev', 'qa', 'staging', 'prod'] as const;

export function endpointOf(environment: string, workload: string, target: string): string {
  return `https://github.com/contoso/gitops/${environment}/${workload}-${target}`;
}

interface Workload {
  readonly workspace: string;
  readonly application: string;
  readonly workload: string;
  readonly target: string;
}

export const HELLO: Workload = { workspace: 'kaizentm', application: 'greeting-service', workload: 'hello-world', target: 'functional-test' };
export const GREETER: Workload = { workspace: 'kaizentm', application: 'greeting-service', workload: 'greeter-api', target: 'main' };
export const CART: Workload = { workspace: 'contoso', application: 'shop', workload: 'cart', target: 'edge' };

export class FleetBuilder {
  readonly t0: number;
  readonly #writer: RecordWriter;

  constructor(db: Kysely<HubDatabase>, t0 = Date.now()) {
    this.t0 = t0;
    this.#writer = new RecordWriter(db, createLogger('silent'), { retryAfterSeconds: 1 });
  }

  /** `minutes` before t0. */
  ago(minutes: number): Date {
    return new Date(this.t0 - minutes * 60_000);
  }

  /** `endpoint`: where the target's manifests are (by default its own, endpointOf). */
  descriptor(
    workload: Workload,
    environment: string,
    version: string,
    commit: string,
    minutesAgo: number,
    endpoint = endpointOf(environment, workload.workload, workload.target),
  ): NormalizedRecord {
    return {
      kind: 'desired-state',
      workspace: workload.workspace,
      application: workload.application,
      workload: { name: workload.workload, source: undefined },
      environment,
      deploymentTarget: { name: workload.target, manifests: { storageType: 'git', endpoint } },
      workloadVersion: { version, build: `b-${version}`, commit: undefined, buildTime: undefined },
      commitId: commit,
      assignedAt: this.ago(minutesAgo),
    };
  }

  state(
    host: string,
    workload: Workload,
    environment: string,
    commit: string,
    status: 'success' | 'failure' | 'in_progress',
    minutesAgo: number,
    message = '',
  ): NormalizedRecord {
    return {
      kind: 'real-state',
      host: { name: host, type: host.startsWith('edge') ? 'edge-device' : undefined },
      reconciler: { name: `flux-system/${workload.workload}`, type: 'flux' },
      manifests: { storageType: 'git', endpoint: endpointOf(environment, workload.workload, workload.target) },
      commitId: commit,
      status,
      statusMessage: message,
      observedAt: this.ago(minutesAgo),
    };
  }

  write(records: NormalizedRecord[]): Promise<unknown> {
    return this.#writer.write(records);
  }
}

/** Writes the known fleet; returns the builder (for t0 and further reports). */
export async function writeKnownFleet(db: Kysely<HubDatabase>): Promise<FleetBuilder> {
  const fleet = new FleetBuilder(db);
  const f = fleet;
  // Descriptors environment by environment: environments are ordered by first appearance.
  await f.write([f.descriptor(HELLO, 'dev', '0.0.2', 'c-dev-2', 120), f.descriptor(HELLO, 'dev', '0.0.3', 'c-dev-3', 60)]);
  await f.write([f.descriptor(GREETER, 'dev', '2.0.0', 'g-dev-2', 90), f.descriptor(CART, 'dev', '5.1', 'k-dev-51', 80)]);
  await f.write([f.descriptor(HELLO, 'qa', '0.0.2', 'c-qa-2', 100), f.descriptor(GREETER, 'qa', '2.0.0', 'g-qa-2', 85)]);
  await f.write([f.descriptor(HELLO, 'staging', '0.0.2', 'c-st-2', 95)]);
  await f.write([
    f.descriptor(HELLO, 'prod', '0.0.1', 'c-prod-1', 300),
    f.descriptor(GREETER, 'prod', '1.9.0', 'g-prod-19', 200),
    f.descriptor(CART, 'prod', '5.1', 'k-prod-51', 70),
  ]);

  await f.write([
    f.state('dev-1', HELLO, 'dev', 'c-dev-2', 'success', 110),
    f.state('dev-1', HELLO, 'dev', 'c-dev-3', 'in_progress', 55),
    f.state('dev-1', HELLO, 'dev', 'c-dev-3', 'success', 50),
    f.state('dev-1', HELLO, 'dev', 'c-dev-3', 'success', 1),
    f.state('dev-2', HELLO, 'dev', 'c-dev-2', 'success', 105),
    f.state('dev-2', HELLO, 'dev', 'c-dev-2', 'success', 2),
    f.state('dev-1', GREETER, 'dev', 'g-dev-2', 'success', 3),
    f.state('dev-2', GREETER, 'dev', 'g-dev-2', 'failure', 30, 'health check failed'),
    f.state('dev-2', GREETER, 'dev', 'g-dev-2', 'failure', 2, 'health check failed'),
    f.state('dev-1', CART, 'dev', 'k-dev-51', 'success', 4),
    f.state('dev-2', CART, 'dev', 'k-dev-51', 'in_progress', 5),
    f.state('qa-1', HELLO, 'qa', 'c-qa-2', 'success', 6),
    f.state('qa-1', GREETER, 'qa', 'g-qa-2', 'success', 6),
    f.state('staging-1', HELLO, 'staging', 'c-st-2', 'success', 40),
    f.state('prod-1', HELLO, 'prod', 'c-prod-1', 'success', 7),
    f.state('prod-2', HELLO, 'prod', 'c-prod-1', 'success', 8),
    f.state('prod-3', HELLO, 'prod', 'c-prod-1', 'success', 20),
    f.state('prod-1', GREETER, 'prod', 'g-prod-19', 'success', 9),
    f.state('edge-store-7', CART, 'prod', 'k-prod-51', 'success', 10),
  ]);
  return fleet;
}
