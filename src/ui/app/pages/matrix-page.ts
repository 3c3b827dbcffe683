// The environments matrix: workloads (grouped by workspace and application) down, environments in
// promotion order across (the order GET /environments answers in). Each cell: desired version,
// deployed versions, a status bar, a link to its rollout — and a mark where it differs from the
// previous environment in promotion order that has the target, as the discrepancy view
// (kalypso_environment_discrepancy) has it. Above it, each environment with the Check Promote view
// of its last merge.
import { apiGet, type CompareCell, type CompareRow, type Environment } from '../api.ts';
import { h, replaceContent, updateContent } from '../dom.ts';
import { field, filterForm, guarded, noDataYet, type Page } from '../page.ts';
import { rememberedEnvironments, rememberEnvironments, sameNames } from '../remembered-environments.ts';
import { STATUS_LABEL, statusBar } from '../status-bar.ts';
import { commitText, timeAgo } from '../times.ts';
import { href, param, rolloutHref } from '../url-state.ts';

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
        const rowsOf = (names: readonly string[]): Promise<{ items: CompareRow[]; nextCursor: string | null }> =>
          names.length === 1
            ? oneEnvironment(names[0]!, { cursor, workspace, application }, signal)
            : apiGet('/compare', {}, { environments: names.join(','), limit: String(ROWS_PER_PAGE), cursor, workspace, application }, signal);
        // The rows by the names this tab saw last, asked beside the environments rather than after them.
        const remembered = rememberedEnvironments();
        const early = remembered === undefined ? undefined : rowsOf(remembered);
        // Not waited for when the names have changed: its failure is then nobody's.
        early?.catch(() => undefined);
        const { items: environments } = await apiGet('/environments', {}, {}, signal);
        if (environments.length === 0) {
          updateContent(content, noDataYet('environments'));
          return;
        }
        const names = environments.map((environment) => environment.name);
        rememberEnvironments(names);
        const page = await (early !== undefined && sameNames(names, remembered!) ? early : rowsOf(names));
        updateContent(content, summary(environments), legend(), matrix(environments, page.items), pager(page.nextCursor, { workspace, application, cursor }));
      }),
  };
}

/**
 * The matrix of a fleet (or of a caller's workspaces) in one environment: /compare compares two or
 * more, so its rows are made from the environment's state, which has the same cells. The workspace
 * and application filters narrow the rows here.
 */
async function oneEnvironment(
  environment: string,
  { cursor, workspace, application }: { cursor: string | undefined; workspace: string | undefined; application: string | undefined },
  signal: AbortSignal,
): Promise<{ items: CompareRow[]; nextCursor: string | null }> {
  const state = await apiGet('/environments/{environment}/state', { environment }, { limit: String(ROWS_PER_PAGE), cursor }, signal);
  const items = state.items
    .filter((target) => (workspace === undefined || workspace === '' || target.workspace === workspace) && (application === undefined || application === '' || target.application === application))
    .map(
      (target): CompareRow => ({
        workspace: target.workspace,
        application: target.application,
        workload: target.workload,
        deploymentTarget: target.deploymentTarget,
        environments: { [environment]: { manifestsEndpoint: target.manifestsEndpoint, desired: target.desired, deployed: target.deployed, reconcilers: target.reconcilers } },
        desiredDiffers: false,
        deployedDiffers: false,
      }),
    );
  return { items, nextCursor: state.nextCursor };
}

function summary(environments: Environment[]): HTMLElement {
  return h(
    'ul',
    { class: 'environment-summary' },
    environments.map((environment) =>
      h(
        'li',
        { 'data-environment': environment.name },
        h('a', { href: href('/hosts', { environment: environment.name }) }, h('strong', {}, environment.name)),
        ` ${environment.deploymentTargets} targets · ${environment.hosts} hosts`,
        reconcilerStatus(environment.reconcilers),
        environment.latestAssignment === null
          ? null
          : h(
              'div',
              { class: 'last-merge' },
              h('a', { href: rolloutHref({ environment: environment.name }, environment.latestAssignment.commit), class: 'promote-check' }, 'Rollout of the last merge'),
              ' ',
              commitText(environment.latestAssignment.commit),
              ', ',
              timeAgo(environment.latestAssignment.assignedAt),
            ),
      ),
    ),
  );
}

