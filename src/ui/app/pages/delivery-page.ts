// How well the fleet delivers: DORA metrics and convergence of the rollouts assigned in the last
// days, for any slice — headline numbers, their trend per day, the hosts that lag and the newest
// rollouts. Definitions: docs/delivery-analytics.md (GET /api/v1/metrics/delivery).
import { apiGet, type DeliveryReport, type DurationSummary } from '../api.ts';
import { h, replaceContent, updateContent } from '../dom.ts';
import { decimal, duration, localTime, optionalDuration, percent } from '../format.ts';
import { field, filterForm, guarded, noDataYet, type Page } from '../page.ts';
import { trendChart } from '../trend-chart.ts';
import { param } from '../url-state.ts';
import { laggingHostsTable, rolloutsTable } from './delivery-tables.ts';

const WINDOWS = [7, 30, 90];
const DEFAULT_DAYS = 30;
/** The API's longest trend is 400 days; a longer window would lose its continuous series. */
const MAX_DAYS = 365;
const RECENT_ROLLOUTS = '50';

const NAMES = ['workspace', 'application', 'workload', 'deploymentTarget', 'host'] as const;
const LABELS: Record<(typeof NAMES)[number], string> = {
  workspace: 'Workspace',
  application: 'Application',
  workload: 'Workload',
  deploymentTarget: 'Target',
  host: 'Host',
};

export function mountDelivery(root: HTMLElement, signal: AbortSignal): Page {
  // The window is kept as a number of days, not as times: a shared link means "the last 7 days"
  // whenever it is opened, and each refresh moves the window along with the clock.
  const asked = Number(param('days'));
  const days = Number.isInteger(asked) && asked >= 1 && asked <= MAX_DAYS ? asked : DEFAULT_DAYS;
  const environment = param('environment');
  const fixWindow = param('fixWindow');
  const names = Object.fromEntries(NAMES.map((name) => [name, param(name)]));
  // The environment the URL names is shown at once; the others fill the menu when their names come.
  const environments = h(
    'select',
    { name: 'environment' },
    h('option', { value: '' }, 'all'),
    environment === undefined ? [] : [h('option', { value: environment, selected: true }, environment)],
  );
  let menuFilled = false;
  const fillMenu = (known: readonly { readonly name: string }[]): void => {
    if (menuFilled) return;
    menuFilled = true;
    const chosen = environments.value;
    environments.replaceChildren(
      h('option', { value: '' }, 'all'),
      ...known.map((entry) => h('option', { value: entry.name, selected: entry.name === chosen }, entry.name)),
    );
  };
  const windows = h(
    'select',
    { name: 'days' },
    [...new Set([...WINDOWS, days])].sort((a, b) => a - b).map((value) => h('option', { value, selected: value === days }, `last ${value} days`)),
  );
  const content = h('div', { class: 'delivery', 'aria-busy': 'true' }, 'Loading…');
  replaceContent(
    root,
    h('h1', {}, 'Delivery'),
    filterForm('/delivery', [
      field('Window', windows),
      field('Environment', environments),
      ...NAMES.map((name) => field(LABELS[name], h('input', { name, value: names[name] ?? '', size: 14 }))),
      field('Fix window', h('input', { name: 'fixWindow', value: fixWindow ?? '', size: 6, placeholder: '1h', title: 'A rollout superseded this soon after its assignment counts as a change failure' })),
    ]),
    content,
  );

  return {
    refresh: () =>
      guarded(content, signal, async () => {
        const until = new Date();
        const since = new Date(until.getTime() - days * 86_400_000);
        const report = await apiGet(
          '/metrics/delivery',
          {},
          { ...names, environment, fixWindow, since: since.toISOString(), until: until.toISOString(), limit: RECENT_ROLLOUTS },
          signal,
        );
        // The environments' names are asked for after the answer, not beside it: at fleet L the two
        // side by side shared the two cores and the answer waited for both. A rollout in the answer
        // shows there is data; without one, the names tell "nothing sent yet" from "no rollouts in
        // the window".
        const rolledOut = report.rollouts.total > 0 || report.rollouts.withoutSubscribers > 0;
        const known = rolledOut ? undefined : (await apiGet('/environments', {}, {}, signal)).items;
        if (known !== undefined) fillMenu(known);
        // A refresh redraws everything; the tables a reader opened stay open.
        const open = new Set([...content.querySelectorAll<HTMLDetailsElement>('details[open]')].map((details) => details.dataset.key));
        if (known !== undefined && known.length === 0) updateContent(content, noDataYet('rollouts'));
        else updateContent(content, ...render(report));
        for (const details of content.querySelectorAll<HTMLDetailsElement>('details')) details.open = open.has(details.dataset.key);
        // Once drawn; a failure leaves the menu as it is, for the next refresh to fill.
        if (!menuFilled) {
          void apiGet('/environments', {}, {}, signal).then(
            ({ items }) => fillMenu(items),
            () => undefined,
          );
        }
      }),
  };
}

