// Writes the Grafana dashboards under deploy/grafana/dashboards/ (run: npm run grafana:dashboards).
// Five dashboards share variables, links and panel shapes; generating them keeps those identical
// and the JSON reviewable. Every panel reads the kalypso_* views (schema/0004) or calls the
// kalypso_delivery_* functions (schema/0013), never the tables, so the datasource can use the
// read-only kalypso_reader role. test/grafana checks the committed
// JSON is what this script writes and runs every panel's SQL against a seeded database.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const DATASOURCE = { type: 'grafana-postgresql-datasource', uid: 'kalypso' } as const;
export const DASHBOARD_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../deploy/grafana/dashboards');

type Json = Record<string, unknown>;

// ── Variables ───────────────────────────────────────────────────────────────────────────────

function variable(name: string, label: string, query: string): Json {
  return {
    name,
    label,
    type: 'query',
    datasource: DATASOURCE,
    query,
    definition: query,
    refresh: 2, // on time range change: new workloads and hosts appear without a reload
    multi: true,
    includeAll: true,
    current: { selected: true, text: ['All'], value: ['$__all'] },
    sort: 0, // keep the query's order (environments in promotion order)
  };
}

const WORKSPACE = variable('workspace', 'Workspace', 'SELECT DISTINCT workspace FROM kalypso_environment_state ORDER BY 1');
const APPLICATION = variable(
  'application',
  'Application',
  'SELECT DISTINCT application FROM kalypso_environment_state WHERE workspace IN ($workspace) ORDER BY 1',
);
const ENVIRONMENT = variable(
  'environment',
  'Environment',
  'SELECT environment FROM kalypso_environment_state GROUP BY environment ORDER BY min(environment_order)',
);
const HOST = variable(
  'host',
  'Host',
  'SELECT DISTINCT host FROM kalypso_host_state WHERE environment IN ($environment) OR environment IS NULL ORDER BY 1',
);

/**
 * The host variable where "All" must mean no filter at all — hosts removed since count too — rather
 * than the hosts reporting now: its custom all value `'*'`, which Grafana inserts as it is, makes
 * ALL_HOSTS true.
 */
const ANY_HOST = { ...HOST, allValue: "'*'" };
const ALL_HOSTS = `'*' IN ($host)`;

/**
 * Cluster State's variables, where "All" hosts means the hosts of the environments chosen, as the
 * host variable lists them, and "All" environments every host: both with the custom all value, so
 * that at All and All no list of every host (20,000 names at fleet L: 280 KB of SQL per `IN`, four
 * in the Reconcilers panel) is written into the panels' SQL, and the condition below is no filter.
 */
const ANY_ENVIRONMENT = { ...ENVIRONMENT, allValue: "'*'" };
const ANY_HOST_OF_ENVIRONMENT = {
  ...variable(
    'host',
    'Host',
    `SELECT DISTINCT host FROM kalypso_host_state WHERE '*' IN ($environment) OR environment IN ($environment) OR environment IS NULL ORDER BY 1`,
  ),
  allValue: "'*'",
};
/** The hosts chosen with ANY_ENVIRONMENT and ANY_HOST_OF_ENVIRONMENT: PostgreSQL folds the constants away. */
const CHOSEN_HOSTS = `((${ALL_HOSTS} AND ('*' IN ($environment)
        OR host IN (SELECT c.host FROM kalypso_host_state c WHERE c.environment IN ($environment) OR c.environment IS NULL)))
       OR host IN ($host))`;

/** A rollout superseded within this many seconds of its assignment counts as a change failure. */
const FIX_WINDOW_OPTIONS: [text: string, seconds: number][] = [
  ['never', 0],
  ['30 minutes', 1800],
  ['1 hour', 3600],
  ['4 hours', 14_400],
  ['1 day', 86_400],
];
const FIX_WINDOW_DEFAULT = 3600; // the API's default
const fixWindowOption = ([text, seconds]: [string, number]) => ({ selected: seconds === FIX_WINDOW_DEFAULT, text, value: String(seconds) });
const FIX_WINDOW: Json = {
  name: 'fix_window',
  label: 'Fix window',
  description: 'A rollout superseded within this time of its assignment counts as a change failure (never: only failure reports count).',
  type: 'custom',
  query: FIX_WINDOW_OPTIONS.map(([text, seconds]) => `${text} : ${seconds}`).join(','),
  multi: false,
  includeAll: false,
  current: fixWindowOption(FIX_WINDOW_OPTIONS.find(([, seconds]) => seconds === FIX_WINDOW_DEFAULT)!),
  options: FIX_WINDOW_OPTIONS.map(fixWindowOption),
};

/** The SQL filter for the workspace / application / environment variables. */
const TARGET_FILTER = 'workspace IN ($workspace) AND application IN ($application) AND environment IN ($environment)';

