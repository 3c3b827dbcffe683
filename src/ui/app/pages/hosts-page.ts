// Every host, in natural order of names, a page at a time: the fleet's totals (not the page's),
// each host's reconcilers by status with their numbers, its drift, and when it was last seen.
// Offline and drifting hosts stand out. Filters and the page live in the URL.
import { apiGet } from '../api.ts';
import { h, replaceContent, updateContent } from '../dom.ts';
import { field, filterForm, guarded, noDataYet, type Page } from '../page.ts';
import { rememberEnvironments } from '../remembered-environments.ts';
import { STATUS_LABEL } from '../status-bar.ts';
import { param } from '../url-state.ts';
import { type HostFilters, hostsPager, hostsSummary, hostsTable } from './hosts-table.ts';

const PAGE_SIZE = '200';

/** The filters the page reads from its URL; the cursor is the page, not a filter. */
const HOST_FILTERS = ['q', 'environment', 'status', 'offline', 'drifting'] as const;

function choice(name: string, selected: string | undefined, options: [value: string, label: string][]): HTMLSelectElement {
  return h('select', { name }, options.map(([value, label]) => h('option', { value, selected: value === (selected ?? '') }, label)));
}

export function mountHosts(root: HTMLElement, signal: AbortSignal): Page {
  const filters: HostFilters = Object.fromEntries(HOST_FILTERS.map((name) => [name, param(name)]));
  const cursor = param('cursor');
  const environments = choice('environment', undefined, [['', 'all']]);
  const statuses: [string, string][] = (['failure', 'in_progress', 'stale', 'success'] as const).map((value) => [value, STATUS_LABEL[value]]);
  const content = h('div', { 'aria-busy': 'true' }, 'Loading…');
  replaceContent(
    root,
    h('h1', {}, 'Hosts'),
    filterForm('/hosts', [
      field('Name contains', h('input', { type: 'search', name: 'q', value: filters.q ?? '', placeholder: 'e.g. aks-dev', autocomplete: 'off' })),
      field('Environment', environments),
      field('With a reconciler', choice('status', filters.status, [['', 'any'], ...statuses])),
      field('Offline', choice('offline', filters.offline, [['', 'any'], ['true', 'offline'], ['false', 'online']])),
      field('Drift', choice('drifting', filters.drifting, [['', 'any'], ['true', 'drifting'], ['false', 'not drifting']])),
    ]),
    content,
  );

  // The environment filter's choices arrive on their own: the hosts do not wait for the environments'
  // counts, which take longer than a page of hosts at fleet L. The chosen one is offered at once.
  if (filters.environment !== undefined) environments.append(h('option', { value: filters.environment, selected: true }, filters.environment));
  let offered = false;
  const offerEnvironments = (names: readonly string[]): void => {
    if (offered) return;
    offered = true;
    rememberEnvironments(names);
    // In promotion order, keeping what is chosen (perhaps by the person meanwhile).
    const chosen = environments.value;
    while (environments.options.length > 1) environments.remove(1);
    environments.append(...names.map((name) => h('option', { value: name, selected: name === chosen }, name)));
  };

  return {
    refresh: () => {
      // Asked until they came; a failure leaves the filter offering what it has (the hosts' own failure is shown).
      if (!offered) void apiGet('/environments', {}, {}, signal).then(({ items }) => offerEnvironments(items.map((entry) => entry.name)), () => undefined);
      return guarded(content, signal, async () => {
        const page = await apiGet('/hosts', {}, { ...filters, cursor, limit: PAGE_SIZE }, signal);
        if (page.fleet.hosts === 0) {
          updateContent(content, noDataYet('hosts'));
          return;
        }
        updateContent(
          content,
          hostsSummary(page, filters),
          hostsPager('div', page, filters, cursor),
          page.items.length === 0 ? h('p', { class: 'muted' }, 'No hosts match.') : hostsTable(page.items),
          page.items.length === 0 ? null : hostsPager('nav', page, filters, cursor),
        );
      });
    },
  };
}