function render(report: DeliveryReport): HTMLElement[] {
  const { rollouts } = report;
  const summary = h(
    'p',
    { class: 'window', 'data-since': report.window.since, 'data-until': report.window.until },
    `Rollouts assigned from ${localTime(report.window.since)} to ${localTime(report.window.until)}: `,
    h('strong', {}, `${rollouts.total}`),
    ` — ${rollouts.succeeded} succeeded, ${rollouts.failed} failed, ${rollouts.inProgress} in progress, ${rollouts.superseded} superseded`,
    // Assignments nobody pulls are in no number; say so rather than let them vanish.
    rollouts.withoutSubscribers > 0 ? h('span', { class: 'muted' }, ` (and ${rollouts.withoutSubscribers} assigned where no reconciler pulls)`) : null,
  );
  if (rollouts.total === 0) return [summary, h('p', { class: 'empty muted' }, 'No rollouts in this window. Widen it, or loosen the filters.')];
  return [
    summary,
    h('h2', { class: 'visually-hidden' }, 'Headline numbers'),
    tiles(report),
    h('h2', {}, 'Trend per day'),
    h('div', { class: 'trends' }, trends(report)),
    h('h2', {}, 'Lagging hosts'),
    report.laggingHosts.length === 0
      ? h('p', { class: 'all-good' }, 'No host lagged behind.')
      : [
          h('p', { class: 'muted' }, 'The slowest tenth of each rollout’s hosts, when they succeeded after half of them or not at all; behind: after the 50 % point.'),
          laggingHostsTable(report.laggingHosts),
        ],
    h('h2', {}, 'Recent rollouts'),
    rolloutsTable(report.recentRollouts),
  ].flat();
}

function tiles(report: DeliveryReport): HTMLElement {
  const { deploymentFrequency: frequency, leadTime, convergence, changeFailureRate: failures, timeToRestore: restore } = report;
  const withoutBuildTime = leadTime.withoutBuildTime > 0 ? `${leadTime.withoutBuildTime} without a build time` : null;
  return h(
    'ul',
    { class: 'tiles' },
    tile('deploymentFrequency', 'Deployment frequency', `${decimal(frequency.perDay)} / day`, `${frequency.successfulRollouts} successful rollouts in ${decimal(report.window.days)} days`),
    durationTile('leadTimeFirstHost', 'Lead time, first host', leadTime.firstHost, 'build → first host applied', withoutBuildTime),
    durationTile('leadTimeLastHost', 'Lead time, last host', leadTime.lastHost, 'build → every host applied', withoutBuildTime),
    durationTile('convergence50', 'Convergence to 50 %', convergence.to50Percent, 'assignment → half the hosts applied'),
    durationTile('convergence90', 'Convergence to 90 %', convergence.to90Percent, 'assignment → 90 % of the hosts applied'),
    durationTile('convergence100', 'Convergence to 100 %', convergence.to100Percent, 'assignment → every host applied'),
    tile(
      'changeFailureRate',
      'Change failure rate',
      percent(failures.rate),
      `${failures.failures} of ${failures.judged} finished rollouts`,
      failures.supersededWithinFixWindow > 0 ? `${failures.supersededWithinFixWindow} of them superseded within ${duration(report.fixWindowSeconds)}` : null,
    ),
    durationTile('timeToRestore', 'Time to restore', restore, `${restore.failures} with a failure, ${restore.notRestored} not restored`),
  );
}

function durationTile(key: string, title: string, summary: DurationSummary, ...notes: (string | null)[]): HTMLElement {
  return tile(key, title, optionalDuration(summary.medianSeconds), `median · p90 ${optionalDuration(summary.p90Seconds)} · ${summary.count} rollouts`, ...notes);
}

function tile(key: string, title: string, value: string, ...details: (string | null)[]): HTMLElement {
  return h('li', { class: 'tile', 'data-metric': key }, h('h3', {}, title), h('p', { class: 'value' }, value), details.map((detail) => (detail === null ? null : h('p', { class: 'detail' }, detail))));
}

function trends(report: DeliveryReport): HTMLElement[] {
  return [
    trendChart({
      key: 'rollouts',
      title: 'Rollouts per day',
      valueLabel: 'Rollouts',
      partLabel: 'Successful',
      kind: 'bar',
      tone: 'neutral',
      format: String,
      points: report.trend.map((day) => ({ day: day.day, value: day.rollouts, part: day.successful })),
    }),
    trendChart({
      key: 'changeFailureRate',
      title: 'Change failure rate',
      valueLabel: 'Change failure rate',
      kind: 'bar',
      tone: 'failure',
      format: percent,
      points: report.trend.map((day) => ({ day: day.day, value: day.changeFailureRate })),
    }),
    trendChart({
      key: 'leadTime',
      title: 'Lead time to the last host, median',
      valueLabel: 'Lead time',
      kind: 'line',
      tone: 'accent',
      format: optionalDuration,
      points: report.trend.map((day) => ({ day: day.day, value: day.leadTimeMedianSeconds })),
    }),
    trendChart({
      key: 'convergence',
      title: 'Convergence to 100 %, median',
      valueLabel: 'Convergence',
      kind: 'line',
      tone: 'accent',
      format: optionalDuration,
      points: report.trend.map((day) => ({ day: day.day, value: day.convergenceMedianSeconds })),
    }),
  ];
}
