// Fleets for the Grafana alert rules (deploy/grafana/provisioning/alerting/, docs/alerts.md): one
// where every rule must fire, for known rows, and a healthy one where none may. Names and commits
// are random (no rule can match them by luck); what each rule should say follows from how the fleet
// is built, written down beside it, not from the hub.
//
// Firing (two environments, E and E2; stale-after 15 min, rollout window 30 min, off-commit 1 h):
//   payments (E)  v2 at F1 10 min ago: aks-1 applied it, aks-2 reports a failure      → rollout failed (1)
//   catalog (E)   v2 at C1 45 min ago: aks-3 applied it, aks-4 still on v1, reporting → not converged (1 pending);
//                 aks-4 is off for 45 min: under the off-commit threshold
//   search (E2)   v2 at S1 90 min ago: aks-5 still on v1, reporting                   → not converged (2 pending),
//                 aks-6 applied it but went silent 40 min ago                          → off commit (aks-5, 90 min), offline (aks-6)
//   billing (E)   v1 from an Azure Resource Graph source whose last poll was 30 min ago → source failing, offline (arc-7);
//                 the rollout converged before the silence: not "not converged"
//   ledger (E)    v1 from a second source that polled a minute ago                      → nothing
//
// Healthy: the same shapes settled — converged rollouts (one failed on the way and was fixed), one in
// progress within its window whose laggard has been off for 10 minutes, a source polling, and a host
// whose reconciler was removed long ago (history, not an outage).
import type { Kysely } from 'kysely';
import { createLogger } from '../../src/log/logger.ts';
import type { DeploymentStatus, NormalizedRecord } from '../../src/model/deployment-records.ts';
import type { HubDatabase } from '../../src/store/database-schema.ts';
import { RecordWriter } from '../../src/store/record-writer.ts';
import { randomCommit, randomName } from './random-ids.ts';

export interface AlertFleet {
  readonly prefix: string;
  readonly workspace: string;
  readonly application: string;
  readonly environments: { readonly e: string; readonly e2: string };
  readonly hosts: Readonly<Record<string, string>>;
  readonly commits: Readonly<Record<string, string>>;
  readonly sources: Readonly<Record<string, string>>;
}

interface Writing {
  readonly fleet: AlertFleet;
  readonly writer: RecordWriter;
  readonly ago: (minutes: number) => Date;
}

function planFleet(): AlertFleet {
  const prefix = randomName('alerts');
  const hostNames = ['aks-1', 'aks-2', 'aks-3', 'aks-4', 'aks-5', 'aks-6', 'arc-7', 'arc-8', 'aks-9'];
  const commitNames = ['F0', 'F1', 'C0', 'C1', 'S0', 'S1', 'B1', 'L1'];
  return {
    prefix,
    workspace: `${prefix}-ws`,
    application: `${prefix}-app`,
    environments: { e: `${prefix}-prod`, e2: `${prefix}-qa` },
    hosts: Object.fromEntries(hostNames.map((name) => [name, `${prefix}-${name}`])),
    commits: Object.fromEntries(commitNames.map((name) => [name, randomCommit()])),
    sources: { failing: `${prefix}-subscription`, polling: `${prefix}-subscription-2` },
  };
}

export const endpointOf = (fleet: AlertFleet, environment: string, workload: string): string =>
  `https://github.com/${fleet.prefix}/gitops/${environment}/${workload}`;

function assign({ fleet, ago }: Writing, environment: string, workload: string, version: string, commit: string, minutesAgo: number): NormalizedRecord {
  return {
    kind: 'desired-state',
    workspace: fleet.workspace,
    application: fleet.application,
    workload: { name: workload, source: undefined },
    environment,
    deploymentTarget: { name: 'main', manifests: { storageType: 'git', endpoint: endpointOf(fleet, environment, workload) } },
    workloadVersion: { version, build: `b-${version}`, commit: undefined, buildTime: undefined },
    commitId: fleet.commits[commit]!,
    assignedAt: ago(minutesAgo),
  };
}

/** A reconciler's state from `since` minutes ago, confirmed by a report `lastSeen` minutes ago (the same, when silent since). */
function report(
  { fleet, ago }: Writing,
  host: string,
  environment: string,
  workload: string,
  commit: string,
  status: DeploymentStatus,
  since: number,
  lastSeen: number,
  reportedBy?: string,
): NormalizedRecord[] {
  const record: NormalizedRecord = {
    kind: 'real-state',
    host: { name: fleet.hosts[host]!, type: host.startsWith('arc') ? 'arc-cluster' : undefined },
    reconciler: { name: `flux-system/${workload}`, type: 'flux' },
    manifests: { storageType: 'git', endpoint: endpointOf(fleet, environment, workload) },
    commitId: fleet.commits[commit]!,
    status,
    statusMessage: status === 'failure' ? 'Health check failed after 5m0s' : 'Applied revision',
    observedAt: ago(since),
    ...(reportedBy === undefined ? {} : { reportedBy: `arg:${reportedBy}` }),
  };
  return since === lastSeen ? [record] : [record, { ...record, observedAt: ago(lastSeen) }];
}

