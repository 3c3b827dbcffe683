// One host: every reconciler on it — where it pulls from, what it deployed against what is
// desired, its status, a link to the rollout of its commit — and the host's recent history.
import { apiGet, type HistoryItem, type HostReconciler } from '../api.ts';
import { h, replaceContent, updateContent } from '../dom.ts';
import { reconcilerKind, reconcilerKinds } from '../format.ts';
import { guarded, type Page } from '../page.ts';
import { statusBadge } from '../status-bar.ts';
import { commitText, timeAgo, timeExact } from '../times.ts';
import { href, rolloutHref } from '../url-state.ts';

/** Transitions shown inline; the History view has the rest. */
const RECENT = 10;

export function mountHostDetail(root: HTMLElement, signal: AbortSignal, name: string): Page {
  const content = h('div', { 'aria-busy': 'true' }, 'Loading…');
  replaceContent(root, h('p', {}, h('a', { href: '/hosts' }, '« All hosts')), h('h1', {}, 'Host ', h('span', { class: 'host-name' }, name)), content);
  return {
    refresh: () =>
      guarded(content, signal, async () => {
        const [host, recent] = await Promise.all([
          apiGet('/hosts/{host}/state', { host: name }, {}, signal),
          apiGet('/history', {}, { host: name, limit: String(RECENT) }, signal),
        ]);
        updateContent(
          content,
          h('p', {}, `${host.type} · ${kindsOf(host.reconcilers)}last seen `, timeAgo(host.lastSeenAt), host.stale ? h('span', { class: 'badge stale' }, 'offline') : null),
          h('h2', {}, 'Reconcilers'),
          host.reconcilers.length === 0 ? h('p', { class: 'muted' }, 'No reconcilers on this host.') : reconcilersTable(host.reconcilers),
          h('h2', {}, 'Recent history'),
          recentHistory(recent.items),
          h('p', {}, h('a', { href: href('/history', { host: name }), class: 'history-link' }, recent.nextCursor === null ? 'This host in the History view' : 'Older transitions in the History view')),
        );
      }),
  };
}

function reconcilersTable(reconcilers: HostReconciler[]): HTMLElement {
  return h(
    'table',
    { class: 'reconcilers stacking' },
    h(
      'thead',
      {},
      h('tr', {}, ['Reconciler', 'Status', 'Deployment target', 'Deployed', 'Desired', 'Commit', 'Since', 'Manifests endpoint', 'Message'].map((title) => h('th', { scope: 'col' }, title))),
    ),
    h(
      'tbody',
      {},
      reconcilers.map((reconciler) => {
        const target = reconciler.deploymentTargets[0];
        // Off the desired rollout: neither the desired commit nor a commit that runs the desired version.
        const offDesired =
          target !== undefined &&
          target.desiredCommit !== null &&
          reconciler.commit !== target.desiredCommit &&
          (target.deployedVersion === null || target.deployedVersion !== target.desiredVersion);
        return h(
          'tr',
          { 'data-reconciler': reconciler.reconciler, class: offDesired ? 'off-desired' : '' },
          h('th', { scope: 'row' }, reconciler.reconciler, h('span', { class: 'muted kind', 'data-kind': reconciler.type }, ` (${reconcilerKind(reconciler.type)})`)),
          h('td', { 'data-label': 'Status' }, statusBadge(reconciler.status), argoCdState(reconciler)),
          h(
            'td',
            { 'data-label': 'Target' },
            target === undefined ? h('span', { class: 'muted' }, 'no known target') : `${target.environment} / ${target.workload} / ${target.deploymentTarget}`,
          ),
          h('td', { 'data-label': 'Deployed', class: 'deployed-version' }, target?.deployedVersion ?? '—'),
          h(
            'td',
            { 'data-label': 'Desired', class: 'desired-version' },
            target?.desiredVersion ?? '—',
            offDesired ? h('span', { class: 'badge drifting' }, 'not desired') : null,
          ),
          h('td', { 'data-label': 'Commit' }, h('a', { href: rolloutHref({ endpoint: reconciler.manifestsEndpoint }, reconciler.commit), class: 'rollout-link', title: 'The rollout of this commit' }, commitText(reconciler.commit))),
          h('td', { 'data-label': 'Since' }, timeAgo(reconciler.deployedAt)),
          h('td', { 'data-label': 'Endpoint', class: 'endpoint' }, reconciler.manifestsEndpoint),
          h('td', { 'data-label': 'Message', class: 'message' }, reconciler.statusMessage),
        );
      }),
    ),
  );
}

/** "Flux, Argo CD · ": the kinds of reconciler on the host. */
function kindsOf(reconcilers: readonly HostReconciler[]): string {
  return reconcilers.length === 0 ? '' : `${reconcilerKinds(reconcilers.map((reconciler) => reconciler.type))} · `;
}

/** An Argo CD application's own words under its status: "Synced · Healthy", the last operation's phase on hover. */
function argoCdState(reconciler: HostReconciler): HTMLElement | null {
  const { argocd } = reconciler;
  if (argocd === null) return null;
  return h(
    'span',
    { class: 'argocd-state', 'data-sync': argocd.sync, 'data-health': argocd.health, title: `Argo CD: sync ${argocd.sync}, health ${argocd.health}, last operation ${argocd.operation ?? 'none'}` },
    `${argocd.sync} · ${argocd.health}`,
  );
}

function recentHistory(items: HistoryItem[]): HTMLElement {
  if (items.length === 0) return h('p', { class: 'muted' }, 'No transitions recorded.');
  return h(
    'ol',
    { class: 'timeline recent' },
    items.map((item) =>
      h(
        'li',
        { class: `transition ${item.status}`, 'data-status': item.status },
        timeExact(item.observedAt),
        statusBadge(item.status),
        h('span', { class: 'where' }, item.reconciler),
        item.environment === null ? null : h('span', { class: 'target' }, `${item.environment} / ${item.workload ?? ''} / ${item.deploymentTarget ?? ''}`),
        h('span', { class: 'version' }, item.version ?? commitText(item.commit)),
        item.statusMessage === '' ? null : h('p', { class: 'message' }, item.statusMessage),
      ),
    ),
  );
}
