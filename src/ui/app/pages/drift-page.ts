// What is not where it should be — off the desired commit, failing, or silent — and since when.
import { type Drift, type Environment, getJson } from '../api.ts';
import { h, replaceContent } from '../dom.ts';
import { duration, shortCommit } from '../format.ts';
import { field, filterForm, guarded, type Page } from '../page.ts';
import { statusBadge } from '../status-bar.ts';
import { param } from '../url-state.ts';

const REASONS: Record<Drift['reasons'][number], string> = {
  not_on_desired_commit: 'not on the desired commit',
  failing: 'failing',
  stale: 'silent (stale)',
};

export function mountDrift(root: HTMLElement, signal: AbortSignal): Page {
  const environment = param('environment');
  const environments = h('select', { name: 'environment' }, h('option', { value: '' }, 'all'));
  const content = h('div', { 'aria-busy': 'true' }, 'Loading…');
  replaceContent(root, h('h1', {}, 'Drift'), filterForm('/drift', [field('Environment', environments)]), content);
  return {
    refresh: () =>
      guarded(content, signal, async () => {
        const [{ items: known }, { items }] = await Promise.all([
          getJson<{ items: Environment[] }>('/environments', {}, signal),
          getJson<{ items: Drift[] }>('/drift', { environment }, signal),
        ]);
        if (environments.options.length === 1) {
          environments.append(...known.map((entry) => h('option', { value: entry.name, selected: entry.name === environment }, entry.name)));
        }
        replaceContent(
          content,
          items.length === 0
            ? h('p', { class: 'all-good' }, 'Everything is where it should be.')
            : h(
                'table',
                { class: 'drift' },
                h('thead', {}, h('tr', {}, ['For', 'Where', 'Host', 'Desired', 'Applied', 'Why', 'Status'].map((title) => h('th', { scope: 'col' }, title)))),
                h(
                  'tbody',
                  {},
                  items.map((entry) =>
                    h(
                      'tr',
                      { 'data-host': entry.host, 'data-reasons': entry.reasons.join(' ') },
                      h('td', { title: entry.driftingSince }, duration(entry.driftingForSeconds)),
                      h('td', {}, `${entry.environment} / ${entry.workload} / ${entry.deploymentTarget}`),
                      h('td', {}, h('a', { href: `/hosts/${encodeURIComponent(entry.host)}` }, entry.host), h('span', { class: 'muted' }, ` ${entry.reconciler}`)),
                      h('td', {}, entry.desiredVersion ?? (entry.desiredCommit === null ? '—' : shortCommit(entry.desiredCommit))),
                      h('td', {}, entry.appliedVersion ?? shortCommit(entry.appliedCommit)),
                      h('td', {}, entry.reasons.map((reason) => REASONS[reason]).join(', ')),
                      h('td', {}, statusBadge(entry.status), entry.statusMessage === '' ? null : h('p', { class: 'message' }, entry.statusMessage)),
                    ),
                  ),
                ),
              ),
        );
      }),
  };
}
