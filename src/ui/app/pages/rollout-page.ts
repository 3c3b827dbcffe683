// Watch a rollout land: a commit of a manifests endpoint — or of an environment's GitOps branch, every
// deployment target of the environment (Check Promote) — and every subscriber's status, live
// (long-polling the rollout gate; the answer returns as soon as something changes or settles). The
// commit may be typed short, as the UI and the CLI show it: the hub resolves it.
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
  const environment = param('environment');
  const commit = param('commit');
  const content = h('div', { class: 'rollout', 'aria-live': 'polite' });
  replaceContent(
    root,
    h('h1', {}, 'Rollout'),
    filterForm('/rollout', [
      field('Environment', h('input', { name: 'environment', value: environment ?? '', size: 16, placeholder: 'dev' })),
      field('or manifests endpoint', h('input', { name: 'endpoint', value: endpoint ?? '', size: 60, placeholder: 'https://github.com/org/gitops/dev/target' })),
      field('Commit', h('input', { name: 'commit', value: commit ?? '', size: 42, placeholder: 'full id or 7+ hex digits' })),
    ]),
    content,
  );
  if ((endpoint === undefined) === (environment === undefined) || commit === undefined) {
    replaceContent(
      content,
      h('p', { class: 'muted' }, 'Name an environment (every deployment target of it) or one manifests endpoint, and a commit, to watch them roll out.'),
    );
    return { refresh: () => Promise.resolve() };
  }
  const scope = environment === undefined ? { manifestsEndpoint: endpoint! } : { environment };

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
      h(
        'p',
        { class: 'scope muted' },
        `Commit ${state.commit} `,
        state.environment === undefined ? `of ${state.manifestsEndpoint ?? ''}` : `in environment ${state.environment}: applied, or a later commit, everywhere`,
      ),
      statusBar(state),
      state.targets === undefined ? null : targetsTable(state.targets, state.commit),
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
              h('td', { title: subscriber.manifestsEndpoint ?? '' }, subscriber.reconciler),
              h('td', {}, statusBadge(subscriber.status)),
              h(
                'td',
                { title: subscriber.appliedCommit },
                shortCommit(subscriber.appliedCommit),
                subscriber.supersededBy === null ? null : h('span', { class: 'muted' }, ' (later)'),
              ),
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
        const state = await getJson<RolloutState>('/deployment-state', { ...scope, commit, wait: last === undefined ? '0s' : WAIT }, signal);
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

function targetsTable(targets: NonNullable<RolloutState['targets']>, commit: string): HTMLElement {
  return h(
    'table',
    { class: 'targets' },
    h('thead', {}, h('tr', {}, ['Workload', 'Target', 'Desired', 'Succeeded', 'Failed', 'In progress', 'Stale'].map((title) => h('th', { scope: 'col' }, title)))),
    h(
      'tbody',
      {},
      targets.map((target) =>
        h(
          'tr',
          { 'data-workload': target.workload, 'data-target': target.deploymentTarget },
          h('th', { scope: 'row', title: `${target.workspace} / ${target.application}` }, target.workload),
          h(
            'td',
            { title: target.manifestsEndpoint },
            h('a', { href: `/rollout?${new URLSearchParams({ endpoint: target.manifestsEndpoint, commit }).toString()}` }, target.deploymentTarget),
          ),
          h('td', { title: target.desiredCommit ?? '' }, target.desiredVersion ?? '—'),
          h('td', { class: 'number' }, `${target.succeeded}/${target.total}`),
          h('td', { class: 'number' }, target.failed),
          h('td', { class: 'number' }, target.inProgress),
          h('td', { class: 'number' }, target.stale),
        ),
      ),
    ),
  );
}
