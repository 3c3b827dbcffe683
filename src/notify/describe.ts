// A commit status's description: the counts of reconcilers as the rollout gate counts them, with
// the hosts that fail named — what a developer needs to read in the commit's status list, within
// the 140 characters GitHub allows. `12/12 reconcilers on 1.4.2`,
// `9/12 applied · 1 failed (aks-prod-03) · 2 in progress`.
import type { StatusCounts } from '../contract/answer-types.ts';
import type { CommitState } from './messages.ts';

export const MAX_DESCRIPTION = 140;
/** Failing hosts named before the rest are counted (`+3`). */
const HOSTS_NAMED = 2;

export interface DescribedRollout {
  readonly counts: StatusCounts;
  readonly state: CommitState;
  /** The version the commit runs, when it is one version everywhere. */
  readonly version: string | undefined;
  /** Hosts with a failing subscriber, in order: at least the first ones. */
  readonly failedHosts: readonly string[];
  /** Hosts with a failing subscriber in all, when failedHosts lists only the first (a large environment's). */
  readonly failedHostCount?: number | undefined;
}

export function describeRollout(rollout: DescribedRollout): string {
  const { counts } = rollout;
  if (counts.total === 0) return 'waiting for reconcilers to report';
  if (rollout.state === 'success') {
    return clip(`${counts.succeeded}/${counts.total} reconcilers ${rollout.version === undefined ? 'applied it' : `on ${rollout.version}`}`);
  }
  const parts = [`${counts.succeeded}/${counts.total} applied`];
  if (counts.failed > 0) parts.push(`${counts.failed} failed${hostList(rollout.failedHosts, rollout.failedHostCount ?? rollout.failedHosts.length)}`);
  if (counts.inProgress > 0) parts.push(`${counts.inProgress} in progress`);
  if (counts.stale > 0) parts.push(`${counts.stale} stale`);
  return clip(parts.join(' · '));
}

function hostList(hosts: readonly string[], count: number): string {
  if (hosts.length === 0) return '';
  const named = hosts.slice(0, HOSTS_NAMED);
  return ` (${named.join(', ')}${count > named.length ? ` +${count - named.length}` : ''})`;
}

/** Long host names or versions still fit: the end gives way. */
function clip(text: string): string {
  return [...text].length <= MAX_DESCRIPTION ? text : `${[...text].slice(0, MAX_DESCRIPTION - 1).join('')}…`;
}
