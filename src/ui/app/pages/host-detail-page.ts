// One host: every reconciler on it, what it deployed where, and its status.
import { getJson, type HostReconciler } from '../api.ts';
import { h, replaceContent } from '../dom.ts';
import { ago, shortCommit } from '../format.ts';
import { guarded, type Page } from '../page.ts';
import { statusBadge } from '../status-bar.ts';
import { href } from '../url-state.ts';

interface HostState {
  name: string;
  type: string;
  lastSeenAt: string;
  stale: boolean;
  reconcilers: HostReconciler[];
}

export function mountHostDetail(root: HTMLElement, signal: AbortSignal, name: string): Page {
  const content = h('div', { 'aria-busy': 'true' }, 'Loading…');
  replaceContent(
    root,
    h('p', {}, h('a', { href: '/hosts' }, '« All hosts')),
    h('h1', {}, 'Host ', h('span', { class: 'host-name' }, name)),
    h('p', {}, h('a', { href: href('/history', { host: name }), class: 'history-link' }, 'History of this host')),
    content,
  );
  return {
    refresh: () =>
      guarded(content, signal, async () => {
        const host = await getJson<HostState>(`/hosts/${encodeURIComponent(name)}/state`, {}, signal);
        replaceContent(
          content,
          h('p', {}, `${host.type} · last seen ${ago(host.lastSeenAt)}`, host.stale ? h('span', { class: 'badge stale' }, 'offline') : null),
          h(
            'table',
            { class: 'reconcilers' },
            h(
              'thead',
              {},
              h('tr', {}, ['Reconciler', 'Deployment target', 'Deployed', 'Desired', 'Commit', 'Status', 'Since', 'Message'].map((title) => h('th', { scope: 'col' }, title))),
            ),
            h(
              'tbody',
              {},
              host.reconcilers.map((reconciler) => {
                const target = reconciler.deploymentTargets[0];
                return h(
                  'tr',
                  { 'data-reconciler': reconciler.reconciler },
                  h('th', { scope: 'row' }, reconciler.reconciler, h('span', { class: 'muted' }, ` (${reconciler.type})`)),
                  h('td', {}, target === undefined ? h('span', { class: 'muted', title: reconciler.manifestsEndpoint }, 'no known target') : `${target.environment} / ${target.workload} / ${target.deploymentTarget}`),
                  h('td', { class: 'deployed-version' }, target?.deployedVersion ?? '—'),
                  h('td', {}, target?.desiredVersion ?? '—'),
                  h('td', { title: reconciler.commit }, shortCommit(reconciler.commit)),
                  h('td', {}, statusBadge(reconciler.status)),
                  h('td', { title: reconciler.deployedAt }, ago(reconciler.deployedAt)),
                  h('td', { class: 'message' }, reconciler.statusMessage),
                );
              }),
            ),
          ),
        );
      }),
  };
}