// ── Panels ──────────────────────────────────────────────────────────────────────────────────

interface GridPos {
  readonly h: number;
  readonly w: number;
  readonly x: number;
  readonly y: number;
}

const STATUS_COLOURS: Record<string, string> = {
  success: 'green',
  failure: 'red',
  in_progress: 'blue',
  stale: 'orange',
  out_of_date: 'yellow',
  no_reconcilers: 'text',
  no_subscribers: 'text',
};

/** A rollout's status (kalypso_delivery_rollouts). */
const ROLLOUT_STATUS_COLOURS: Record<string, string> = {
  succeeded: 'green',
  failed: 'red',
  superseded: 'orange',
  in_progress: 'blue',
  no_subscribers: 'text',
};

function valueMapping(colours: Record<string, string>): Json {
  return {
    type: 'value',
    options: Object.fromEntries(
      Object.entries(colours).map(([status, color], index) => [status, { color, index, text: status.replaceAll('_', ' ') }]),
    ),
  };
}

const STATUS_MAPPING = valueMapping(STATUS_COLOURS);

function target(rawSql: string, format: 'table' | 'time_series' = 'table'): Json {
  return { refId: 'A', datasource: DATASOURCE, editorMode: 'code', rawQuery: true, format, rawSql: rawSql.trim().replace(/\s+\n/g, '\n') };
}

/** An override for one column, by name: the dashboard test checks the column exists. */
function column(name: string, ...properties: Json[]): Json {
  return { matcher: { id: 'byName', options: name }, properties };
}

const statusCell = (name = 'status', mapping = STATUS_MAPPING): Json =>
  column(name, { id: 'mappings', value: [mapping] }, { id: 'custom.cellOptions', value: { type: 'color-background', mode: 'basic' } });

/** A column of seconds, shown as a duration. */
const secondsColumn = (name: string, displayName: string): Json => column(name, { id: 'unit', value: 's' }, { id: 'displayName', value: displayName });

/** A column that links to another dashboard, carrying the row's values as variables. */
function linkColumn(name: string, title: string, dashboard: string, variables: Record<string, string>): Json {
  const query = Object.entries(variables)
    .map(([variableName, field]) => `var-${variableName}=\${__data.fields.${field}}`)
    .join('&');
  return column(name, { id: 'links', value: [{ title, url: `/d/${dashboard}/${dashboard}?${query}&\${__url_time_range}` }] });
}

function table(title: string, description: string, gridPos: GridPos, rawSql: string, overrides: Json[] = [], extra: Json = {}): Json {
  return {
    type: 'table',
    title,
    description,
    gridPos,
    datasource: DATASOURCE,
    targets: [target(rawSql)],
    fieldConfig: { defaults: { custom: { filterable: true } }, overrides },
    options: { showHeader: true, cellHeight: 'sm', footer: { show: false } },
    ...extra,
  };
}

interface StatOptions {
  /** The unit of every value (Grafana's unit ids: `s`, `percentunit`, …) but the counts. */
  readonly unit?: string;
  readonly decimals?: number;
  /** Columns that are counts: no unit, no decimals. */
  readonly counts?: readonly string[];
  /** What an empty or NULL value shows: counts are 0, a median of nothing is not. */
  readonly noValue?: string;
}

function stat(title: string, description: string, gridPos: GridPos, rawSql: string, colours: Record<string, string>, options: StatOptions = {}): Json {
  const counts = options.counts ?? [];
  const columns = [...new Set([...Object.keys(colours), ...counts])];
  return {
    type: 'stat',
    title,
    description,
    gridPos,
    datasource: DATASOURCE,
    targets: [target(rawSql)],
    fieldConfig: {
      defaults: {
        color: { mode: 'fixed', fixedColor: 'text' },
        noValue: options.noValue ?? '0',
        ...(options.unit === undefined ? {} : { unit: options.unit }),
        ...(options.decimals === undefined ? {} : { decimals: options.decimals }),
      },
      overrides: columns.map((name) =>
        column(
          name,
          ...(colours[name] === undefined ? [] : [{ id: 'color', value: { mode: 'fixed', fixedColor: colours[name] } }]),
          ...(counts.includes(name) ? [{ id: 'unit', value: 'none' }, { id: 'decimals', value: 0 }] : []),
        ),
      ),
    },
    options: { reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false }, colorMode: 'value', graphMode: 'none', textMode: 'value_and_name' },
  };
}

/** Stacked bars of reconciler states, coloured by status. */
const STATUS_BARS: Json = {
  defaults: { custom: { drawStyle: 'bars', fillOpacity: 80, stacking: { mode: 'normal' } } },
  overrides: ['success', 'failure', 'in_progress'].map((status) => column(status, { id: 'color', value: { mode: 'fixed', fixedColor: STATUS_COLOURS[status] } })),
};

