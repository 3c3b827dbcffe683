// Watch a rollout land: a commit of a manifests endpoint — or of an environment's GitOps branch, every
// deployment target of the environment (Check Promote) — and every subscriber's status, live
// (long-polling the rollout gate; the answer returns as soon as something changes or settles). The
// commit may be typed short, as the UI and the CLI show it: the hub resolves it.
import { apiGet, type RolloutState } from '../api.ts';
import { h, replaceContent, updateContent } from '../dom.ts';
import { field, filterForm, guarded, type Page } from '../page.ts';
import { recordRefresh, updatesPaused } from '../refresh-control.ts';
import { statusBadge, statusBar } from '../status-bar.ts';
import { commitText, timeAgo } from '../times.ts';
import { param, rolloutHref } from '../url-state.ts';

/** The gate answers within this wait when the rollout settles; otherwise the page asks again. */
const WAIT = '2s';
const SETTLED_POLL_MS = 5_000;

export function mountRollout(root: HTMLElement, signal: AbortSignal): Page {
  const endpoint = param('endpoint');
  const environment = param('environment');
  const commit = param('commit');
  const content = h('div', { class: 'rollout', 'aria-live': 'polite' });
  replaceContent(root, h('h1', {}, 'Rollout'), rolloutForm(endpoint, environment, commit), content);
  if ((endpoint === undefined) === (environment === undefined) || commit === undefined) {
    replaceContent(content, ...rolloutHelp());
    return { refresh: () => Promise.resolve(true) };
  }
  const scope = environment === undefined ? { manifestsEndpoint: endpoint! } : { environment };
  const watched: Watched = { last: undefined, lastOk: false };
  void watchRollout(content, { ...scope, commit }, signal, watched);
  // The watch keeps the page current; the periodic refresh only asks how it went.
  return { refresh: () => Promise.resolve(watched.lastOk) };
}

function rolloutForm(endpoint: string | undefined, environment: string | undefined, commit: string | undefined): HTMLElement {
  return filterForm('/rollout', [
    field('Environment', h('input', { name: 'environment', value: environment ?? '', size: 16, placeholder: 'dev' })),
    field('or manifests endpoint', h('input', { name: 'endpoint', value: endpoint ?? '', size: 60, placeholder: 'https://github.com/org/gitops/dev/target' })),
    field('Commit', h('input', { name: 'commit', value: commit ?? '', size: 42, placeholder: 'full id or 7+ hex digits' })),
  ]);
}

/** What the page says until it is told what to watch, and where rollouts can be found instead. */
function rolloutHelp(): HTMLElement[] {
  return [
    h('p', { class: 'muted' }, 'Name an environment (every deployment target of it) or one manifests endpoint, and a commit, to watch them roll out.'),
    h(
      'p',
      { class: 'muted' },
      'Or start from where the commits are: each cell of the ',
      h('a', { href: '/' }, 'Environments'),
      ' matrix links to the rollout of its desired commit, each environment to the rollout of its last merge (the promotion check), a host’s reconcilers to the rollouts of their commits, and ',
      h('a', { href: '/delivery' }, 'Delivery'),
      ' to those of recent rollouts.',
    ),
  ];
}

/** What the watch has seen: the answer shown last, and whether the last question was answered. */
interface Watched {
  last: RolloutState | undefined;
  lastOk: boolean;
}

/**
 * Each answer comes back at once when the rollout settles, else after WAIT; a settled rollout
 * is looked at less often (a new report can still change it).
 * While the reader pauses updates, the page stays as it is.
 */
async function watchRollout(
  content: HTMLElement,
  question: ({ manifestsEndpoint: string } | { environment: string }) & { commit: string },
  signal: AbortSignal,
  watched: Watched,
): Promise<void> {
  while (!signal.aborted) {
    if (updatesPaused() && watched.last !== undefined) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      continue;
    }
    try {
      const state = await apiGet('/deployment-state', {}, { ...question, wait: watched.last === undefined ? '0s' : WAIT }, signal);
      if (JSON.stringify(state) !== JSON.stringify(watched.last)) {
        watched.last = state;
        updateContent(content, ...rolloutView(state));
      }
      watched.lastOk = true;
      recordRefresh(true);
      if (state.settled) await new Promise((resolve) => setTimeout(resolve, SETTLED_POLL_MS));
    } catch (error) {
      if (signal.aborted) return;
      watched.lastOk = false;
      recordRefresh(false);
      await guarded(content, signal, () => Promise.reject(error instanceof Error ? error : new Error(String(error))));
      await new Promise((resolve) => setTimeout(resolve, 5_000));
    }
  }
}

