// The delivery fleet: rollouts whose every delivery number is computed by hand below. The API test
// (test/api/delivery-metrics.test.ts) sends it through the official OTLP exporter; the Grafana test
// (test/grafana/delivery-dashboard.test.ts) writes the same records with the RecordWriter.
//
// Times are minutes after 2026-11-10T00:00Z. Hosts prod-1..4 pull prod/cart/edge (prod-4 is slow),
// dev-1..2 pull dev/cart/edge, web-01..10 pull prod/web/main. Workspace contoso, application shop.
//
//  rollout  target          version  build  assigned  subscribers succeed at           notes
//  R1       prod/cart/edge  1.0      0      60        65 70 75 | prod-4 120
//  R2       prod/cart/edge  1.1      180    240       prod-3 245; prod-1 fails 250,    superseded by R3 after 40 min
//                                                     prod-2 fails 252, prod-4 in progress
//  R3       prod/cart/edge  1.1.1    270    280       283 285 290 | prod-4 330         the fix: restores R2 at 330
//  W1       prod/web/main   3.0      300    360       web-01..09 at 361..369, web-10 at 420
//  D1       dev/cart/edge   1.1      180    200       dev-1 202, dev-2 210
//  Q1       qa/cart/edge    1.1.1    270    300       (no reconciler pulls it)
//  R4       prod/cart/edge  1.2      1440   1560      1570 1575 1600 | prod-4 1680;    prod-3 fails at 1565 first
//  D2       dev/cart/edge   1.2      1440   1500      dev-1 1505, dev-2 in progress    still under way
//
//  seconds  lead first  lead last  conv 50  conv 90  conv 100  restore  laggard (behind the 50 % point)
//  R1       3900        7200       600      3600     3600      -        prod-4 3000
//  R2       3900        -          -        -        -         4800     prod-4 (not converged)
//  R3       780         3600       300      3000     3000      -        prod-4 2700
//  W1       3660        7200       300      540      3600      -        web-10 3300
//  D1       1320        1800       120      600      600       -        dev-2 480
//  R4       7800        14400      900      7200     7200      6900     prod-4 6300
//  D2       3900        -          300      -        -         -        dev-2 (not converged)
//
// Over 2026-11-10..12 (two days), fix window one hour: 7 rollouts with subscribers, 5 succeeded
// (2.5 a day); lead time first host 780 1320 3660 3900 3900 3900 7800 (median 3900), last host
// 1800 3600 7200 7200 14400 (median 7200); convergence to 100 % 600 3000 3600 3600 7200 (median
// 3600); 6 judged (D2 is under way), 2 change failures (R2, R4: failure reports); restore 4800 6900
// (median 5850); laggards prod-4 ×4 (1 not converged), dev-2 ×2 (1), web-10 ×1.
// Superseded after: R1 180 min, D1 1300 min, R3 1280 min, R2 40 min (already a failure).
import type { Kysely } from 'kysely';
import { createLogger } from '../../src/log/logger.ts';
import type { DeploymentStatus, NormalizedRecord } from '../../src/model/deployment-records.ts';
import type { HubDatabase } from '../../src/store/database-schema.ts';
import { publishHubSettings } from '../../src/store/hub-settings.ts';
import { RecordWriter } from '../../src/store/record-writer.ts';
import { refreshRollouts } from '../../src/store/rollout-refresh.ts';
import { refreshSummaries } from '../../src/store/summary-refresh.ts';
import type { LogSpec } from './otlp-client.ts';

export const DELIVERY_T0 = Date.UTC(2026, 10, 10);
/**
 * The fleet is history, and its current rollouts are judged now, as the rollout gate judges them:
 * the hub reading it runs with a stale-after long enough that the fleet's last reports are current.
 */
export const DELIVERY_STALE_AFTER_MS = 3_650 * 86_400_000;
/** `minute` minutes after 2026-11-10T00:00Z. */
export const deliveryAt = (minute: number): Date => new Date(DELIVERY_T0 + minute * 60_000);