function timeSeries(title: string, description: string, gridPos: GridPos, rawSql: string, fieldConfig: Json = STATUS_BARS): Json {
  return {
    type: 'timeseries',
    title,
    description,
    gridPos,
    datasource: DATASOURCE,
    targets: [target(rawSql, 'time_series')],
    fieldConfig,
    options: { legend: { displayMode: 'list', placement: 'bottom' }, tooltip: { mode: 'multi' } },
  };
}

/**
 * At most this many rows in a table whose rows grow with the fleet (12,000 targets, 20,000 hosts,
 * 240,000 reconcilers at fleet L): the rows a person reads first, problems first; the variables
 * narrow the rest. Grafana would fetch and lay out every row before showing the first.
 */
const TABLE_ROWS = 1000;

// Targets not settled first (failing, stale, in progress, out of date, without reconcilers).
const ENVIRONMENT_STATE_SQL = `
SELECT environment, workspace, application, workload, deployment_target, desired_version, deployed_versions, status,
       reconcilers, succeeded, failed, in_progress, stale, assigned_at, manifests_endpoint
  FROM kalypso_environment_state
 WHERE ${TARGET_FILTER}
 ORDER BY status = 'success', environment_order, workspace, application, workload, deployment_target
 LIMIT ${TABLE_ROWS}`;

function environmentStateTable(gridPos: GridPos): Json {
  return table(
    'Environment state',
    `Per deployment target: the version CD assigned (desired) and the versions its reconcilers applied, with reconcilers by status. Status is the worst of them; out_of_date means reconcilers still on an older commit. Targets not settled first, then in promotion order; at most ${TABLE_ROWS.toLocaleString('en')} rows (narrow with the variables).`,
    gridPos,
    ENVIRONMENT_STATE_SQL,
    [
      statusCell(),
      linkColumn('workload', 'History of this workload', 'kalypso-environment-history', {
        environment: 'environment',
        workspace: 'workspace',
        application: 'application',
      }),
      linkColumn('environment', 'Drift in this environment', 'kalypso-drift', { environment: 'environment' }),
      column('failed', { id: 'color', value: { mode: 'thresholds' } }, { id: 'custom.cellOptions', value: { type: 'color-text' } }, {
        id: 'thresholds',
        value: { mode: 'absolute', steps: [{ color: 'text', value: null }, { color: 'red', value: 1 }] },
      }),
    ],
  );
}

// ── Rollout annotations ─────────────────────────────────────────────────────────────────────

// Every dashboard marks when rollouts were assigned, converged and failed (kalypso_rollout_event,
// schema/0026), narrowed by the dashboard's own workspace, application and environment variables:
// a graph of failures or drift can be read against the rollouts that caused it. Each kind is its
// own annotation query, so that it can be switched off on its own.

/** Grafana's SQL annotation columns: time (and timeend for a region), text, tags (comma-separated). */
const ROLLOUT_ANNOTATIONS: { name: string; event: string; iconColor: string; columns: string }[] = [
  {
    name: 'Rollouts assigned',
    event: 'assigned',
    iconColor: 'blue',
    columns: `time,
       workload || ' ' || version || ' assigned to ' || deployment_target || ' in ' || environment
         || ' (commit ' || left(commit_id, 12) || ', ' || workspace || '/' || application || ')' AS text`,
  },
  {
    // A region from the assignment to the convergence: how long the rollout took.
    name: 'Rollouts converged',
    event: 'converged',
    iconColor: 'green',
    columns: `assigned_at AS time, time AS timeend,
       workload || ' ' || version || ' converged on ' || deployment_target || ' in ' || environment || ' after '
         || round(seconds_after_assignment / 60.0) || ' min, ' || subscribers || ' reconciler(s)' AS text`,
  },
  {
    name: 'Rollouts failed',
    event: 'failed',
    iconColor: 'red',
    columns: `time,
       workload || ' ' || version || ' failed on ' || deployment_target || ' in ' || environment
         || ' (first failure report, ' || round(seconds_after_assignment / 60.0) || ' min after the assignment)' AS text`,
  },
];

function rolloutAnnotations(variables: readonly Json[]): Json[] {
  const of = (name: string): Json | undefined => variables.find((variable) => variable['name'] === name);
  // A variable whose "All" is the custom all value '*' (ANY_ENVIRONMENT) is no filter at All.
  const filters = ['workspace', 'application', 'environment']
    .filter((name) => of(name) !== undefined)
    .map((name) => (of(name)!['allValue'] === "'*'" ? ` AND ('*' IN ($${name}) OR ${name} IN ($${name}))` : ` AND ${name} IN ($${name})`))
    .join('');
  return ROLLOUT_ANNOTATIONS.map(({ name, event, iconColor, columns }) => ({
    name,
    datasource: DATASOURCE,
    enable: true,
    hide: false,
    iconColor,
    target: target(`
SELECT ${columns},
       concat_ws(',', 'rollout', event, environment, workload) AS tags
  FROM kalypso_rollout_event
 WHERE event = '${event}' AND $__timeFilter(time)${filters}
 ORDER BY time DESC
 LIMIT 1000`),
  }));
}

