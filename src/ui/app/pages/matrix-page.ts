// The environments matrix: workloads (grouped by workspace and application) down, environments in
// promotion order across (the order GET /environments answers in). Each cell: desired version,
// deployed versions, a status bar — and a mark where it differs from the previous environment in
// promotion order that has the target, as the discrepancy view (kalypso_environment_discrepancy) has it.
import { type CompareCell, type CompareRow, type Environment, getJson } from '../api.ts';
import { h, replaceContent } from '../dom.ts';
import { shortCommit } from '../format.ts';
import { field, filterForm, guarded, type Page } from '../page.ts';
import { statusBar } from '../status-bar.ts';
import { href, param } from '../url-state.ts';

const ROWS_PER_PAGE = 50;

export function mountMatrix(root: HTMLElement, signal: AbortSignal): Page {
  const workspace = param('workspace');
  const application = param('application');
  const cursor = param('cursor');
  const content = h('div', { 'aria-busy': 'true' }, 'Loading…');
  replaceContent(
    root,
    h('h1', {}, 'Environments'),
    filterForm('/', [
      field('Workspace', h('input', { name: 'workspace', value: workspace ?? '' })),
      field('Application', h('input', { name: 'application', value: application ?? '' })),
    ]),
    content,
  );

  return {
    refresh: () =>
      guarded(content, signal, async () => {
        const { items: environments } = await getJson<{ items: Environment[] }>('/environments', {}, signal);
        if (environments.length === 0) {
          replaceContent(content, h('p', {}, 'No environments yet: send deployment descriptors (or start with --demo).'));
          return;
        }
        const names = environments.map((environment) => environment.name);
        const page = await getJson<{ items: CompareRow[]; nextCursor: string | null }>(
          '/compare',
          { environments: names.join(','), limit: String(ROWS_PER_PAGE), cursor, workspace, application },
          signal,
        );
        replaceContent(content, summary(environments), matrix(environments, page.items), pager(page.nextCursor, { workspace, application, cursor }));
      }),
  };
}

function summary(environments: Environment[]): HTMLElement {
  return h(
    'ul',
    { class: 'environment-summary' },
    environments.map((environment) =>
      h(
        'li',
        {},
        h('a', { href: href('/hosts', { environment: environment.name }) }, h('strong', {}, environment.name)),
        ` ${environment.deploymentTargets} targets · ${environment.hosts} hosts`,
        statusBar(environment.reconcilers),
      ),
    ),
  );
}

function matrix(environments: Environment[], rows: CompareRow[]): HTMLElement {
  const header = h('tr', {}, h('th', { scope: 'col' }, 'Workload / target'), environments.map((environment) => h('th', { scope: 'col' }, environment.name)));
  const body: HTMLElement[] = [];
  let group = '';
  for (const row of rows) {
    const rowGroup = `${row.workspace} / ${row.application}`;
    if (rowGroup !== group) {
      group = rowGroup;
      body.push(h('tr', { class: 'group' }, h('th', { colspan: environments.length + 1, scope: 'colgroup' }, rowGroup)));
    }
    // An environment without the target is skipped, not compared: dev 1.0, qa absent, prod 1.0 is
    // no change (Grafana's matrix says the same).
    let previous: CompareCell | undefined;
    const cells = environments.map((environment) => {
      const cell = row.environments[environment.name] ?? null;
      if (cell === null) return matrixCell(row, environment.name, cell, false);
      const differs = previous !== undefined && desiredVersion(cell) !== desiredVersion(previous);
      previous = cell;
      return matrixCell(row, environment.name, cell, differs);
    });
    body.push(
      h(
        'tr',
        { 'data-workload': row.workload, 'data-target': row.deploymentTarget },
        h('th', { scope: 'row' }, h('span', { class: 'workload' }, row.workload), h('span', { class: 'target' }, row.deploymentTarget)),
        cells,
      ),
    );
  }
  return h('div', { class: 'matrix-scroll' }, h('table', { class: 'matrix' }, h('thead', {}, header), h('tbody', {}, body)));
}

function desiredVersion(cell: CompareCell): string | null {
  return cell.desired?.version ?? null;
}

function matrixCell(row: CompareRow, environment: string, cell: CompareCell | null, differs: boolean): HTMLElement {
  const attributes = { 'data-environment': environment, class: differs ? 'cell differs' : 'cell' };
  if (cell === null) return h('td', { ...attributes, class: `${attributes.class} absent` }, h('span', { class: 'muted' }, 'not deployed here'));
  const history = href('/history', { environment, workload: row.workload, deploymentTarget: row.deploymentTarget });
  return h(
    'td',
    attributes,
    h(
      'div',
      { class: 'desired' },
      differs ? h('span', { class: 'changed', title: 'differs from the previous environment' }, '▲ ') : null,
      h('strong', { class: 'desired-version' }, cell.desired?.version ?? 'no descriptor'),
      cell.desired === null ? null : h('span', { class: 'commit', title: cell.desired.commit }, ` @${shortCommit(cell.desired.commit)}`),
    ),
    h(
      'ul',
      { class: 'deployed' },
      cell.deployed.map((deployed) =>
        h(
          'li',
          // A merge for another target moves the branch: a commit running the desired version is on it.
          { class: deployed.onDesired ? 'on-desired' : 'off-desired', title: deployed.commit },
          deployed.version ?? shortCommit(deployed.commit),
          ` ×${deployed.reconcilers.total}`,
        ),
      ),
    ),
    statusBar(cell.reconcilers),
    h('div', { class: 'cell-links' }, h('a', { href: href('/hosts', { environment }) }, 'hosts'), ' · ', h('a', { href: history }, 'history')),
  );
}

function pager(nextCursor: string | null, query: Record<string, string | undefined>): HTMLElement {
  return h(
    'nav',
    { class: 'pager', 'aria-label': 'Pages' },
    query['cursor'] === undefined ? null : h('a', { href: href('/', { ...query, cursor: undefined }) }, '« First page'),
    nextCursor === null ? null : h('a', { href: href('/', { ...query, cursor: nextCursor }), rel: 'next' }, 'Next page »'),
  );
}