export interface DeliveryWorkload {
  readonly name: string;
  readonly target: string;
}
export const CART: DeliveryWorkload = { name: 'cart', target: 'edge' };
export const WEB: DeliveryWorkload = { name: 'web', target: 'main' };

const REPO = 'https://github.com/contoso/shop-gitops';
/** The manifests endpoint of a workload's target in an environment (repo, branch = environment, path). */
export const deliveryEndpoint = (environment: string, workload: DeliveryWorkload): string => `${REPO}/${environment}/${workload.name}-${workload.target}`;

interface Descriptor {
  readonly kind: 'descriptor';
  readonly workload: DeliveryWorkload;
  readonly environment: string;
  readonly version: string;
  readonly commit: string;
  readonly buildMinute: number;
  readonly assignedMinute: number;
}

interface State {
  readonly kind: 'state';
  readonly host: string;
  readonly workload: DeliveryWorkload;
  readonly environment: string;
  readonly commit: string;
  readonly status: DeploymentStatus;
  readonly minute: number;
}

/** A CD pipeline's descriptor or a reconciler's state report of the fleet. */
export type DeliveryEvent = Descriptor | State;

export function descriptor(workload: DeliveryWorkload, environment: string, version: string, commit: string, buildMinute: number, assignedMinute: number): Descriptor {
  return { kind: 'descriptor', workload, environment, version, commit, buildMinute, assignedMinute };
}

export function state(host: string, workload: DeliveryWorkload, environment: string, commit: string, status: DeploymentStatus, minute: number): State {
  return { kind: 'state', host, workload, environment, commit, status, minute };
}

/** The fleet in the batches it is sent in. */
export const DELIVERY_FLEET: readonly (readonly DeliveryEvent[])[] = [
  [
    descriptor(CART, 'prod', '1.0', 'c1', 0, 60),
    descriptor(CART, 'dev', '1.1', 'cd1', 180, 200),
    descriptor(CART, 'prod', '1.1', 'c2', 180, 240),
    descriptor(CART, 'prod', '1.1.1', 'c3', 270, 280),
    descriptor(CART, 'qa', '1.1.1', 'cq1', 270, 300),
    descriptor(WEB, 'prod', '3.0', 'w1', 300, 360),
  ],
  [
    state('prod-1', CART, 'prod', 'c1', 'success', 65),
    state('prod-2', CART, 'prod', 'c1', 'success', 70),
    state('prod-3', CART, 'prod', 'c1', 'success', 75),
    state('prod-4', CART, 'prod', 'c1', 'success', 120),
    state('dev-1', CART, 'dev', 'cd1', 'success', 202),
    state('dev-2', CART, 'dev', 'cd1', 'in_progress', 203),
    state('dev-2', CART, 'dev', 'cd1', 'success', 210),
    state('prod-1', CART, 'prod', 'c2', 'in_progress', 241),
    state('prod-3', CART, 'prod', 'c2', 'success', 245),
    state('prod-1', CART, 'prod', 'c2', 'failure', 250),
    state('prod-2', CART, 'prod', 'c2', 'failure', 252),
    state('prod-4', CART, 'prod', 'c2', 'in_progress', 260),
    state('prod-3', CART, 'prod', 'c3', 'success', 283),
    state('prod-1', CART, 'prod', 'c3', 'success', 285),
    state('prod-2', CART, 'prod', 'c3', 'success', 290),
    state('prod-4', CART, 'prod', 'c3', 'success', 330),
    ...Array.from({ length: 9 }, (_, i) => state(`web-0${i + 1}`, WEB, 'prod', 'w1', 'success', 361 + i)),
    state('web-10', WEB, 'prod', 'w1', 'success', 420),
  ],
  [descriptor(CART, 'dev', '1.2', 'cd2', 1440, 1500), descriptor(CART, 'prod', '1.2', 'c4', 1440, 1560)],
  [
    state('dev-1', CART, 'dev', 'cd2', 'success', 1505),
    state('dev-2', CART, 'dev', 'cd2', 'in_progress', 1510),
    state('prod-3', CART, 'prod', 'c4', 'failure', 1565),
    state('prod-1', CART, 'prod', 'c4', 'success', 1570),
    state('prod-2', CART, 'prod', 'c4', 'success', 1575),
    state('prod-3', CART, 'prod', 'c4', 'success', 1600),
    state('prod-4', CART, 'prod', 'c4', 'success', 1680),
  ],
];