// ── Dashboards ──────────────────────────────────────────────────────────────────────────────

function dashboard(uid: string, title: string, description: string, variables: Json[], panels: Json[], time = 'now-24h'): Json {
  return {
    uid,
    title,
    description,
    tags: ['kalypso'],
    editable: true,
    graphTooltip: 1,
    refresh: '1m',
    schemaVersion: 39,
    version: 1,
    time: { from: time, to: 'now' },
    timepicker: {},
    timezone: 'browser',
    templating: { list: variables },
    annotations: { list: rolloutAnnotations(variables) },
    // Every Kalypso dashboard links to the others, keeping the chosen variables and time range.
    links: [{ type: 'dashboards', tags: ['kalypso'], asDropdown: false, includeVars: true, keepTime: true, title: 'Kalypso', icon: 'external link' }],
    panels: panels.map((panel, index) => ({ id: index + 1, ...panel })),
  };
}

const deploymentObservability = dashboard(
  'kalypso-deployment-observability',
  'Kalypso · Deployment Observability',
  'What runs where: environment state and the discrepancies between environments.',
  [WORKSPACE, APPLICATION, ENVIRONMENT],
  [
    stat(
      'Reconcilers by status',
      'Reconcilers pulling the selected targets, by status. Stale: silent for longer than the hub’s stale-after setting.',
      { h: 5, w: 16, x: 0, y: 0 },
      `SELECT sum(reconcilers) AS reconcilers, sum(succeeded) AS succeeded, sum(failed) AS failed,
       sum(in_progress) AS in_progress, sum(stale) AS stale
  FROM kalypso_environment_state WHERE ${TARGET_FILTER}`,
      { succeeded: 'green', failed: 'red', in_progress: 'blue', stale: 'orange' },
    ),
    stat(
      'Deployment targets',
      'Targets, and those not fully on their desired version (failing, stale, in progress or out of date).',
      { h: 5, w: 8, x: 16, y: 0 },
      `SELECT count(*) AS targets, count(*) FILTER (WHERE status <> 'success') AS not_settled
  FROM kalypso_environment_state WHERE ${TARGET_FILTER}`,
      { not_settled: 'yellow' },
    ),
    environmentStateTable({ h: 12, w: 24, x: 0, y: 5 }),
    table(
      'Desired versions across environments',
      'One row per workload and target, one column per environment in promotion order. ≠ marks a version that differs from the previous environment.',
      { h: 10, w: 24, x: 0, y: 17 },
      `SELECT workspace || ' / ' || application || ' / ' || workload || ' · ' || deployment_target AS target, environment,
       coalesce(desired_version, '—') || CASE WHEN differs_from_previous THEN ' ≠' ELSE '' END AS version
  FROM kalypso_environment_discrepancy
 WHERE ${TARGET_FILTER}
 ORDER BY environment_order, target`,
      [],
      { transformations: [{ id: 'groupingToMatrix', options: { columnField: 'environment', rowField: 'target', valueField: 'version', emptyValue: 'empty' } }] },
    ),
    table(
      'Differences from the previous environment',
      `Targets whose desired version differs from the environment before them in the promotion order; at most ${TABLE_ROWS.toLocaleString('en')} rows (narrow with the variables).`,
      { h: 8, w: 24, x: 0, y: 27 },
      `SELECT workspace, application, workload, deployment_target, previous_environment, previous_desired_version,
       environment, desired_version, deployed_versions, status
  FROM kalypso_environment_discrepancy
 WHERE differs_from_previous AND ${TARGET_FILTER}
 ORDER BY workspace, application, workload, deployment_target, environment_order
 LIMIT ${TABLE_ROWS}`,
      [statusCell()],
    ),
  ],
);

// Rank by rank, problems first: each rank's reconcilers are chosen, named and sorted on their own, and
// the parts run in order until the page is full. Sorted as one, every one of fleet L's 240,000
// reconcilers was named before the first 5,000 were kept; a quiet fleet's page is full of its failing
// and stale ones before the succeeded are looked at. The failing and the in progress report a
// problem themselves: `reported_problem` has them found by an index (schema/0036), not among all.
const RECONCILERS_SQL = ['failure', 'stale', 'in_progress', 'success']
  .map(
    (status) => `(SELECT host, reconciler, reconciler_type, environment, workspace, application, workload, deployment_target,
       desired_version, applied_version, applied_commit, status, status_message, status_since, last_seen_at, manifests_endpoint
  FROM kalypso_host_state
 WHERE ${CHOSEN_HOSTS} AND status = '${status}'${status === 'failure' || status === 'in_progress' ? ' AND reported_problem' : ''}
 ORDER BY host, reconciler, environment_order
 LIMIT ${TABLE_ROWS})`,
  )
  .join('\nUNION ALL\n')
  .concat(`\nLIMIT ${TABLE_ROWS}`);

