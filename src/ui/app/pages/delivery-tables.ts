// The Delivery page's tables: the hosts that keep rollouts waiting, and the newest rollouts with
// their own numbers (the ones the headline medians are made of).
import type { DeliveryRollout, DeliveryRolloutStatus, LaggingHost } from '../api.ts';
import { h } from '../dom.ts';
import { optionalDuration, shortCommit } from '../format.ts';
import { timeAgo } from '../times.ts';
import { rolloutHref } from '../url-state.ts';

// A rollout's status in the colours of a reconciler's: a superseded rollout is grey like a stale one.
const STATUS: Record<DeliveryRolloutStatus, [label: string, colour: string]> = {
  succeeded: ['succeeded', 'success'],
  failed: ['failed', 'failure'],
  in_progress: ['in progress', 'in_progress'],
  superseded: ['superseded', 'stale'],
  no_subscribers: ['no subscribers', 'stale'],
};

const hostLink = (host: string) => h('a', { href: `/hosts/${encodeURIComponent(host)}` }, host);

export function laggingHostsTable(hosts: LaggingHost[]): HTMLElement {
  return h(
    'table',
    { class: 'lagging stacking' },
    h('thead', {}, h('tr', {}, ['Host', 'Lagged in', 'Not converged', 'Median behind', 'Max behind'].map((title) => h('th', { scope: 'col' }, title)))),
    h(
      'tbody',
      {},
      hosts.map((entry) =>
        h(
          'tr',
          { 'data-host': entry.host },
          h('th', { scope: 'row' }, hostLink(entry.host)),
          h('td', { 'data-label': 'Lagged in', class: 'number' }, `${entry.lagged} rollout${entry.lagged === 1 ? '' : 's'}`),
          h('td', { 'data-label': 'Not converged', class: 'number' }, entry.notConverged),
          h('td', { 'data-label': 'Median behind', class: 'number' }, optionalDuration(entry.medianBehindSeconds)),
          h('td', { 'data-label': 'Max behind', class: 'number' }, optionalDuration(entry.maxBehindSeconds)),
        ),
      ),
    ),
  );
}

export function rolloutsTable(rollouts: DeliveryRollout[]): HTMLElement {
  return h(
    'table',
    { class: 'rollouts stacking' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['Assigned', 'Where', 'Version', 'Status', 'Hosts succeeded', 'Lead time first / last', 'Convergence 50 / 90 / 100 %', 'Restore', 'Lagging hosts'].map((title) =>
          h('th', { scope: 'col' }, title),
        ),
      ),
    ),
    h('tbody', {}, rollouts.map(rolloutRow)),
  );
}

function rolloutRow(rollout: DeliveryRollout): HTMLElement {
  return h(
    'tr',
    { 'data-environment': rollout.environment, 'data-workload': rollout.workload, 'data-version': rollout.version, 'data-status': rollout.status },
    h('td', { 'data-label': 'Assigned' }, timeAgo(rollout.assignedAt)),
    h('td', { 'data-label': 'Where' }, `${rollout.environment} / ${rollout.workload} / ${rollout.deploymentTarget}`, h('span', { class: 'muted' }, ` ${rollout.workspace} / ${rollout.application}`)),
    h(
      'td',
      { 'data-label': 'Version' },
      h(
        'a',
        { href: rolloutHref({ endpoint: rollout.manifestsEndpoint }, rollout.commit), class: 'rollout-link', title: `The rollout of ${rollout.commit}` },
        rollout.version,
        h('span', { class: 'muted' }, ` ${shortCommit(rollout.commit)}`),
      ),
    ),
    rolloutStatusCell(rollout),
    h('td', { 'data-label': 'Hosts succeeded', class: 'number' }, `${rollout.succeeded}/${rollout.subscribers}`, rollout.failed > 0 ? h('span', { class: 'error' }, ` · ${rollout.failed} failed`) : null),
    h('td', { 'data-label': 'Lead time first / last', class: 'lead-time' }, `${optionalDuration(rollout.leadTimeFirstHostSeconds)} / ${optionalDuration(rollout.leadTimeLastHostSeconds)}`),
    h(
      'td',
      { 'data-label': 'Convergence 50 / 90 / 100 %', class: 'convergence' },
      [rollout.convergence50Seconds, rollout.convergence90Seconds, rollout.convergence100Seconds].map(optionalDuration).join(' / '),
    ),
    h('td', { 'data-label': 'Restore', class: 'restore' }, optionalDuration(rollout.restoreSeconds)),
    h('td', { 'data-label': 'Lagging hosts', class: 'lagging-hosts' }, hostLinks(rollout.laggingHosts)),
  );
}

function rolloutStatusCell(rollout: DeliveryRollout): HTMLElement {
  const [label, colour] = STATUS[rollout.status];
  return h(
    'td',
    { 'data-label': 'Status' },
    h('span', { class: `badge ${colour}`, 'data-status': rollout.status }, label),
    // A rollout that ended well can still have been a change failure (a host failed on the way).
    rollout.changeFailure && rollout.status !== 'failed' ? [' ', h('span', { class: 'change-failure' }, 'change failure')] : null,
    // Converged once, and no longer succeeding everywhere: the status is today's, the numbers history's.
    rollout.regressedOn.length > 0 ? [' ', h('span', { class: 'regressed error' }, 'regressed on ', hostLinks(rollout.regressedOn))] : null,
  );
}

/** Links to the hosts, separated by commas. */
function hostLinks(hosts: readonly string[]): (HTMLElement | string)[] {
  return hosts.flatMap((host, index) => (index === 0 ? [hostLink(host)] : [', ', hostLink(host)]));
}
