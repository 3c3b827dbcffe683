// A generated fleet for the hosts list: any number of hosts with random names and numbers (so that
// no code can sort them right by luck), each with what the hosts API should say about it — offline,
// failing, drifting — known from how it was built, not from the hub.
//
// Per environment two deployment targets, `web` and `api`, whose desired state moved on:
//   web  v1 at commit w1 (120 min ago) → v2 at w2 (60 min ago) → v2 again at w3 (30 min ago)
//   api  v1 at commit a1 (90 min ago) → v2 at a2 (45 min ago)
// w2 and w3 are one rollout (the same version): a reconciler on w2 is not on the desired commit but
// on the desired rollout — no drift. Reconcilers on w1 or a1 drift. Host i pulls web in environment
// i mod E, and api when i is even; its commits, statuses and silence follow from i, its name and
// number are random.
import { randomInt } from 'node:crypto';
import type { Kysely } from 'kysely';
import { createLogger } from '../../src/log/logger.ts';
import type { DeploymentStatus, NormalizedRecord } from '../../src/model/deployment-records.ts';
import type { HubDatabase } from '../../src/store/database-schema.ts';
import { RecordWriter } from '../../src/store/record-writer.ts';
import { randomCommit, randomName } from './random-ids.ts';

export interface FleetReconciler {
  readonly workload: 'web' | 'api';
  readonly commit: string;
  readonly status: DeploymentStatus;
  /** Off its target's desired rollout. */
  readonly drifting: boolean;
}

export interface FleetHost {
  readonly name: string;
  /** The number in its name: natural order is by this number. */
  readonly n: number;
  readonly environment: string;
  /** Silent for an hour (stale-after is 15 minutes). */
  readonly offline: boolean;
  readonly reconcilers: readonly FleetReconciler[];
}

export interface HostsFleet {
  readonly prefix: string;
  readonly environments: readonly string[];
  readonly hosts: readonly FleetHost[];
  readonly commits: Readonly<Record<string, { readonly w1: string; readonly w2: string; readonly w3: string; readonly a1: string; readonly a2: string }>>;
}

const STATUSES: readonly DeploymentStatus[] = ['success', 'success', 'failure', 'in_progress', 'success'];

/** `count` distinct random numbers of 1 to 6 digits (many lengths, so text order is not number order). */
function randomNumbers(count: number): number[] {
  const numbers = new Set<number>();
  while (numbers.size < count) numbers.add(randomInt(0, 10 ** randomInt(1, 7)));
  return [...numbers];
}

export function planHostsFleet(hostCount: number, environmentCount: number): HostsFleet {
  const prefix = randomName('fleet');
  const environments = Array.from({ length: environmentCount }, (_, k) => `${prefix}-env${k}`);
  const commits = Object.fromEntries(
    environments.map((environment) => [environment, { w1: randomCommit(), w2: randomCommit(), w3: randomCommit(), a1: randomCommit(), a2: randomCommit() }]),
  );
  const hosts = randomNumbers(hostCount).map((n, i): FleetHost => {
    const environment = environments[i % environmentCount]!;
    const own = commits[environment]!;
    const web = [own.w1, own.w2, own.w3][i % 3]!;
    const reconcilers: FleetReconciler[] = [{ workload: 'web', commit: web, status: STATUSES[i % 5]!, drifting: web === own.w1 }];
    if (i % 2 === 0) {
      const api = Math.floor(i / 2) % 2 === 0 ? own.a1 : own.a2;
      reconcilers.push({ workload: 'api', commit: api, status: STATUSES[(i + 2) % 5]!, drifting: api === own.a1 });
    }
    return { name: `${prefix}-node-${n}`, n, environment, offline: i % 7 === 3, reconcilers };
  });
  return { prefix, environments, hosts, commits };
}

export const endpointOf = (fleet: HostsFleet, environment: string, workload: string): string =>
  `https://github.com/${fleet.prefix}/gitops/${environment}/${workload}`;

/** Writes the fleet through the hub's own writer, in batches; `now` is when the online hosts last reported. */
export async function writeHostsFleet(db: Kysely<HubDatabase>, fleet: HostsFleet, now = Date.now()): Promise<void> {
  const writer = new RecordWriter(db, createLogger('silent'), { retryAfterSeconds: 1 });
  const ago = (minutes: number) => new Date(now - minutes * 60_000);
  const manifests = (environment: string, workload: string) => ({ storageType: 'git', endpoint: endpointOf(fleet, environment, workload) });
  const descriptor = (environment: string, workload: string, version: string, commit: string, minutesAgo: number): NormalizedRecord => ({
    kind: 'desired-state',
    workspace: `${fleet.prefix}-ws`,
    application: 'shop',
    workload: { name: workload, source: undefined },
    environment,
    deploymentTarget: { name: 'main', manifests: manifests(environment, workload) },
    workloadVersion: { version, build: `b-${version}`, commit: undefined, buildTime: undefined },
    commitId: commit,
    assignedAt: ago(minutesAgo),
  });
  for (const environment of fleet.environments) {
    const c = fleet.commits[environment]!;
    await writer.write([
      descriptor(environment, 'web', '1.0', c.w1, 120),
      descriptor(environment, 'api', '1.0', c.a1, 90),
      descriptor(environment, 'web', '2.0', c.w2, 60),
      descriptor(environment, 'api', '2.0', c.a2, 45),
      descriptor(environment, 'web', '2.0', c.w3, 30),
    ]);
  }
  const states = fleet.hosts.flatMap((host, i) =>
    host.reconcilers.map(
      (reconciler): NormalizedRecord => ({
        kind: 'real-state',
        host: { name: host.name, type: i % 10 === 0 ? 'edge-device' : undefined },
        reconciler: { name: `flux-system/${reconciler.workload}`, type: 'flux' },
        manifests: manifests(host.environment, reconciler.workload),
        commitId: reconciler.commit,
        status: reconciler.status,
        statusMessage: reconciler.status === 'failure' ? 'Health check failed after 5m0s' : 'Applied revision',
        observedAt: ago(host.offline ? 60 : (i % 5) + 1),
      }),
    ),
  );
  for (let start = 0; start < states.length; start += 2_000) await writer.write(states.slice(start, start + 2_000));
}

/** What the hosts API should say of a host, from how it was built. */
export function expected(host: FleetHost): { offline: boolean; failing: boolean; drifting: number; statuses: Set<string> } {
  const statuses = new Set(host.reconcilers.map((reconciler) => (host.offline ? 'stale' : reconciler.status)));
  return { offline: host.offline, failing: statuses.has('failure'), drifting: host.reconcilers.filter((reconciler) => reconciler.drifting).length, statuses };
}

/** Natural order of the fleet's names: by their number (they share everything before it). */
export const byNumber = (a: FleetHost, b: FleetHost): number => a.n - b.n;
