// Random sequences of writes to the known fleet's workloads, for tests that hold what the store
// keeps incrementally to a recount from scratch, step after step.
import type { NormalizedRecord } from '../../src/model/deployment-records.ts';
import { CART, ENVIRONMENTS, FleetBuilder, GREETER, HELLO } from './known-fleet.ts';
import { randomCommit, randomName } from './random-ids.ts';
import { type SeededPicker, seededPicker, testSeed } from './seeded-random.ts';

const WORKLOADS = [HELLO, GREETER, CART];

/** What a test of random steps starts from: a known fleet begun a day ago, and the hosts and commits its steps draw from. */
export interface RandomWriteFleet {
  readonly seed: number;
  readonly random: SeededPicker;
  readonly t0: number;
  readonly fleet: FleetBuilder;
  readonly hosts: readonly string[];
  readonly commits: readonly string[];
}

export function randomWriteFleet(db: ConstructorParameters<typeof FleetBuilder>[0]): RandomWriteFleet {
  const seed = testSeed();
  const t0 = Date.now() - 24 * 60 * 60_000;
  return {
    seed,
    random: seededPicker(seed),
    t0,
    fleet: new FleetBuilder(db, t0),
    hosts: Array.from({ length: 8 }, () => randomName('host')),
    commits: Array.from({ length: 4 }, () => randomCommit()),
  };
}

export interface RandomStepOptions {
  readonly hosts: readonly string[];
  readonly commits: readonly string[];
  /** Minutes after the fleet's start that the step happens at: most reports are of then. */
  readonly minute: number;
  readonly maxRecords: number;
  /** Relative weights of state reports, descriptors and removals. */
  readonly weights: { readonly states: number; readonly descriptors: number; readonly removals: number };
}

/**
 * One step: state reports (a quarter of them late, up to two hours back) on whichever environment
 * is drawn — so a host's reconciler of a workload moves between endpoints — new and late
 * assignments of three versions, and removals (a later report brings a reconciler back).
 */
export function randomStep(random: SeededPicker, fleet: FleetBuilder, options: RandomStepOptions): NormalizedRecord[] {
  const { states, descriptors, removals } = options.weights;
  const records: NormalizedRecord[] = [];
  for (let n = 1 + random.int(options.maxRecords); n > 0; n -= 1) {
    const workload = random.pick(WORKLOADS);
    const environment = random.pick(ENVIRONMENTS);
    const kind = random.int(states + descriptors + removals);
    const minutesAgo = -(options.minute - (random.int(4) === 0 ? random.int(120) : 0));
    if (kind < states) {
      const status = random.pick(['success', 'success', 'failure', 'in_progress'] as const);
      records.push(fleet.state(random.pick(options.hosts), workload, environment, random.pick(options.commits), status, minutesAgo));
    } else if (kind < states + descriptors) {
      records.push(fleet.descriptor(workload, environment, `1.${random.int(3)}`, random.pick(options.commits), minutesAgo));
    } else {
      records.push({ kind: 'reconciler-removed', host: random.pick(options.hosts), reconciler: `flux-system/${workload.workload}`, removedAt: fleet.ago(minutesAgo) });
    }
  }
  return records;
}

/**
 * A fleet with rollouts, laggards, drift and removals, for tests that read what the store made of
 * it: twelve random steps of up to 30 records over 20 hosts and 4 commits, begun a day ago.
 */
export async function writeRandomFleet(db: ConstructorParameters<typeof FleetBuilder>[0]): Promise<void> {
  const random = seededPicker(testSeed());
  const fleet = new FleetBuilder(db, Date.now() - 24 * 60 * 60_000);
  const hosts = Array.from({ length: 20 }, () => randomName('host'));
  const commits = Array.from({ length: 4 }, () => randomCommit());
  for (let step = 0, minutes = 0; step < 12; step += 1, minutes += random.int(20)) {
    await fleet.write(randomStep(random, fleet, { hosts, commits, minute: minutes, maxRecords: 30, weights: { states: 11, descriptors: 2, removals: 1 } }));
  }
}