const clusterState = dashboard(
  'kalypso-cluster-state',
  'Kalypso · Cluster State',
  'Every host (cluster, VM, edge device) with its reconcilers, what they applied and whether they are alive.',
  [ANY_ENVIRONMENT, ANY_HOST_OF_ENVIRONMENT],
  [
    stat(
      'Hosts online',
      'Hosts online and offline (no report for longer than the stale-after setting).',
      { h: 5, w: 8, x: 0, y: 0 },
      `SELECT count(*) FILTER (WHERE NOT offline) AS online, count(*) FILTER (WHERE offline) AS offline
  FROM kalypso_host_summary WHERE ${CHOSEN_HOSTS}`,
      { online: 'green', offline: 'orange' },
    ),
    stat(
      'Reconcilers by status',
      'Reconcilers on the selected hosts, by status.',
      { h: 5, w: 16, x: 8, y: 0 },
      `SELECT sum(reconcilers) AS reconcilers, sum(succeeded) AS succeeded, sum(failed) AS failed,
       sum(in_progress) AS in_progress, sum(stale) AS stale
  FROM kalypso_host_summary WHERE ${CHOSEN_HOSTS}`,
      { succeeded: 'green', failed: 'red', in_progress: 'blue', stale: 'orange' },
    ),
    table(
      'Hosts',
      `One row per host, its environments in promotion order. Hosts with a problem first (offline, or reconcilers failing, stale or drifting), then by name; at most ${TABLE_ROWS.toLocaleString('en')} rows (narrow with the host variable). Click a host to narrow the dashboard to it.`,
      { h: 10, w: 24, x: 0, y: 5 },
      `SELECT host, host_type, offline, last_seen_at AS last_seen, reconcilers, failed, stale, in_progress, drifting, environments
  FROM kalypso_host_summary
 WHERE ${CHOSEN_HOSTS}
 ORDER BY offline OR failed > 0 OR stale > 0 OR drifting > 0 DESC, host
 LIMIT ${TABLE_ROWS}`,
      [
        linkColumn('host', 'This host only', 'kalypso-cluster-state', { host: 'host' }),
        column('offline', { id: 'mappings', value: [{ type: 'value', options: { true: { color: 'orange', text: 'offline', index: 0 }, false: { color: 'green', text: 'online', index: 1 } } }] }, { id: 'custom.cellOptions', value: { type: 'color-text' } }),
      ],
    ),
    table(
      'Reconcilers',
      `What every reconciler applied, against the version its deployment target wants. Problems first (failing, stale, in progress), each by host; at most ${TABLE_ROWS.toLocaleString('en')} rows (narrow with the host variable).`,
      { h: 14, w: 24, x: 0, y: 15 },
      RECONCILERS_SQL,
      [statusCell(), linkColumn('host', 'History of this host', 'kalypso-environment-history', { host: 'host' })],
    ),
  ],
);

