// How reports become current state and history — pure, so the rules can be tested without a
// database. The rules:
//
// - A report newer than the current state either confirms it (same state: only "last observed"
//   moves) or is a transition (a different state: it goes into history and becomes current).
// - A report at the same instant as the newest known one with a different state is kept in
//   history; the current state is chosen by a fixed order, so every arrival order agrees.
// - A report older than the current state (late, out of order) never changes the current state;
//   it goes into history unless the history entry before it already records the same state.
// - An exact duplicate changes nothing.
// - Details (an Argo CD application's sync and health) follow the newest report: they are no part
//   of a state, so a change of them alone confirms the state rather than making a transition.
import type { DeploymentStatus } from '../model/deployment-records.ts';

export interface StateKey {
  readonly endpointId: number;
  readonly commitId: string;
  readonly status: DeploymentStatus;
  readonly message: string;
}

/** ReconcilerDetails as JSON text; undefined when the report has none. */
type DetailsText = string | undefined;

export interface StateReport extends StateKey {
  readonly reconcilerId: number;
  readonly observedAt: Date;
  readonly details?: DetailsText;
}

export interface CurrentState extends StateKey {
  /** When this state was first observed. */
  readonly observedAt: Date;
  /** The newest report that confirmed it. */
  readonly lastObservedAt: Date;
  /** Of the newest report (undefined as read back from the store: only a report writes them). */
  readonly details?: DetailsText;
}

export interface StatePlan {
  /** Transitions to append to history. */
  readonly history: StateReport[];
  /** Reports older than the stored current state; see `keepLateReports`. */
  readonly late: StateReport[];
  /** The new current state of every reconciler whose state changed or was confirmed later. */
  readonly current: Map<number, CurrentState>;
}

export function sameState(a: StateKey, b: StateKey): boolean {
  return a.endpointId === b.endpointId && a.commitId === b.commitId && a.status === b.status && a.message === b.message;
}

/** The fixed order that settles two different states reported at the same instant. */
function tieOrder(a: StateKey, b: StateKey): number {
  const left = `${a.status}\u0000${a.commitId}\u0000${a.endpointId}\u0000${a.message}`;
  const right = `${b.status}\u0000${b.commitId}\u0000${b.endpointId}\u0000${b.message}`;
  return left < right ? -1 : left > right ? 1 : 0;
}

function byTimeThenState(a: StateReport, b: StateReport): number {
  return a.observedAt.getTime() - b.observedAt.getTime() || tieOrder(a, b);
}

function stateOf(report: StateReport, at: Date): CurrentState {
  const { endpointId, commitId, status, message, details } = report;
  return { endpointId, commitId, status, message, observedAt: at, lastObservedAt: at, details };
}

/**
 * Calls `each` once per reconciler with its reports, ordered by `order`. Reconcilers come in the
 * order they first appear in `reports`, so history rows are stored in arrival order (the tie-break
 * of transitions observed at the same instant). One sorted copy for the batch, not one array per
 * reconciler.
 */
export function forEachReconciler(
  reports: readonly StateReport[],
  order: (a: StateReport, b: StateReport) => number,
  each: (reconcilerId: number, reports: readonly StateReport[]) => void,
): void {
  const arrival = new Map<number, number>();
  for (const report of reports) if (!arrival.has(report.reconcilerId)) arrival.set(report.reconcilerId, arrival.size);
  // One report per reconciler, as in most batches (a collector's batch spans the fleet, not one
  // reconciler's history): nothing to sort.
  if (arrival.size === reports.length) {
    for (const report of reports) each(report.reconcilerId, [report]);
    return;
  }
  const sorted = [...reports].sort((a, b) => arrival.get(a.reconcilerId)! - arrival.get(b.reconcilerId)! || order(a, b));
  for (let start = 0; start < sorted.length; ) {
    const reconcilerId = sorted[start]!.reconcilerId;
    let end = start + 1;
    while (end < sorted.length && sorted[end]!.reconcilerId === reconcilerId) end += 1;
    each(reconcilerId, sorted.slice(start, end));
    start = end;
  }
}

export function planStateChanges(
  stored: ReadonlyMap<number, CurrentState>,
  reports: readonly StateReport[],
): StatePlan {
  const plan: StatePlan = { history: [], late: [], current: new Map() };
  forEachReconciler(reports, byTimeThenState, (reconcilerId, list) => {
    const storedState = stored.get(reconcilerId);
    const storedLast = storedState?.lastObservedAt.getTime();
    let current = storedState;
    let changed = false;
    for (const report of list) {
      const at = report.observedAt.getTime();
      if (storedLast !== undefined && at < storedLast) {
        plan.late.push(report);
        continue;
      }
      if (current === undefined) {
        plan.history.push(report);
        current = stateOf(report, report.observedAt);
        changed = true;
        continue;
      }
      const newest = current.lastObservedAt.getTime();
      if (at > newest) {
        if (sameState(report, current)) {
          current = { ...current, lastObservedAt: report.observedAt, details: report.details };
        } else {
          plan.history.push(report);
          current = stateOf(report, report.observedAt);
        }
        changed = true;
      } else if (!sameState(report, current)) {
        // Same instant as the newest known report, different state.
        plan.history.push(report);
        if (tieOrder(report, current) > 0) {
          current = stateOf(report, report.observedAt);
          changed = true;
        }
      }
    }
    if (changed && current !== undefined) plan.current.set(reconcilerId, current);
  });
  return plan;
}

/**
 * Which late reports go into history: those whose predecessor (the latest history entry at or
 * before them, or an earlier late report of the same batch) records a different state.
 * `predecessors` holds the stored predecessor of each late report, by index in `late`.
 */
export function keepLateReports(
  late: readonly StateReport[],
  predecessors: ReadonlyMap<number, StateKey & { readonly observedAt: Date }>,
): StateReport[] {
  const order = late.map((report, index) => ({ report, index })).sort((a, b) => byTimeThenState(a.report, b.report));
  const kept: StateReport[] = [];
  const lastInBatch = new Map<number, StateReport>();
  for (const { report, index } of order) {
    const stored = predecessors.get(index);
    const earlier = lastInBatch.get(report.reconcilerId);
    const predecessor =
      earlier !== undefined && (stored === undefined || earlier.observedAt.getTime() >= stored.observedAt.getTime())
        ? earlier
        : stored;
    lastInBatch.set(report.reconcilerId, report);
    if (predecessor === undefined || !sameState(predecessor, report)) kept.push(report);
  }
  return kept;
}
