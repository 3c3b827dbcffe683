import { describe, expect, it } from 'vitest';
import {
  type CurrentState,
  keepLateReports,
  planStateChanges,
  type StateReport,
} from '../../src/store/state-transitions.ts';

const at = (minute: number): Date => new Date(Date.UTC(2026, 10, 20, 9, minute));
const report = (minute: number, commitId: string, status: StateReport['status'] = 'success', reconcilerId = 1): StateReport => ({
  reconcilerId,
  endpointId: 7,
  commitId,
  status,
  message: '',
  observedAt: at(minute),
});
const current = (since: number, last: number, commitId: string, status: StateReport['status'] = 'success'): CurrentState => ({
  endpointId: 7,
  commitId,
  status,
  message: '',
  observedAt: at(since),
  lastObservedAt: at(last),
});

describe('planStateChanges', () => {
  it('records the first report of a reconciler as history and current state', () => {
    const plan = planStateChanges(new Map(), [report(1, 'a', 'in_progress')]);
    expect(plan.history).toEqual([report(1, 'a', 'in_progress')]);
    expect(plan.current.get(1)).toEqual(current(1, 1, 'a', 'in_progress'));
  });

  it('keeps only transitions: a confirming report moves "last observed" only', () => {
    const plan = planStateChanges(new Map(), [report(1, 'a'), report(2, 'a'), report(3, 'b'), report(4, 'b')]);
    expect(plan.history.map((r) => r.commitId)).toEqual(['a', 'b']);
    expect(plan.current.get(1)).toEqual(current(3, 4, 'b'));
  });

  it('takes details from the newest report: a change of them alone is a confirmation, not a transition', () => {
    const detailed = (minute: number, health: string): StateReport => ({ ...report(minute, 'a', 'in_progress'), details: JSON.stringify({ argocd: { sync: 'Synced', health, operation: 'Succeeded' } }) });
    const plan = planStateChanges(new Map([[1, current(1, 1, 'a', 'in_progress')]]), [detailed(2, 'Progressing'), detailed(3, 'Suspended')]);
    expect(plan.history).toEqual([]);
    expect(plan.current.get(1)).toEqual({ ...current(1, 3, 'a', 'in_progress'), details: detailed(3, 'Suspended').details });
  });

  it('orders the reports of one batch by time, whatever their order in the request', () => {
    const plan = planStateChanges(new Map(), [report(4, 'b'), report(1, 'a'), report(3, 'b')]);
    expect(plan.history.map((r) => r.observedAt)).toEqual([at(1), at(3)]);
    expect(plan.current.get(1)).toEqual(current(3, 4, 'b'));
  });

  it('changes nothing for an exact duplicate of the newest report', () => {
    const plan = planStateChanges(new Map([[1, current(1, 5, 'a')]]), [report(5, 'a')]);
    expect(plan.history).toEqual([]);
    expect(plan.late).toEqual([]);
    expect(plan.current.size).toBe(0);
  });

  it('sets aside reports older than the stored state without touching it', () => {
    const plan = planStateChanges(new Map([[1, current(5, 9, 'b')]]), [report(2, 'a', 'failure')]);
    expect(plan.late).toEqual([report(2, 'a', 'failure')]);
    expect(plan.history).toEqual([]);
    expect(plan.current.size).toBe(0);
  });

  it('settles two different states at the same instant the same way in any arrival order', () => {
    const failure = report(5, 'a', 'failure');
    const success = report(5, 'a', 'success');
    const oneWay = planStateChanges(new Map(), [failure, success]);
    const otherWay = planStateChanges(new Map(), [success, failure]);
    expect(oneWay.current.get(1)).toEqual(otherWay.current.get(1));
    expect(oneWay.history).toHaveLength(2);
    const fromStored = planStateChanges(new Map([[1, current(5, 5, 'a', 'failure')]]), [success]);
    expect(fromStored.current.get(1) ?? current(5, 5, 'a', 'failure')).toEqual(oneWay.current.get(1));
  });

  it('plans each reconciler on its own', () => {
    const plan = planStateChanges(new Map(), [report(1, 'a', 'success', 1), report(1, 'b', 'failure', 2)]);
    expect(plan.current.get(1)?.commitId).toBe('a');
    expect(plan.current.get(2)?.status).toBe('failure');
  });

  it('lists history reconciler by reconciler in the order they arrived, whatever their ids', () => {
    const ids = Array.from({ length: 8 }, () => 1 + Math.floor(Math.random() * 1_000_000));
    const arrival = [...new Set(ids)];
    const plan = planStateChanges(new Map(), arrival.flatMap((id, i) => [report(9 - i, 'b', 'success', id), report(1, 'a', 'success', id)]));
    expect([...new Set(plan.history.map((r) => r.reconcilerId))]).toEqual(arrival);
    expect(plan.history.filter((r) => r.reconcilerId === arrival[0]).map((r) => r.commitId)).toEqual(['a', 'b']);
  });
});

describe('keepLateReports', () => {
  it('keeps a late report that differs from the history entry before it', () => {
    const late = [report(3, 'x', 'failure')];
    expect(keepLateReports(late, new Map([[0, { ...report(1, 'a'), observedAt: at(1) }]]))).toEqual(late);
  });

  it('drops a late report that only repeats the state before it (or is already stored)', () => {
    const late = [report(3, 'a')];
    expect(keepLateReports(late, new Map([[0, report(1, 'a')]]))).toEqual([]);
    expect(keepLateReports(late, new Map([[0, report(3, 'a')]]))).toEqual([]);
  });

  it('compares late reports of one batch with each other too', () => {
    const late = [report(4, 'x', 'failure'), report(3, 'x', 'failure')];
    expect(keepLateReports(late, new Map([[0, report(1, 'a')], [1, report(1, 'a')]]))).toEqual([report(3, 'x', 'failure')]);
  });
});