/** The verdict, what is being watched, the status bar and the tables. */
function rolloutView(state: RolloutState): HTMLElement[] {
  return [
    h(
      'p',
      { class: `verdict ${state.failed > 0 ? 'failure' : state.settled ? 'success' : 'in_progress'}` },
      state.failed > 0 ? 'Failed' : state.settled ? 'Rolled out' : state.total === 0 ? 'No subscribers yet' : 'Rolling out…',
      ` — ${state.succeeded}/${state.total} succeeded, ${state.failed} failed, ${state.inProgress} in progress, ${state.stale} stale`,
    ),
    h(
      'p',
      { class: 'scope' },
      'Commit ',
      commitText(state.commit),
      'environment' in state
        ? [` in environment ${state.environment}: applied, or a later commit, by every reconciler of its targets `, h('span', { class: 'muted' }, '(the promotion check)')]
        : [' of ', h('span', { class: 'endpoint' }, state.manifestsEndpoint), ': applied, or a later commit of its branch, by every reconciler that pulls it'],
    ),
    statusBar(state),
    targetsTable(state.targets, state.commit, !('environment' in state)),
    ...subscribersTable(state.subscribers),
  ];
}

/** Subscribers listed at most; an environment of a large fleet has tens of thousands. */
const LISTED = 200;
/** Who holds the rollout up comes first: failing, then in progress, then silent. */
const ORDER: Record<RolloutState['subscribers'][number]['status'], number> = { failure: 0, in_progress: 1, stale: 2, success: 3 };

function subscribersTable(subscribers: RolloutState['subscribers']): HTMLElement[] {
  const listed = [...subscribers].sort((a, b) => ORDER[a.status] - ORDER[b.status]).slice(0, LISTED);
  const unlisted = subscribers.length - listed.length;
  const table = h(
    'table',
    { class: 'subscribers stacking' },
    h('thead', {}, h('tr', {}, ['Host', 'Status', 'Reconciler', 'Applied', 'Since', 'Message'].map((title) => h('th', { scope: 'col' }, title)))),
    h(
      'tbody',
      {},
      listed.map((subscriber) =>
        h(
          'tr',
          { 'data-host': subscriber.host, 'data-status': subscriber.status },
          h('th', { scope: 'row' }, h('a', { href: `/hosts/${encodeURIComponent(subscriber.host)}` }, subscriber.host)),
          h('td', { 'data-label': 'Status' }, statusBadge(subscriber.status)),
          h('td', { 'data-label': 'Reconciler', title: 'manifestsEndpoint' in subscriber ? subscriber.manifestsEndpoint : '' }, subscriber.reconciler),
          h('td', { 'data-label': 'Applied' }, commitText(subscriber.appliedCommit), subscriber.supersededBy === null ? null : h('span', { class: 'muted' }, ' (later)')),
          h('td', { 'data-label': 'Since' }, timeAgo(subscriber.observedAt)),
          h('td', { 'data-label': 'Message', class: 'message' }, subscriber.statusMessage),
        ),
      ),
    ),
  );
  if (unlisted === 0) return [table];
  const succeeded = subscribers.filter((subscriber) => subscriber.status === 'success').length;
  return [
    h('p', { class: 'muted unlisted' }, `Showing ${LISTED} of ${subscribers.length.toLocaleString('en')} subscribers, those holding the rollout up first (${succeeded.toLocaleString('en')} succeeded).`),
    table,
  ];
}

/** What the commit is to the people who follow it: per target, the version it runs there. */
function targetsTable(targets: RolloutState['targets'], commit: string, onEndpoint: boolean): HTMLElement {
  if (targets.length === 0) return h('p', { class: 'muted' }, 'No deployment target is known for it yet.');
  return h(
    'table',
    { class: 'targets stacking' },
    h(
      'thead',
      {},
      h('tr', {}, ['Environment', 'Workload', 'Target', 'Version', 'Desired now', 'Succeeded', 'Failed', 'In progress', 'Stale', 'Manifests endpoint'].map((title) => h('th', { scope: 'col' }, title))),
    ),
    h(
      'tbody',
      {},
      targets.map((target) =>
        h(
          'tr',
          { 'data-workload': target.workload, 'data-target': target.deploymentTarget, 'data-environment': target.environment },
          h('th', { scope: 'row' }, target.environment),
          h('td', { 'data-label': 'Workload', title: `${target.workspace} / ${target.application}` }, target.workload),
          h(
            'td',
            { 'data-label': 'Target' },
            // On the environment view, each target opens its own endpoint's rollout.
            onEndpoint ? target.deploymentTarget : h('a', { href: rolloutHref({ endpoint: target.manifestsEndpoint }, commit) }, target.deploymentTarget),
          ),
          h('td', { 'data-label': 'Version', class: 'version' }, target.version ?? '—'),
          h('td', { 'data-label': 'Desired now' }, target.desiredVersion ?? '—', target.desiredCommit === null ? null : [' @', commitText(target.desiredCommit)]),
          h('td', { 'data-label': 'Succeeded', class: 'number' }, `${target.succeeded}/${target.total}`),
          h('td', { 'data-label': 'Failed', class: 'number' }, target.failed),
          h('td', { 'data-label': 'In progress', class: 'number' }, target.inProgress),
          h('td', { 'data-label': 'Stale', class: 'number' }, target.stale),
          h('td', { 'data-label': 'Endpoint', class: 'endpoint' }, target.manifestsEndpoint),
        ),
      ),
    ),
  );
}
