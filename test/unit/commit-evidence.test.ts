// What a batch of reports tells about commits: sightings of every commit a reconciler moved to,
// successions only for steps in time on one endpoint, none for states at one instant or late ones.
import { describe, expect, it } from 'vitest';
import { commitEvidence, RecordedEvidence } from '../../src/store/commit-evidence.ts';
import type { StateReport } from '../../src/store/state-transitions.ts';
import { randomCommit } from '../support/random-ids.ts';

const at = (second: number) => new Date(Date.UTC(2026, 10, 23, 12, 0, second));
const report = (reconcilerId: number, endpointId: number, commitId: string, second: number, status: StateReport['status'] = 'success'): StateReport => ({
  reconcilerId,
  endpointId,
  commitId,
  status,
  message: '',
  observedAt: at(second),
});

describe('commitEvidence', () => {
  const [a, b, c] = [randomCommit(), randomCommit(), randomCommit()];

  it('witnesses each step of a reconciler from its stored state, in time order', () => {
    const stored = new Map([[1, { endpointId: 7, commitId: a, observedAt: at(0) }]]);
    // Out of order in the batch, in order in time; a status change on b is no step.
    const evidence = commitEvidence(stored, [report(1, 7, c, 30), report(1, 7, b, 10, 'in_progress'), report(1, 7, b, 20)], []);
    expect(evidence.successions).toEqual([
      { endpointId: 7, from: a, to: b, at: at(10) },
      { endpointId: 7, from: b, to: c, at: at(30) },
    ]);
    expect(evidence.sightings).toEqual([
      { endpointId: 7, commitId: b, at: at(10) },
      { endpointId: 7, commitId: c, at: at(30) },
    ]);
  });

  it('sees a new reconciler’s first commit, but no step from nothing', () => {
    expect(commitEvidence(new Map(), [report(2, 7, a, 5)], [])).toEqual({ sightings: [{ endpointId: 7, commitId: a, at: at(5) }], successions: [] });
  });

  it('takes no step across endpoints, nor between two states at one instant', () => {
    const stored = new Map([[1, { endpointId: 7, commitId: a, observedAt: at(0) }]]);
    expect(commitEvidence(stored, [report(1, 8, b, 10)], []).successions).toEqual([]);
    const tie = new Map([[1, { endpointId: 7, commitId: a, observedAt: at(10) }]]);
    expect(commitEvidence(tie, [report(1, 7, b, 10)], []).successions).toEqual([]);
  });

  it('sees the commits of late reports, and orders nothing by them', () => {
    const stored = new Map([[1, { endpointId: 7, commitId: c, observedAt: at(50) }]]);
    expect(commitEvidence(stored, [], [report(1, 7, a, 5), report(1, 7, c, 6)])).toEqual({
      sightings: [{ endpointId: 7, commitId: a, at: at(5) }],
      successions: [],
    });
  });

  it('names each fact once, at the earliest time the batch saw it', () => {
    // After a merge: many reconcilers of one endpoint take the same step, in no particular order.
    const stored = new Map([1, 2, 3, 4].map((id) => [id, { endpointId: 7, commitId: a, observedAt: at(0) }] as const));
    const evidence = commitEvidence(stored, [report(1, 7, b, 40), report(2, 7, b, 20), report(3, 7, b, 30), report(4, 8, b, 10)], [report(9, 7, c, 50)]);
    expect(evidence.sightings).toEqual([
      { endpointId: 7, commitId: b, at: at(20) },
      { endpointId: 8, commitId: b, at: at(10) },
      { endpointId: 7, commitId: c, at: at(50) },
    ]);
    expect(evidence.successions).toEqual([{ endpointId: 7, from: a, to: b, at: at(20) }]);
  });
});

describe('RecordedEvidence', () => {
  it('leaves out what was committed before, and only that', () => {
    const [a, b] = [randomCommit(), randomCommit()];
    const recorded = new RecordedEvidence();
    const evidence = { sightings: [{ endpointId: 1, commitId: b, at: at(1) }], successions: [{ endpointId: 1, from: a, to: b, at: at(1) }] };
    expect(recorded.unrecorded(evidence)).toEqual(evidence);
    recorded.remember(evidence);
    expect(recorded.unrecorded(evidence)).toEqual({ sightings: [], successions: [] });
    // The same step on another endpoint is another fact.
    const elsewhere = { sightings: [], successions: [{ endpointId: 2, from: a, to: b, at: at(1) }] };
    expect(recorded.unrecorded(elsewhere)).toEqual(elsewhere);
  });
});