/** What the marks and colours mean, on screen rather than on hover only. */
function legend(): HTMLElement {
  const swatch = (status: keyof typeof STATUS_LABEL) => h('li', {}, h('span', { class: `swatch ${status}`, 'aria-hidden': 'true' }), STATUS_LABEL[status]);
  return h(
    'ul',
    { class: 'legend', 'aria-label': 'Legend' },
    h('li', {}, h('strong', {}, 'Reconcilers:')),
    swatch('success'),
    swatch('failure'),
    swatch('in_progress'),
    swatch('stale'),
    h('li', {}, h('span', { class: 'changed', 'aria-hidden': 'true' }, '▲'), ' desired version differs from the environment before it'),
    h('li', {}, h('span', { class: 'off-desired' }, '1.0 ×2'), ' deployed, not on the desired rollout'),
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
      // The label is sticky: it stays in view when the matrix scrolls sideways.
      body.push(h('tr', { class: 'group' }, h('th', { colspan: environments.length + 1, scope: 'colgroup' }, h('span', { class: 'group-label' }, rowGroup))));
    }
    // An environment without the target is skipped, not compared: dev 1.0, qa absent, prod 1.0 is
    // no change (Grafana's matrix says the same).
    let previous: { environment: string; cell: CompareCell } | undefined;
    const cells = environments.map((environment) => {
      const cell = row.environments[environment.name] ?? null;
      if (cell === null) return matrixCell(row, environment.name, cell, undefined);
      const before = previous !== undefined && desiredVersion(cell) !== desiredVersion(previous.cell) ? previous : undefined;
      previous = { environment: environment.name, cell };
      return matrixCell(row, environment.name, cell, before);
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

/** `differsFrom`: the environment before this one, when its desired version is another. */
function matrixCell(row: CompareRow, environment: string, cell: CompareCell | null, differsFrom: { environment: string; cell: CompareCell } | undefined): HTMLElement {
  const attributes = { 'data-environment': environment, class: differsFrom === undefined ? 'cell' : 'cell differs' };
  if (cell === null) return h('td', { ...attributes, class: `${attributes.class} absent` }, h('span', { class: 'muted' }, 'not deployed here'));
  const history = href('/history', { environment, workload: row.workload, deploymentTarget: row.deploymentTarget });
  const difference =
    differsFrom === undefined
      ? undefined
      : `desired ${desiredVersion(cell) ?? 'nothing'} here, ${desiredVersion(differsFrom.cell) ?? 'nothing'} in ${differsFrom.environment}`;
  return h(
    'td',
    attributes,
    h(
      'div',
      { class: 'desired' },
      difference === undefined ? null : h('span', { class: 'changed', title: difference }, h('span', { 'aria-hidden': 'true' }, '▲ '), h('span', { class: 'visually-hidden' }, `Changed: ${difference}. `)),
      h('strong', { class: 'desired-version' }, cell.desired?.version ?? 'no descriptor'),
      cell.desired === null ? null : h('span', { class: 'commit' }, ' @', commitText(cell.desired.commit)),
    ),
    h(
      'ul',
      { class: 'deployed' },
      cell.deployed.map((deployed) =>
        h(
          'li',
          // A merge for another target moves the branch: a commit running the desired version is on it.
          { class: deployed.onDesired ? 'on-desired' : 'off-desired', title: `${deployed.commit}${deployed.onDesired ? '' : ' — not on the desired rollout'}` },
          deployed.version ?? commitText(deployed.commit),
          ` ×${deployed.reconcilers.total}`,
        ),
      ),
    ),
    reconcilerStatus(cell.reconcilers),
    h(
      'div',
      { class: 'cell-links' },
      cell.desired === null ? null : [h('a', { href: rolloutHref({ endpoint: cell.manifestsEndpoint }, cell.desired.commit), class: 'rollout-link' }, 'rollout'), ' · '],
      h('a', { href: href('/hosts', { environment }) }, 'hosts'),
      ' · ',
      h('a', { href: history }, 'history'),
    ),
  );
}

/** The status bar, or the words when there is nothing to show in it. */
function reconcilerStatus(counts: CompareCell['reconcilers']): HTMLElement {
  return counts.total === 0 ? h('p', { class: 'muted no-reconcilers' }, 'no reconcilers') : statusBar(counts);
}

function pager(nextCursor: string | null, query: Record<string, string | undefined>): HTMLElement {
  return h(
    'nav',
    { class: 'pager', 'aria-label': 'Pages' },
    query['cursor'] === undefined ? null : h('a', { href: href('/', { ...query, cursor: undefined }) }, '« First page'),
    nextCursor === null ? null : h('a', { href: href('/', { ...query, cursor: nextCursor }), rel: 'next' }, 'Next page »'),
  );
}
