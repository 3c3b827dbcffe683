// What is not where it should be — off the desired commit, failing, or silent — and since when.
import { apiGet, type Drift, type DriftTotals, type Environment } from '../api.ts';
import { h, replaceContent, updateContent } from '../dom.ts';
import { duration, exactTime } from '../format.ts';
import { field, filterForm, guarded, noDataYet, type Page } from '../page.ts';
import { rememberEnvironments } from '../remembered-environments.ts';
import { statusBadge } from '../status-bar.ts';
import { commitText } from '../times.ts';
import { href, param } from '../url-state.ts';

const REASONS: Record<Drift['reasons'][number], string> = {
  not_on_desired_commit: 'not on the desired commit',
  failing: 'failing',
  stale: 'silent (stale)',
};

const PAGE_SIZE = '200';

export function mountDrift(root: HTMLElement, signal: AbortSignal): Page {
  const environment = param('environment');
  const cursor = param('cursor');
  const environments = h('select', { name: 'environment' }, h('option', { value: '' }, 'all'));
  const content = h('div', { 'aria-busy': 'true' }, 'Loading…');
  replaceContent(root, h('h1', {}, 'Drift'), filterForm('/drift', [field('Environment', environments)]), content);
  return {
    refresh: () => {
      // The environments fill the filter when they come; the drift does not wait for them (their
      // counts take longer than a page of drift at fleet L) unless there is none to show.
      const known = apiGet('/environments', {}, {}, signal).then(({ items }) => items);
      void known.then((items) => {
        rememberEnvironments(items.map((entry) => entry.name));
        if (environments.options.length === 1) environments.append(...items.map((entry) => h('option', { value: entry.name, selected: entry.name === environment }, entry.name)));
      }, () => undefined);
      return guarded(content, signal, async () => {
        const { items, nextCursor, totals } = await apiGet('/drift', {}, { environment, cursor, limit: PAGE_SIZE }, signal);
        updateContent(
          content,
          totals.drifting === 0 ? null : summary(totals, items.length),
          items.length > 0 ? driftTable(items) : nothingDrifts(await known, environment),
          h(
            'nav',
            { class: 'pager', 'aria-label': 'Pages' },
            cursor === undefined ? null : h('a', { href: href('/drift', { environment }) }, '« First page'),
            nextCursor === null ? null : h('a', { href: href('/drift', { environment, cursor: nextCursor }), rel: 'next' }, 'Next page »'),
          ),
        );
      });
    },
  };
}

/** "All is well" only where something reports: an empty hub has nothing to be well. */
function nothingDrifts(known: readonly Environment[], environment: string | undefined): HTMLElement {
  const reporting = known.filter((entry) => environment === undefined || entry.name === environment).reduce((sum, entry) => sum + entry.reconcilers.total, 0);
  return reporting > 0
    ? h('p', { class: 'all-good' }, `Everything is where it should be: ${reporting} reconcilers on their desired rollouts, succeeding and reporting.`)
    : known.length > 0
      ? h('p', { class: 'muted' }, `No reconciler reports for ${environment ?? 'any environment'} yet: nothing to compare with what is desired.`)
      : noDataYet('reconcilers reporting');
}

function driftTable(items: Drift[]): HTMLElement {
  return h(
    'table',
    { class: 'drift stacking' },
    h('thead', {}, h('tr', {}, ['Host', 'Status', 'For', 'Where', 'Desired', 'Applied', 'Why'].map((title) => h('th', { scope: 'col' }, title)))),
    h(
      'tbody',
      {},
      items.map((entry) =>
        h(
          'tr',
          { 'data-host': entry.host, 'data-reasons': entry.reasons.join(' ') },
          h('th', { scope: 'row' }, h('a', { href: `/hosts/${encodeURIComponent(entry.host)}` }, entry.host), h('span', { class: 'muted' }, ` ${entry.reconciler}`)),
          h('td', { 'data-label': 'Status' }, statusBadge(entry.status), entry.statusMessage === '' ? null : h('p', { class: 'message' }, entry.statusMessage)),
          h('td', { 'data-label': 'For' }, h('time', { datetime: entry.driftingSince, title: `since ${exactTime(entry.driftingSince)}` }, duration(entry.driftingForSeconds))),
          h('td', { 'data-label': 'Where' }, `${entry.environment} / ${entry.workload} / ${entry.deploymentTarget}`),
          h('td', { 'data-label': 'Desired' }, entry.desiredVersion === null ? null : `${entry.desiredVersion} `, entry.desiredCommit === null ? '—' : commitText(entry.desiredCommit)),
          h('td', { 'data-label': 'Applied' }, entry.appliedVersion === null ? null : `${entry.appliedVersion} `, commitText(entry.appliedCommit)),
          h('td', { 'data-label': 'Why' }, entry.reasons.map((reason) => REASONS[reason]).join(', ')),
        ),
      ),
    ),
  );
}

/** The whole environment's (or fleet's) drift by reason, over every page. */
function summary(totals: DriftTotals, shown: number): HTMLElement {
  const n = (value: number) => value.toLocaleString('en');
  return h(
    'p',
    { class: 'count drift-totals' },
    `${n(totals.drifting)} drifting`,
    ` · ${n(totals.notOnDesiredCommit)} not on the desired rollout · ${n(totals.failing)} failing · ${n(totals.stale)} silent`,
    shown < totals.drifting ? h('span', { class: 'muted' }, ` (${n(shown)} on this page, longest first)`) : null,
  );
}
