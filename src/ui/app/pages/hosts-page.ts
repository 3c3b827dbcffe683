// Every host with its reconcilers' status and when it was last seen; offline hosts stand out.
import { type Environment, getJson, type Host } from '../api.ts';
import { h, replaceContent } from '../dom.ts';
import { ago } from '../format.ts';
import { field, filterForm, guarded, type Page } from '../page.ts';
import { STATUS_LABEL, statusBar } from '../status-bar.ts';
import { href, param } from '../url-state.ts';

export function mountHosts(root: HTMLElement, signal: AbortSignal): Page {
  const environment = param('environment');
  const status = param('status');
  const cursor = param('cursor');
  const environments = h('select', { name: 'environment' }, h('option', { value: '' }, 'all'));
  const statuses = h(
    'select',
    { name: 'status' },
    h('option', { value: '' }, 'any'),
    (['failure', 'in_progress', 'stale', 'success'] as const).map((value) => h('option', { value, selected: value === status }, STATUS_LABEL[value])),
  );
  const content = h('div', { 'aria-busy': 'true' }, 'Loading…');
  replaceContent(
    root,
    h('h1', {}, 'Hosts'),
    filterForm('/hosts', [field('Environment', environments), field('With a reconciler', statuses)]),
    content,
  );

  return {
    refresh: () =>
      guarded(content, signal, async () => {
        const [{ items: known }, page] = await Promise.all([
          getJson<{ items: Environment[] }>('/environments', {}, signal),
          getJson<{ items: Host[]; nextCursor: string | null }>('/hosts', { environment, status, cursor, limit: '200' }, signal),
        ]);
        if (environments.options.length === 1) {
          environments.append(...known.map((entry) => h('option', { value: entry.name, selected: entry.name === environment }, entry.name)));
        }
        const offline = page.items.filter((host) => host.stale).length;
        replaceContent(
          content,
          h('p', { class: 'count' }, `${page.items.length} hosts`, offline > 0 ? h('span', { class: 'badge stale' }, `${offline} offline`) : null),
          h(
            'table',
            { class: 'hosts' },
            h('thead', {}, h('tr', {}, ['Host', 'Type', 'Environments', 'Reconcilers', 'Last seen'].map((title) => h('th', { scope: 'col' }, title)))),
            h(
              'tbody',
              {},
              page.items.map((host) =>
                h(
                  'tr',
                  { class: host.stale ? 'offline' : '', 'data-host': host.name },
                  h('th', { scope: 'row' }, h('a', { href: `/hosts/${encodeURIComponent(host.name)}` }, host.name), host.stale ? h('span', { class: 'badge stale' }, 'offline') : null),
                  h('td', {}, host.type),
                  h('td', {}, host.environments.join(', ')),
                  h('td', {}, statusBar(host.reconcilers)),
                  h('td', { title: host.lastSeenAt }, ago(host.lastSeenAt)),
                ),
              ),
            ),
          ),
          page.nextCursor === null ? null : h('nav', { class: 'pager' }, h('a', { href: href('/hosts', { environment, status, cursor: page.nextCursor }) }, 'Next page »')),
        );
      }),
  };
}