const message = (status: DeploymentStatus): string => (status === 'failure' ? 'Health check failed after 5m0s' : 'Applied revision');

/** An event as the OTLP log record a CD pipeline or an edge agent sends; `at` places its minutes in time. */
export function deliveryLogSpec(event: DeliveryEvent, at: (minute: number) => Date = deliveryAt): LogSpec {
  if (event.kind === 'descriptor') {
    return {
      resource: { 'service.name': 'cd-pipeline' },
      eventName: 'kalypso.deployment.descriptor',
      attributes: { 'vcs.ref.head.revision': event.commit },
      body: {
        workload: { name: event.workload.name, application: { name: 'shop', workspace: { name: 'contoso' } } },
        deploymentTarget: {
          name: event.workload.target,
          environment: event.environment,
          manifests: { repo: REPO, branch: event.environment, path: `${event.workload.name}-${event.workload.target}` },
        },
        workloadVersion: { version: event.version, build: `b-${event.version}`, buildTime: at(event.buildMinute).toISOString() },
      },
      time: at(event.assignedMinute),
    };
  }
  return {
    resource: { 'k8s.cluster.name': event.host },
    eventName: 'kalypso.deployment.state',
    attributes: {
      'kalypso.reconciler.name': `flux-system/${event.workload.name}`,
      'kalypso.reconciler.type': 'flux',
      'kalypso.manifests.endpoint': deliveryEndpoint(event.environment, event.workload),
      'vcs.ref.head.revision': event.commit,
      'kalypso.deployment.status': event.status,
    },
    body: message(event.status),
    time: at(event.minute),
  };
}

/** An event as the normalized record the hub makes of that log record. */
export function deliveryRecord(event: DeliveryEvent): NormalizedRecord {
  const manifests = { storageType: 'git', endpoint: deliveryEndpoint(event.environment, event.workload) };
  if (event.kind === 'descriptor') {
    return {
      kind: 'desired-state',
      workspace: 'contoso',
      application: 'shop',
      workload: { name: event.workload.name, source: undefined },
      environment: event.environment,
      deploymentTarget: { name: event.workload.target, manifests },
      workloadVersion: { version: event.version, build: `b-${event.version}`, commit: undefined, buildTime: deliveryAt(event.buildMinute) },
      commitId: event.commit,
      assignedAt: deliveryAt(event.assignedMinute),
    };
  }
  return {
    kind: 'real-state',
    host: { name: event.host, type: undefined },
    reconciler: { name: `flux-system/${event.workload.name}`, type: 'flux' },
    manifests,
    commitId: event.commit,
    status: event.status,
    statusMessage: message(event.status),
    observedAt: deliveryAt(event.minute),
  };
}

/**
 * Writes the fleet batch by batch, as the hub would, and brings the rollout table and the summaries
 * up to date, as the hub's refreshers would within a second.
 */
export async function writeDeliveryFleet(db: Kysely<HubDatabase>): Promise<void> {
  await publishHubSettings(db, { staleAfterMs: DELIVERY_STALE_AFTER_MS, environmentOrder: [] });
  const writer = new RecordWriter(db, createLogger('silent'), { retryAfterSeconds: 1 });
  for (const batch of DELIVERY_FLEET) await writer.write(batch.map(deliveryRecord));
  await refreshRollouts(db, { wait: true });
  await refreshSummaries(db, { wait: true, at: new Date() });
}