/** A new fleet's names, a writer and the clock the reports are dated by. */
function startWriting(db: Kysely<HubDatabase>, now: number): Writing {
  return { fleet: planFleet(), writer: new RecordWriter(db, createLogger('silent'), { retryAfterSeconds: 1 }), ago: (minutes) => new Date(now - minutes * 60_000) };
}

/** Writes the fleet where every alert rule fires (see the top of this file). */
export async function writeFiringFleet(db: Kysely<HubDatabase>, now = Date.now()): Promise<AlertFleet> {
  const w = startWriting(db, now);
  const { fleet } = w;
  const { e, e2 } = fleet.environments;
  await w.writer.write([
    assign(w, e, 'payments', '1.0', 'F0', 120),
    assign(w, e, 'payments', '2.0', 'F1', 10),
    assign(w, e, 'catalog', '1.0', 'C0', 180),
    assign(w, e, 'catalog', '2.0', 'C1', 45),
    assign(w, e, 'billing', '1.0', 'B1', 200),
    assign(w, e, 'ledger', '1.0', 'L1', 100),
  ]);
  await w.writer.write([assign(w, e2, 'search', '1.0', 'S0', 300), assign(w, e2, 'search', '2.0', 'S1', 90)]);
  await w.writer.write([
    ...report(w, 'aks-1', e, 'payments', 'F1', 'success', 5, 1),
    ...report(w, 'aks-2', e, 'payments', 'F1', 'failure', 3, 1),
    ...report(w, 'aks-3', e, 'catalog', 'C1', 'success', 40, 1),
    ...report(w, 'aks-4', e, 'catalog', 'C0', 'success', 170, 1),
    ...report(w, 'aks-5', e2, 'search', 'S0', 'success', 290, 1),
    ...report(w, 'aks-6', e2, 'search', 'S1', 'success', 80, 40),
    ...report(w, 'arc-7', e, 'billing', 'B1', 'success', 150, 30, fleet.sources.failing),
    ...report(w, 'arc-8', e, 'ledger', 'L1', 'success', 90, 1, fleet.sources.polling),
  ]);
  return fleet;
}

/** Writes a fleet where no alert rule may fire. */
export async function writeHealthyFleet(db: Kysely<HubDatabase>, now = Date.now()): Promise<AlertFleet> {
  const w = startWriting(db, now);
  const { fleet } = w;
  const { e, e2 } = fleet.environments;
  await w.writer.write([
    assign(w, e, 'payments', '1.0', 'F0', 120),
    assign(w, e, 'payments', '2.0', 'F1', 20),
    assign(w, e, 'catalog', '1.0', 'C0', 180),
    assign(w, e, 'catalog', '2.0', 'C1', 10),
    assign(w, e, 'billing', '1.0', 'B1', 200),
  ]);
  await w.writer.write([assign(w, e2, 'search', '1.0', 'S0', 300), assign(w, e2, 'search', '2.0', 'S1', 60)]);
  await w.writer.write([
    ...report(w, 'aks-1', e, 'payments', 'F1', 'success', 15, 1),
    ...report(w, 'aks-2', e, 'payments', 'F1', 'success', 12, 1),
    ...report(w, 'aks-3', e, 'catalog', 'C1', 'success', 8, 1),
    // Behind for 10 minutes, within both thresholds.
    ...report(w, 'aks-4', e, 'catalog', 'C0', 'success', 170, 1),
    // Failed on the way, fixed since: a converged rollout.
    ...report(w, 'aks-5', e2, 'search', 'S1', 'failure', 50, 50),
    ...report(w, 'aks-5', e2, 'search', 'S1', 'success', 40, 1),
    ...report(w, 'aks-6', e2, 'search', 'S1', 'success', 45, 2),
    ...report(w, 'arc-7', e, 'billing', 'B1', 'success', 150, 1, fleet.sources.polling),
    // A host gone with its reconciler (deleted): silent, but nothing is expected of it any more.
    ...report(w, 'aks-9', e, 'billing', 'B1', 'success', 190, 180),
  ]);
  await w.writer.write([{ kind: 'reconciler-removed', host: fleet.hosts['aks-9']!, reconciler: 'flux-system/billing', removedAt: w.ago(170) }]);
  return fleet;
}