const environmentHistory = dashboard(
  'kalypso-environment-history',
  'Kalypso · Environment State and History',
  'The state of each environment now, and how it got there: every state transition and every assignment.',
  // "All" hosts is no filter (ANY_HOST): a list of 20,000 names made each history panel compare
  // every row with it, and the counts per minute (schema/0028) have no host.
  [WORKSPACE, APPLICATION, ENVIRONMENT, ANY_HOST],
  [
    environmentStateTable({ h: 10, w: 24, x: 0, y: 0 }),
    timeSeries(
      'State transitions',
      'Reconciler state transitions over time, by the status entered.',
      { h: 8, w: 24, x: 0, y: 10 },
      // Every host: the counts per minute kept on write (schema/0028), not 4.8 M history rows at
      // fleet L. Some hosts: their history (a host has a few hundred rows a week).
      `SELECT $__timeGroupAlias(bucket, $__interval), sum(success) AS success, sum(failure) AS failure, sum(in_progress) AS in_progress
  FROM kalypso_transition_counts($__timeFrom(), $__timeTo(), ARRAY[$environment]::text[], ARRAY[$workspace]::text[], ARRAY[$application]::text[])
 WHERE ${ALL_HOSTS}
 GROUP BY 1
UNION ALL
SELECT $__timeGroupAlias(observed_at, $__interval),
       count(*) FILTER (WHERE status = 'success'),
       count(*) FILTER (WHERE status = 'failure'),
       count(*) FILTER (WHERE status = 'in_progress')
  FROM kalypso_environment_history
 WHERE NOT ${ALL_HOSTS} AND $__timeFilter(observed_at) AND ${TARGET_FILTER} AND host IN ($host)
 GROUP BY 1
 ORDER BY 1`,
    ),
    timeSeries(
      'Rollouts per environment',
      'When rollouts happened: new versions assigned to deployment targets, per environment (the blue marks on every dashboard are the same rollouts).',
      { h: 8, w: 24, x: 0, y: 18 },
      // Counted per minute by kalypso_rollouts_assigned (schema/0042), summed into the interval here.
      `SELECT $__timeGroupAlias(minute, $__interval), environment, sum(rollouts) AS rollouts
  FROM kalypso_rollouts_assigned($__timeFrom(), $__timeTo(), ARRAY[$environment]::text[], ARRAY[$workspace]::text[], ARRAY[$application]::text[])
 GROUP BY 1, environment, environment_order
 ORDER BY 1, environment_order`,
      {
        // One series per environment (the query's text column becomes a label): any set of them.
        defaults: {
          unit: 'none',
          decimals: 0,
          displayName: '${__field.labels.environment}',
          custom: { drawStyle: 'bars', fillOpacity: 80, stacking: { mode: 'normal' } },
        },
        overrides: [],
      },
    ),
    table(
      'Deployment history',
      'Newest first: each transition of a reconciler (host) into a commit and status. Version: the version CD assigned with that commit.',
      { h: 12, w: 24, x: 0, y: 26 },
      `SELECT observed_at, environment, workspace, application, workload, deployment_target, host, reconciler,
       version, commit_id, status, status_message
  FROM kalypso_environment_history
 WHERE $__timeFilter(observed_at) AND ${TARGET_FILTER} AND (${ALL_HOSTS} OR host IN ($host))
 ORDER BY observed_at DESC
 LIMIT 1000`,
      [statusCell(), linkColumn('host', 'State of this host', 'kalypso-cluster-state', { host: 'host' })],
    ),
    table(
      'Assignments (desired state)',
      'Newest first: versions CD pipelines assigned to deployment targets, with the GitOps commit that carries them.',
      { h: 10, w: 24, x: 0, y: 38 },
      `SELECT assigned_at, environment, workspace, application, workload, deployment_target, version, build, commit_id, is_current
  FROM kalypso_assignment_history
 WHERE $__timeFilter(assigned_at) AND ${TARGET_FILTER}
 ORDER BY assigned_at DESC
 LIMIT 1000`,
    ),
  ],
  'now-7d',
);

const drift = dashboard(
  'kalypso-drift',
  'Kalypso · Drift',
  'Desired vs real state: reconcilers not on their target’s desired commit, failing, or stale — and for how long.',
  [WORKSPACE, APPLICATION, ENVIRONMENT],
  [
    stat(
      'Drifting reconcilers',
      'By reason; a reconciler may have several.',
      { h: 5, w: 12, x: 0, y: 0 },
      `SELECT count(*) AS drifting, count(*) FILTER (WHERE not_on_desired_commit) AS not_on_desired_commit,
       count(*) FILTER (WHERE failing) AS failing, count(*) FILTER (WHERE stale) AS stale
  FROM kalypso_drift WHERE ${TARGET_FILTER}`,
      { drifting: 'yellow', failing: 'red', stale: 'orange' },
    ),
    {
      type: 'barchart',
      title: 'Drift by environment',
      description: 'Drifting reconcilers per environment, in promotion order.',
      gridPos: { h: 5, w: 12, x: 12, y: 0 },
      datasource: DATASOURCE,
      targets: [
        target(`SELECT environment, count(*) AS drifting
  FROM kalypso_drift
 WHERE ${TARGET_FILTER}
 GROUP BY environment, environment_order
 ORDER BY environment_order`),
      ],
      fieldConfig: { defaults: { color: { mode: 'fixed', fixedColor: 'yellow' } }, overrides: [] },
      options: { xField: 'environment', orientation: 'horizontal', showValue: 'auto', legend: { showLegend: false } },
    },
    table(
      'Drift',
      `Longest-standing first; at most ${TABLE_ROWS.toLocaleString('en')} rows (narrow with the variables; Drifting reconcilers counts them all). Reasons: not_on_desired_commit (the target wants another commit), failing, stale (silent too long).`,
      { h: 16, w: 24, x: 0, y: 5 },
      `SELECT environment, workspace, application, workload, deployment_target, host, reconciler,
       desired_version, applied_version, applied_commit, status, reasons, drifting_since, drifting_for_seconds, status_message
  FROM kalypso_drift
 WHERE ${TARGET_FILTER}
 ORDER BY drifting_since, host, reconciler, environment_order
 LIMIT ${TABLE_ROWS}`,
      [
        statusCell(),
        column('drifting_for_seconds', { id: 'unit', value: 's' }, { id: 'displayName', value: 'drifting for' }),
        linkColumn('host', 'State of this host', 'kalypso-cluster-state', { host: 'host' }),
      ],
    ),
  ],
);

