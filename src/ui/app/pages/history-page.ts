// A timeline of state transitions, for an environment, a workload, a target or a host.
import { apiGet, type HistoryItem } from '../api.ts';
import { h, replaceContent, updateContent } from '../dom.ts';
import { field, filterForm, guarded, noDataYet, type Page } from '../page.ts';
import { statusBadge } from '../status-bar.ts';
import { commitText, timeExact } from '../times.ts';
import { param } from '../url-state.ts';

const FILTERS = ['environment', 'workload', 'deploymentTarget', 'host'] as const;
const LABELS: Record<(typeof FILTERS)[number], string> = {
  environment: 'Environment',
  workload: 'Workload',
  deploymentTarget: 'Target',
  host: 'Host',
};

export function mountHistory(root: HTMLElement, signal: AbortSignal): Page {
  const filters = Object.fromEntries(FILTERS.map((name) => [name, param(name)]));
  const list = h('ol', { class: 'timeline', 'aria-busy': 'true' });
  const more = h('button', { type: 'button', class: 'more', hidden: true }, 'Older transitions');
  let nextCursor: string | null = null;
  let extended = false;

  const load = async (cursor: string | undefined): Promise<void> => {
    const page = await apiGet('/history', {}, { ...filters, cursor, limit: '100' }, signal);
    const items = page.items.map(item);
    if (cursor !== undefined) list.append(...items);
    else if (items.length > 0) updateContent(list, items);
    else if (Object.values(filters).some((value) => value !== undefined)) updateContent(list, h('li', { class: 'muted' }, 'No transitions match.'));
    else updateContent(list, h('li', {}, noDataYet('transitions')));
    nextCursor = page.nextCursor;
    more.hidden = nextCursor === null;
  };
  more.addEventListener('click', () => {
    if (nextCursor === null) return;
    extended = true;
    void guarded(list, signal, () => load(nextCursor ?? undefined));
  });

  replaceContent(
    root,
    h('h1', {}, 'History'),
    filterForm(
      '/history',
      FILTERS.map((name) => field(LABELS[name], h('input', { name, value: filters[name] ?? '' }))),
    ),
    list,
    more,
  );
  return {
    // Refreshing the first page would drop the older pages a reader asked for.
    refresh: () => (extended ? Promise.resolve(true) : guarded(list, signal, () => load(undefined))),
  };
}

function item(entry: HistoryItem): HTMLElement {
  return h(
    'li',
    { class: `transition ${entry.status}`, 'data-status': entry.status },
    timeExact(entry.observedAt),
    statusBadge(entry.status),
    h('span', { class: 'where' }, h('a', { href: `/hosts/${encodeURIComponent(entry.host)}` }, entry.host), ` · ${entry.reconciler}`),
    entry.environment === null ? null : h('span', { class: 'target' }, `${entry.environment} / ${entry.workload ?? ''} / ${entry.deploymentTarget ?? ''}`),
    h('span', { class: 'version' }, entry.version === null ? null : `${entry.version} `, commitText(entry.commit)),
    entry.statusMessage === '' ? null : h('p', { class: 'message' }, entry.statusMessage),
  );
}
