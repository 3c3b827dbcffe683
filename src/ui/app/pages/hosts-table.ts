// The hosts page's parts: the totals line, the pager and the table.
import type { Host, HostsPage } from '../api.ts';
import { h } from '../dom.ts';
import { reconcilerKinds } from '../format.ts';
import { statusBar } from '../status-bar.ts';
import { href } from '../url-state.ts';
import { timeAgo } from '../times.ts';

/** The page's filters by query parameter name (absent: not filtered). */
export type HostFilters = Readonly<Record<string, string | undefined>>;

const count = (n: number): string => n.toLocaleString('en');

/** "1,600 hosts · 12 offline · 30 failing · 8 drifting" over every page; "40 of 1,600 hosts …" when filtered. */
export function hostsSummary(page: HostsPage, filters: HostFilters): HTMLElement {
  const { totals, fleet } = page;
  const filtered = Object.values(filters).some((value) => value !== undefined);
  const narrow = (query: Record<string, string>, n: number, label: string, name: string) =>
    h('a', { class: `total ${name}`, href: href('/hosts', { ...filters, ...query }), 'data-count': n }, `${count(n)} ${label}`);
  return h(
    'p',
    { class: 'host-totals' },
    h('strong', { class: 'total hosts', 'data-count': totals.hosts }, filtered ? `${count(totals.hosts)} of ${count(fleet.hosts)} hosts` : `${count(totals.hosts)} hosts`),
    ' · ',
    narrow({ offline: 'true' }, totals.offline, 'offline', 'offline'),
    ' · ',
    narrow({ status: 'failure' }, totals.failing, 'failing', 'failing'),
    ' · ',
    narrow({ drifting: 'true' }, totals.drifting, 'drifting', 'drifting'),
    filtered ? h('a', { class: 'clear', href: '/hosts' }, 'all hosts') : null,
  );
}

/** "showing 201–400 of 1,600", back to the first page and on to the next. */
export function hostsPager(tag: 'div' | 'nav', page: HostsPage, filters: HostFilters, cursor: string | undefined): HTMLElement {
  const first = page.offset + 1;
  const last = page.offset + page.items.length;
  return h(
    tag,
    { class: 'pager', ...(tag === 'nav' ? { 'aria-label': 'Pages of hosts' } : {}) },
    h('span', { class: 'showing' }, page.items.length === 0 ? 'showing none' : `showing ${count(first)}–${count(last)} of ${count(page.totals.hosts)}`),
    cursor === undefined ? null : h('a', { class: 'first', href: href('/hosts', filters) }, '« First page'),
    page.nextCursor === null ? null : h('a', { class: 'next', rel: 'next', href: href('/hosts', { ...filters, cursor: page.nextCursor }) }, 'Next page »'),
  );
}

// Secondary columns give way on narrow screens; the name, the status and the drift stay.
const COLUMNS: [title: string, className: string][] = [
  ['Host', 'name'],
  ['Reconcilers', 'status'],
  ['Drift', 'drift'],
  ['Environments', 'secondary'],
  ['Runs', 'secondary'],
  ['Type', 'secondary'],
  ['Last seen', 'secondary'],
];

export function hostsTable(hosts: readonly Host[]): HTMLElement {
  return h(
    'table',
    { class: 'hosts' },
    h('thead', {}, h('tr', {}, COLUMNS.map(([title, className]) => h('th', { scope: 'col', class: className }, title)))),
    h('tbody', {}, hosts.map(row)),
  );
}

function row(host: Host): HTMLElement {
  const classes = [host.stale ? 'offline' : '', host.drifting > 0 ? 'drifting' : ''].filter((name) => name !== '');
  return h(
    'tr',
    { class: classes.join(' '), 'data-host': host.name, 'data-drifting': host.drifting },
    h('th', { scope: 'row', class: 'name' }, h('a', { href: `/hosts/${encodeURIComponent(host.name)}` }, host.name), host.stale ? h('span', { class: 'badge stale' }, 'offline') : null),
    h('td', { class: 'status' }, statusBar(host.reconcilers, { numbers: true })),
    h(
      'td',
      { class: 'drift' },
      host.drifting > 0
        ? h('span', { class: 'badge drifting', title: `${host.drifting} of its reconcilers not on the desired rollout` }, `${host.drifting} drifting`)
        : h('span', { class: 'muted' }, 'none'),
    ),
    h('td', { class: 'secondary' }, host.environments.join(', ')),
    h('td', { class: 'secondary kinds', 'data-kinds': host.reconcilerTypes.join(' ') }, reconcilerKinds(host.reconcilerTypes)),
    h('td', { class: 'secondary' }, host.type),
    h('td', { class: 'secondary' }, timeAgo(host.lastSeenAt)),
  );
}
