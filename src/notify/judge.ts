// A subject judged as the rollout gate judges it: an environment's GitOps commit by the
// environment gate, a source commit by the endpoint gate of each target its version was assigned
// to. The state follows CONTRACT section 7: failure on any failure, success when every subscriber
// succeeded, pending otherwise (in progress, stale, or none reporting yet).
import type { StatusCounts } from '../contract/answer-types.ts';
import type { HubDatabase } from '../store/database-schema.ts';
import { sourceRollouts, type Judgement, type Subject } from '../store/notify/subjects.ts';
import { environmentGateReport } from '../store/reports/environment-gate-report.ts';
import { addStatus, emptyCounts, type ReportContext } from '../store/reports/report-context.ts';
import { rolloutGateReport } from '../store/reports/rollout-gate-report.ts';
import type { Kysely } from 'kysely';
import { describeRollout } from './describe.ts';
import type { CommitState } from './messages.ts';

/** What the gates say of a subject's commit. */
interface GateView {
  readonly counts: StatusCounts;
  readonly settled: boolean;
  /** The first hosts with a failing subscriber, in order, and how many there are. */
  readonly failedHosts: readonly string[];
  readonly failedHostCount: number;
  /** When the subscriber counted live that was seen longest ago was seen; null when none is live. */
  readonly oldestLiveSeenAt: number | null;
  readonly versions: ReadonlySet<string>;
}

/**
 * Subscribers an environment's judgement reads, those holding the rollout up first: enough to name
 * the failing hosts a description names, without naming the 80,000 of a large environment.
 */
const HOLDERS_READ = 100;

/**
 * The subject's state now; undefined when there is nothing left to judge it by — a source commit
 * no target's assignment names any more (its version was described again with another build).
 */
export async function judgeSubject(db: Kysely<HubDatabase>, subject: Subject, context: ReportContext, staleRecheckMs: number): Promise<Judgement | undefined> {
  const view = subject.kind === 'gitops' ? await environmentView(db, subject, context) : await sourceView(db, subject, context);
  if (view === undefined) return undefined;
  const state: CommitState = view.counts.failed > 0 ? 'failure' : view.settled ? 'success' : 'pending';
  const version = view.versions.size === 1 ? [...view.versions][0] : undefined;
  return {
    state,
    description: describeRollout({ counts: view.counts, state, version, failedHosts: view.failedHosts, failedHostCount: view.failedHostCount }),
    counts: { ...view.counts, settled: view.settled },
    dueAt: nextLook(view, context, staleRecheckMs),
  };
}

async function environmentView(db: Kysely<HubDatabase>, subject: Subject, context: ReportContext): Promise<GateView> {
  // Counts, failing hosts, versions and the longest silence are the gate's over every subscriber;
  // the page only names the first failing hosts.
  const gate = await environmentGateReport(db, context, subject.environment, subject.commit, { limit: HOLDERS_READ });
  const { total, succeeded, failed, inProgress, stale, settled, subscribers } = gate.answer;
  // Asked without answerOnly, the gate judges every subscriber and always has both; a count of the
  // page's failing hosts in their place would be a wrong number in a commit status.
  if (gate.failedHosts === undefined || gate.oldestLiveSeenAt === undefined) throw new Error('the environment gate was asked for its answer only');
  return {
    counts: { total, succeeded, failed, inProgress, stale },
    settled,
    failedHosts: failingHosts(subscribers),
    failedHostCount: gate.failedHosts,
    oldestLiveSeenAt: gate.oldestLiveSeenAt?.getTime() ?? null,
    versions: gate.versions,
  };
}

/** Each target's rollout of the version, by the endpoint gate; a subscriber pulled by two of them counts once. */
async function sourceView(db: Kysely<HubDatabase>, subject: Subject, context: ReportContext): Promise<GateView | undefined> {
  const rollouts = await sourceRollouts(db, subject);
  if (rollouts.length === 0) return undefined;
  const gates = await Promise.all(
    [...new Map(rollouts.map((rollout) => [`${rollout.endpoint}\u0000${rollout.commit}`, rollout])).values()].map((rollout) =>
      rolloutGateReport(db, context, rollout.endpoint, rollout.commit, { limit: undefined }),
    ),
  );
  const subscribers = [...new Map(gates.flatMap((gate) => gate.subscribers).map((subscriber) => [`${subscriber.host}\u0000${subscriber.reconciler}`, subscriber])).values()];
  const counts = emptyCounts();
  for (const subscriber of subscribers) addStatus(counts, subscriber.status);
  const live = subscribers.filter((subscriber) => subscriber.status !== 'stale').map((subscriber) => Date.parse(subscriber.lastSeenAt));
  const failedHosts = failingHosts(subscribers);
  return {
    counts,
    settled: counts.total > 0 && counts.inProgress === 0 && counts.stale === 0,
    failedHosts,
    failedHostCount: failedHosts.length,
    oldestLiveSeenAt: live.reduce<number | null>((oldest, seen) => (oldest === null || seen < oldest ? seen : oldest), null),
    versions: new Set(gates.flatMap((gate) => gate.targets.flatMap((target) => (target.version === null ? [] : [target.version])))),
  };
}

/**
 * When to look again though nothing is reported: when the first subscriber counted live falls
 * silent past stale-after; and, while one is stale, every `staleRecheckMs` — a silent one that
 * speaks again with the same state writes no transition, so no change marks the rollout.
 */
function nextLook(view: GateView, context: ReportContext, staleRecheckMs: number): Date | null {
  const times = [
    ...(view.oldestLiveSeenAt === null ? [] : [view.oldestLiveSeenAt + context.staleAfterMs + 1_000]),
    ...(view.counts.stale > 0 ? [context.asOf.getTime() + staleRecheckMs] : []),
  ];
  return times.length === 0 ? null : new Date(Math.min(...times));
}

/** Hosts with a failing subscriber, in the order listed. */
function failingHosts(subscribers: readonly { host: string; status: string }[]): string[] {
  return [...new Set(subscribers.filter((subscriber) => subscriber.status === 'failure').map((subscriber) => subscriber.host))];
}
