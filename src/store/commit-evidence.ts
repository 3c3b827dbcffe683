// What a batch of state reports tells about commits, beyond each reconciler's own state: which
// commits appeared on which endpoint (sightings: what short commits are resolved among), and which
// commit a reconciler moved to from which (successions: the only commit order the hub trusts, since
// it cannot read Git and commit ids do not sort). Pure; the writer stores both (schema/0010).
import { BoundedCache } from './bounded-cache.ts';
import { type CurrentState, forEachReconciler, type StateReport } from './state-transitions.ts';

export interface CommitSighting {
  readonly endpointId: number;
  readonly commitId: string;
  readonly at: Date;
}

export interface CommitSuccession {
  readonly endpointId: number;
  readonly from: string;
  readonly to: string;
  readonly at: Date;
}

export interface CommitEvidence {
  readonly sightings: CommitSighting[];
  readonly successions: CommitSuccession[];
}

/**
 * `transitions` are the in-order transitions of a batch (newer than the stored states), `late` the
 * late reports kept in history. A late report witnesses a commit but no order: the hub keeps
 * transitions, not every report, so what came around it is not known for sure. Each fact appears
 * once, at the earliest time the batch witnessed it (as kalypso_commits_seen keeps it): after a
 * merge a batch holds the same step of hundreds of reconcilers.
 */
export function commitEvidence(
  stored: ReadonlyMap<number, Pick<CurrentState, 'endpointId' | 'commitId' | 'observedAt'>>,
  transitions: readonly StateReport[],
  late: readonly StateReport[],
): CommitEvidence {
  const sightings = new Facts();
  const successions = new Facts();
  const byTime = (a: StateReport, b: StateReport) => a.observedAt.getTime() - b.observedAt.getTime();
  forEachReconciler(transitions, byTime, (reconcilerId, reports) => {
    let previous: Pick<StateReport, 'endpointId' | 'commitId' | 'observedAt'> | undefined = stored.get(reconcilerId);
    for (const report of reports) {
      const moved = previous === undefined || previous.endpointId !== report.endpointId || previous.commitId !== report.commitId;
      if (moved) sightings.add(report.endpointId, report.commitId, '', report.observedAt);
      // Two states at one instant say nothing about which came first.
      if (
        moved &&
        previous !== undefined &&
        previous.endpointId === report.endpointId &&
        previous.observedAt.getTime() < report.observedAt.getTime()
      ) {
        successions.add(report.endpointId, previous.commitId, report.commitId, report.observedAt);
      }
      previous = report;
    }
  });
  for (const report of late) {
    const current = stored.get(report.reconcilerId);
    if (current?.endpointId === report.endpointId && current.commitId === report.commitId) continue;
    sightings.add(report.endpointId, report.commitId, '', report.observedAt);
  }
  return {
    sightings: sightings.list.map(({ endpointId, first, at }) => ({ endpointId, commitId: first, at })),
    successions: successions.list.map(({ endpointId, first, second, at }) => ({ endpointId, from: first, to: second, at })),
  };
}

interface Fact {
  readonly endpointId: number;
  readonly first: string;
  readonly second: string;
  at: Date;
}

/** Facts by endpoint and one or two commits, each kept once at its earliest time (no key strings built). */
class Facts {
  readonly list: Fact[] = [];
  /** endpoint → commit → second commit ('' for none). */
  readonly #index = new Map<number, Map<string, Map<string, Fact>>>();

  add(endpointId: number, first: string, second: string, at: Date): void {
    let byFirst = this.#index.get(endpointId);
    if (byFirst === undefined) this.#index.set(endpointId, (byFirst = new Map<string, Map<string, Fact>>()));
    let bySecond = byFirst.get(first);
    if (bySecond === undefined) byFirst.set(first, (bySecond = new Map<string, Fact>()));
    const known = bySecond.get(second);
    if (known === undefined) {
      const fact = { endpointId, first, second, at };
      bySecond.set(second, fact);
      this.list.push(fact);
    } else if (at < known.at) {
      known.at = at;
    }
  }
}

/**
 * The evidence this hub has already committed. After a merge, thousands of reconcilers report the
 * same step within minutes; writing it again costs each batch a wait on the one row all of them
 * insert, until the first of them commits. A fact is remembered only once its transaction
 * committed, so a failed batch leaves it to be written by the next one.
 */
export class RecordedEvidence {
  readonly #facts: BoundedCache<string, true>;

  constructor(capacity = 100_000) {
    this.#facts = new BoundedCache(capacity);
  }

  unrecorded(evidence: CommitEvidence): CommitEvidence {
    return {
      sightings: evidence.sightings.filter((s) => this.#facts.get(sightingKey(s)) === undefined),
      successions: evidence.successions.filter((s) => this.#facts.get(successionKey(s)) === undefined),
    };
  }

  remember(evidence: CommitEvidence): void {
    for (const sighting of evidence.sightings) this.#facts.set(sightingKey(sighting), true);
    for (const succession of evidence.successions) this.#facts.set(successionKey(succession), true);
  }

  clear(): void {
    this.#facts.clear();
  }
}

const sightingKey = (s: CommitSighting): string => `s\u0000${s.endpointId}\u0000${s.commitId}`;
const successionKey = (s: CommitSuccession): string => `e\u0000${s.endpointId}\u0000${s.from}\u0000${s.to}`;