// The Delivery dashboard calls the functions that define the delivery numbers (schema/0013,
// docs/delivery-analytics.md) — the same ones GET /api/v1/metrics/delivery calls — with the time
// range and the variables as the window and the slice. Panels choose columns; no rule is written
// here. Grafana's `$__timeFilter` would include the end of the range: the functions take
// [from, to), as the API does.

/**
 * The arguments every kalypso_delivery_* function begins with. A host selects the rollouts of the
 * endpoints its reconcilers pull or pulled; "All" (`'*'`) is no host filter at all.
 */
const DELIVERY_SCOPE = `$__timeFrom(), $__timeTo(), ARRAY[$environment]::text[], ARRAY[$workspace]::text[], ARRAY[$application]::text[],
       NULL, NULL, CASE WHEN ${ALL_HOSTS} THEN NULL ELSE ARRAY[$host]::text[] END`;
// The fix window is a single-value variable: Grafana inserts it as it is (quotes doubled).
const FIX_WINDOW_ARGUMENT = `fix_window_seconds => '$fix_window'::float8`;
const deliveryTotals = (columns: string): string => `SELECT ${columns}
  FROM kalypso_delivery_totals(${DELIVERY_SCOPE}, ${FIX_WINDOW_ARGUMENT})`;
/** A series per UTC day of assignment; days without rollouts have zero counts and no medians. */
const deliveryTrend = (columns: string): string => `SELECT day::timestamp AT TIME ZONE 'UTC' AS time, ${columns}
  FROM kalypso_delivery_trend(${DELIVERY_SCOPE}, ${FIX_WINDOW_ARGUMENT})
 ORDER BY day`;

/** A line per value over the UTC days of assignment. */
function dailyLines(unit: string, extra: Json = {}): Json {
  return {
    defaults: { unit, custom: { drawStyle: 'line', lineWidth: 2, pointSize: 6, showPoints: 'always', spanNulls: true }, ...extra },
    overrides: [],
  };
}

