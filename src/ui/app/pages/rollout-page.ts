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
import { href, param, rolloutHref } from '../url-state.ts';

/** The gate answers within this wait when the rollout settles; otherwise the page asks again. */
const WAIT = '2s';
const SETTLED_POLL_MS = 5_000;
/**
 * Subscribers and targets per page. The hub names only the page's rows, and the page draws only
 * them: an environment of a large fleet has 80,000 subscribers and 4,000 targets (9.7 s to
 * content when the page asked for and sorted every one). A hundred of each: the holders a person
 * reads first; drawing two tables of 200 rows was one 211 ms frame (130 ms of it style and layout)
 * of the page's 530 ms to content at fleet L (447 ms with 100; docs/benchmarks/fleet-l-part7.md).
 */
const LISTED = 100;

/** The rollout asked about, and which page of its subscribers and targets (the URL's cursors). */
type Question = ({ manifestsEndpoint: string } | { environment: string }) & { commit: string; cursor?: string; targetsCursor?: string };

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
  const cursors = { cursor: param('cursor'), targetsCursor: param('targetsCursor') };
  const watched: Watched = { last: undefined, lastOk: false };
  void watchRollout(content, { ...scope, commit, ...cursors }, signal, watched);
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
async function watchRollout(content: HTMLElement, question: Question, signal: AbortSignal, watched: Watched): Promise<void> {
  while (!signal.aborted) {
    if (updatesPaused() && watched.last !== undefined) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      continue;
    }
    try {
      const state = await apiGet('/deployment-state', {}, { ...question, limit: String(LISTED), wait: watched.last === undefined ? '0s' : WAIT }, signal);
      if (JSON.stringify(state) !== JSON.stringify(watched.last)) {
        watched.last = state;
        updateContent(content, ...rolloutView(state, question));
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

/** The verdict, what is being watched, the status bar and the tables with their pagers. */
function rolloutView(state: RolloutState, question: Question): (HTMLElement | null)[] {
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
    ...('environment' in state
      ? [pager('targets', state.targets.length, state.targetsTotal, question, 'targetsCursor', state.nextTargetsCursor)]
      : []),
    targetsTable(state.targets, state.commit, !('environment' in state)),
    pager('subscribers', state.subscribers.length, state.total, question, 'cursor', state.nextCursor),
    subscribersTable(state.subscribers),
  ];
}

/**
 * "Showing 100 of 80,000 subscribers, those holding the rollout up first", back to the first page
 * and on to the next: the page's URL carries the cursors, so a page can be shared and reloaded.
 */
function pager(
  what: 'subscribers' | 'targets',
  shown: number,
  total: number,
  question: Question,
  cursorName: 'cursor' | 'targetsCursor',
  next: string | null,
): HTMLElement | null {
  const paged = question[cursorName] !== undefined;
  if (!paged && next === null) return null;
  const at = (cursor: string | undefined): string =>
    href('/rollout', {
      ...('environment' in question ? { environment: question.environment } : { endpoint: question.manifestsEndpoint }),
      commit: question.commit,
      cursor: question.cursor,
      targetsCursor: question.targetsCursor,
      [cursorName]: cursor,
    });
  return h(
    'div',
    { class: `pager ${what}` },
    h('span', { class: 'showing muted' }, `Showing ${shown.toLocaleString('en')} of ${total.toLocaleString('en')} ${what}, those holding the rollout up first${paged ? ' (a later page)' : ''}`),
    paged ? h('a', { class: 'first', href: at(undefined) }, '« First page') : null,
    next === null ? null : h('a', { class: 'next', rel: 'next', href: at(next) }, `Next ${LISTED} ${what} »`),
  );
}

/** The hub's page of subscribers, in its order: those holding the rollout up first. */
function subscribersTable(subscribers: RolloutState['subscribers']): HTMLElement {
  return h(
    'table',
    { class: 'subscribers stacking' },
    h('thead', {}, h('tr', {}, ['Host', 'Status', 'Reconciler', 'Applied', 'Since', 'Message'].map((title) => h('th', { scope: 'col' }, title)))),
    h(
      'tbody',
      {},
      subscribers.map((subscriber) =>
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
