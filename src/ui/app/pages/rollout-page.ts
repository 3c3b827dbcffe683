// Watch a rollout land: a manifests endpoint and a commit, and every subscriber's status, live
// (long-polling the rollout gate; the answer returns as soon as something changes or settles).
import { getJson, type RolloutState } from '../api.ts';
import { h, replaceContent } from '../dom.ts';
import { ago, shortCommit } from '../format.ts';
import { field, filterForm, guarded, type Page } from '../page.ts';
import { statusBadge, statusBar } from '../status-bar.ts';
import { param } from '../url-state.ts';

/** The gate answers within this wait when the rollout settles; otherwise the page asks again. */
const WAIT = '2s';
const SETTLED_POLL_MS = 5_000;

export function mountRollout(root: HTMLElement, signal: AbortSignal): Page {
  const endpoint = param('endpoint');
  const commit = param('commit');
  const content = h('div', { class: 'rollout', 'aria-live': 'polite' });
  replaceContent(
    root,
    h('h1', {}, 'Rollout'),
    filterForm('/rollout', [
      field('Manifests endpoint', h('input', { name: 'endpoint', value: endpoint ?? '', size: 60, placeholder: 'https://github.com/org/gitops/dev/target' })),
      field('Commit', h('input', { name: 'commit', value: commit ?? '', size: 42 })),
    ]),
    content,
  );
  if (endpoint === undefined || commit === undefined) {
    replaceContent(content, h('p', { class: 'muted' }, 'Name a manifests endpoint and a commit to watch them roll out.'));
    return { refresh: () => Promise.resolve() };
  }

  let last: RolloutState | undefined;
  const render = (state: RolloutState): void => {
    last = state;
    replaceContent(
      content,
      h(
        'p',
        { class: `verdict ${state.failed > 0 ? 'failure' : state.settled ? 'success' : 'in_progress'}` },
        state.failed > 0 ? 'Failed' : state.settled ? 'Rolled out' : state.total === 0 ? 'No subscribers yet' : 'Rolling out…',
        ` — ${state.succeeded}/${state.total} succeeded, ${state.failed} failed, ${state.inProgress} in progress, ${state.stale} stale`,
      ),
      statusBar(state),
      h(
        'table',
        { class: 'subscribers' },
        h('thead', {}, h('tr', {}, ['Host', 'Reconciler', 'Status', 'Applied', 'Since', 'Message'].map((title) => h('th', { scope: 'col' }, title)))),
        h(
          'tbody',
          {},
          state.subscribers.map((subscriber) =>
            h(
              'tr',
              { 'data-host': subscriber.host, 'data-status': subscriber.status },
              h('th', { scope: 'row' }, h('a', { href: `/hosts/${encodeURIComponent(subscriber.host)}` }, subscriber.host)),
              h('td', {}, subscriber.reconciler),
              h('td', {}, statusBadge(subscriber.status)),
              h('td', { title: subscriber.appliedCommit }, shortCommit(subscriber.appliedCommit)),
              h('td', { title: subscriber.observedAt }, ago(subscriber.observedAt)),
              h('td', { class: 'message' }, subscriber.statusMessage),
            ),
          ),
        ),
      ),
    );
  };

  // Each answer comes back at once when the rollout settles, else after WAIT; a settled rollout
  // is looked at less often (a new report can still change it).
  const watch = async (): Promise<void> => {
    while (!signal.aborted) {
      try {
        const state = await getJson<RolloutState>('/deployment-state', { manifestsEndpoint: endpoint, commit, wait: last === undefined ? '0s' : WAIT }, signal);
        if (JSON.stringify(state) !== JSON.stringify(last)) render(state);
        if (state.settled) await new Promise((resolve) => setTimeout(resolve, SETTLED_POLL_MS));
      } catch (error) {
        if (signal.aborted) return;
        await guarded(content, signal, () => Promise.reject(error instanceof Error ? error : new Error(String(error))));
        await new Promise((resolve) => setTimeout(resolve, 5_000));
      }
    }
  };
  void watch();
  return { refresh: () => Promise.resolve() };
}