const delivery = dashboard(
  'kalypso-delivery',
  'Kalypso · Delivery',
  'DORA metrics and fleet convergence of the rollouts assigned in the time range: deployment frequency, lead time, convergence, change failure rate, time to restore, and the hosts that lag. The same numbers as GET /api/v1/metrics/delivery, from the same SQL functions.',
  [WORKSPACE, APPLICATION, ENVIRONMENT, ANY_HOST, FIX_WINDOW],
  [
    stat(
      'Deployment frequency',
      'Successful rollouts (every subscriber applied the version: the rollout converged, even if it regressed since) per day of the time range.',
      { h: 5, w: 4, x: 0, y: 0 },
      deliveryTotals('deployments_per_day AS per_day, successful_rollouts'),
      { per_day: 'green' },
      { decimals: 2, counts: ['successful_rollouts'] },
    ),
    stat(
      'Lead time (median)',
      'From the version’s build time until the first host, and until the last subscriber, applied it. Median over the rollouts that got there.',
      { h: 5, w: 6, x: 4, y: 0 },
      deliveryTotals('lead_time_first_host_median AS first_host, lead_time_last_host_median AS last_host'),
      {},
      { unit: 's', noValue: '–' },
    ),
    stat(
      'Convergence (median)',
      'From the assignment until 50 %, 90 % and 100 % of the subscribers applied the commit. Median over the rollouts that got there.',
      { h: 5, w: 6, x: 10, y: 0 },
      deliveryTotals('convergence_50_median AS to_50_percent, convergence_90_median AS to_90_percent, convergence_100_median AS to_100_percent'),
      {},
      { unit: 's', noValue: '–' },
    ),
    stat(
      'Change failure rate',
      'Of the rollouts that ended (converged, failed or superseded), those with failure reports or superseded within the fix window.',
      { h: 5, w: 4, x: 16, y: 0 },
      deliveryTotals('change_failure_rate, change_failures, judged'),
      { change_failure_rate: 'red' },
      { unit: 'percentunit', decimals: 1, counts: ['change_failures', 'judged'], noValue: '–' },
    ),
    stat(
      'Time to restore (median)',
      'From the first failure report of a rollout until it, or a later rollout of the same target, converged. Not restored: failed rollouts that have not been.',
      { h: 5, w: 4, x: 20, y: 0 },
      deliveryTotals('restore_median AS time_to_restore, not_restored'),
      { not_restored: 'orange' },
      { unit: 's', counts: ['not_restored'], noValue: '–' },
    ),
    timeSeries(
      'Successful rollouts per day',
      'Rollouts that converged, by UTC day of assignment.',
      { h: 8, w: 12, x: 0, y: 5 },
      deliveryTrend('successful_rollouts AS successful'),
      { defaults: { unit: 'none', decimals: 0, color: { mode: 'fixed', fixedColor: 'green' }, custom: { drawStyle: 'bars', fillOpacity: 80 } }, overrides: [] },
    ),
    timeSeries(
      'Change failure rate per day',
      'Change failures among the rollouts judged, by UTC day of assignment (fix window as chosen).',
      { h: 8, w: 12, x: 12, y: 5 },
      deliveryTrend('change_failure_rate'),
      dailyLines('percentunit', { min: 0, max: 1, color: { mode: 'fixed', fixedColor: 'red' } }),
    ),
    timeSeries(
      'Lead time per day (median)',
      'Median lead time to the first and to the last host, by UTC day of assignment.',
      { h: 8, w: 12, x: 0, y: 13 },
      deliveryTrend('lead_time_first_host_median AS first_host, lead_time_last_host_median AS last_host'),
      dailyLines('s'),
    ),
    timeSeries(
      'Convergence per day (median)',
      'Median time from the assignment to 50 %, 90 % and 100 % of the subscribers, by UTC day of assignment.',
      { h: 8, w: 12, x: 12, y: 13 },
      deliveryTrend('convergence_50_median AS to_50_percent, convergence_90_median AS to_90_percent, convergence_100_median AS to_100_percent'),
      dailyLines('s'),
    ),
    table(
      'Lagging hosts',
      'Hosts among the slowest tenth of a rollout’s subscribers (after its 50 % point, or not at all), most often first. Behind: how long after the 50 % point they applied the commit.',
      { h: 9, w: 24, x: 0, y: 21 },
      `SELECT host, lagged, not_converged, median_behind_seconds, max_behind_seconds
  FROM kalypso_delivery_laggards(${DELIVERY_SCOPE}, max_rows => 20)`,
      [
        linkColumn('host', 'State of this host', 'kalypso-cluster-state', { host: 'host' }),
        column('not_converged', { id: 'displayName', value: 'not converged' }),
        secondsColumn('median_behind_seconds', 'behind (median)'),
        secondsColumn('max_behind_seconds', 'behind (max)'),
      ],
    ),
    table(
      'Rollouts',
      'Newest first, at most 500: each rollout with subscribers, its status (a current one as the rollout gate judges it now) and its numbers. Change failure: judged a failure with the chosen fix window.',
      { h: 14, w: 24, x: 0, y: 30 },
      `SELECT assigned_at, environment, workspace, application, workload, deployment_target, version, commit_id, status, change_failure,
       subscribers, subscribers_succeeded, subscribers_failed,
       lead_time_first_host_seconds, lead_time_last_host_seconds,
       convergence_50_seconds, convergence_90_seconds, convergence_100_seconds, restore_seconds,
       array_to_string(lagging_hosts, ', ') AS lagging_hosts, build_time, superseded_at,
       array_to_string(regressed_on, ', ') AS regressed_on
  FROM kalypso_delivery_rollouts(${DELIVERY_SCOPE}, ${FIX_WINDOW_ARGUMENT}, max_rows => 500)`,
      [
        statusCell('status', valueMapping(ROLLOUT_STATUS_COLOURS)),
        linkColumn('workload', 'History of this workload', 'kalypso-environment-history', {
          environment: 'environment',
          workspace: 'workspace',
          application: 'application',
        }),
        secondsColumn('lead_time_first_host_seconds', 'lead time (first host)'),
        secondsColumn('lead_time_last_host_seconds', 'lead time (last host)'),
        secondsColumn('convergence_50_seconds', '50 %'),
        secondsColumn('convergence_90_seconds', '90 %'),
        secondsColumn('convergence_100_seconds', '100 %'),
        secondsColumn('restore_seconds', 'restored after'),
      ],
    ),
  ],
  'now-30d',
);

export const DASHBOARDS: Record<string, Json> = {
  'deployment-observability.json': deploymentObservability,
  'cluster-state.json': clusterState,
  'environment-state-and-history.json': environmentHistory,
  'drift.json': drift,
  'delivery.json': delivery,
};

export function dashboardText(dashboardJson: Json): string {
  return `${JSON.stringify(dashboardJson, null, 2)}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const [file, json] of Object.entries(DASHBOARDS)) {
    await writeFile(path.join(DASHBOARD_DIR, file), dashboardText(json));
    console.log(`wrote ${path.relative(process.cwd(), path.join(DASHBOARD_DIR, file))}`);
  }
}
