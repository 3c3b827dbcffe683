// Writes Grafana's alerting provisioning for Kalypso (run: npm run grafana:alerts), generated like
// the dashboards so that the rules, their two routings and their contact points cannot drift apart:
//
//   deploy/grafana/provisioning/alerting/kalypso-alerts.yaml          the rules, routed nowhere: safe to
//                                                                      load in any Grafana, always
//   deploy/grafana/provisioning/alerting-webhook/kalypso-alerts.yaml   the same rules, each sent to the
//                                                                      "Kalypso" contact point
//   deploy/grafana/provisioning/alerting-webhook/contact-point-*.yaml  that contact point: webhook, slack, teams
//
// deploy/grafana/select-alerting.sh puts the first alone into Grafana's provisioning directory when
// KALYPSO_ALERT_WEBHOOK_URL is unset, and the routed rules with one contact point when it is set.
// Why two files rather than one with a variable: Grafana expands an unset variable to "", an empty
// webhook url fails provisioning and Grafana does not start, and a rule routed to a contact point
// that is not provisioned fails it too (docs/research/grafana-alerting-provisioning.md). Routing is
// per rule (notification_settings): a `policies:` file would replace the org's whole routing tree.
//
// Every rule queries a kalypso_* view as kalypso_reader (schema/0026); test/grafana/alerts.test.ts
// runs each against fleets where it must fire and where it must not, and checks these files against
// Grafana's documented provisioning schema with the variables set and unset.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { DASHBOARDS, DATASOURCE } from './grafana-dashboards.ts';

const GRAFANA_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../deploy/grafana');
export const ALERTING_DIR = path.join(GRAFANA_DIR, 'provisioning/alerting');
export const ALERTING_WEBHOOK_DIR = path.join(GRAFANA_DIR, 'provisioning/alerting-webhook');

/** The contact point the routed rules name, and the integrations it may be (KALYPSO_ALERT_WEBHOOK_TYPE). */
export const CONTACT_POINT = 'Kalypso';
export const CONTACT_POINT_TYPES = ['webhook', 'slack', 'teams'] as const;

/**
 * Where each rule's runbook_url points when KALYPSO_ALERT_RUNBOOK_URL is unset: this repository's
 * docs/alerts.md, one section per rule (the anchor is the rule's `runbook`).
 */
export const DEFAULT_RUNBOOKS = 'https://github.com/microsoft/kalypso-observability-hub/blob/main/docs/alerts.md';
/** The hub's own default address (--http-port 8080), for links when KALYPSO_PUBLIC_URL is unset. */
export const DEFAULT_HUB_URL = 'http://localhost:8080';

type Json = Record<string, unknown>;

export interface KalypsoAlertRule {
  readonly uid: string;
  readonly title: string;
  readonly group: 'kalypso-deployments' | 'kalypso-fleet';
  /** One numeric column (the alert's value, `$values.A`) and text columns (one instance per row, labelled by them). */
  readonly sql: string;
  /** The text columns: the labels of each instance. */
  readonly labels: readonly string[];
  /** The numeric column. */
  readonly value: string;
  readonly for: string;
  readonly severity: 'critical' | 'warning';
  readonly summary: string;
  readonly description: string;
  /** The hub's page for an instance: a path with Go-template placeholders. */
  readonly hubPath: string;
  /** docs/alerts.md's section for the rule. */
  readonly runbook: string;
  readonly dashboard: string;
  readonly panel: string;
}

// Text columns become labels and the numeric column the value (Grafana's "alert on numeric data"):
// a query that returns no row is "no data", which for these queries means nothing is wrong, hence
// noDataState OK below.
export const ALERT_RULES: readonly KalypsoAlertRule[] = [
  {
    uid: 'kalypso-rollout-failed',
    title: 'Kalypso: rollout failed',
    group: 'kalypso-deployments',
    sql: `SELECT environment, workspace, application, workload, deployment_target, version, commit_id AS commit,
       failed::float8 AS failed_reconcilers
  FROM kalypso_current_rollout
 WHERE status = 'failed'`,
    labels: ['environment', 'workspace', 'application', 'workload', 'deployment_target', 'version', 'commit'],
    value: 'failed_reconcilers',
    // A reconciler retrying (Flux between two attempts) reports in progress for a moment: a failure
    // that lasts two evaluations is one to tell.
    for: '1m',
    severity: 'critical',
    summary: 'Rollout of {{ $labels.workload }} {{ $labels.version }} failed in {{ $labels.environment }}',
    description:
      '{{ $values.A.Value }} reconciler(s) of {{ $labels.workspace }}/{{ $labels.application }}/{{ $labels.workload }} · {{ $labels.deployment_target }} report a failure on commit {{ $labels.commit }} (or a later one of the same version).',
    hubPath: '/rollout?environment={{ urlquery $labels.environment }}&commit={{ urlquery $labels.commit }}',
    runbook: 'rollout-failed',
    dashboard: 'kalypso-environment-history',
    panel: 'Rollouts per environment',
  },
  {
    uid: 'kalypso-rollout-not-converged',
    title: 'Kalypso: rollout not converged within its window',
    group: 'kalypso-deployments',
    sql: `SELECT environment, workspace, application, workload, deployment_target, version, commit_id AS commit,
       (in_progress + stale)::float8 AS pending_reconcilers
  FROM kalypso_current_rollout
 WHERE overdue`,
    labels: ['environment', 'workspace', 'application', 'workload', 'deployment_target', 'version', 'commit'],
    value: 'pending_reconcilers',
    // The window (--rollout-window) is counted in the database from the assignment: nothing to add.
    for: '0s',
    severity: 'warning',
    summary: 'Rollout of {{ $labels.workload }} {{ $labels.version }} in {{ $labels.environment }} has not converged within its window',
    description:
      '{{ $values.A.Value }} reconciler(s) of {{ $labels.workspace }}/{{ $labels.application }}/{{ $labels.workload }} · {{ $labels.deployment_target }} are not yet on commit {{ $labels.commit }} (in progress or stale) longer after its assignment than the hub’s --rollout-window.',
    hubPath: '/rollout?environment={{ urlquery $labels.environment }}&commit={{ urlquery $labels.commit }}',
    runbook: 'rollout-not-converged',
    dashboard: 'kalypso-environment-history',
    panel: 'Rollouts per environment',
  },
  {
    uid: 'kalypso-reconciler-off-commit',
    title: 'Kalypso: reconciler off its desired commit',
    group: 'kalypso-deployments',
    sql: `SELECT environment, workspace, application, workload, deployment_target, host, reconciler, desired_version,
       round(off_for_seconds / 60.0)::float8 AS minutes_off
  FROM kalypso_off_desired_commit
 WHERE over_threshold`,
    labels: ['environment', 'workspace', 'application', 'workload', 'deployment_target', 'host', 'reconciler', 'desired_version'],
    value: 'minutes_off',
    // The threshold (--off-commit-after) is counted in the database: nothing to add.
    for: '0s',
    severity: 'warning',
    summary: '{{ $labels.reconciler }} on {{ $labels.host }} is not on the desired commit of {{ $labels.workload }} in {{ $labels.environment }}',
    description:
      'It reports, but has run another commit than the desired rollout ({{ $labels.desired_version }}) of {{ $labels.workspace }}/{{ $labels.application }}/{{ $labels.workload }} · {{ $labels.deployment_target }} for {{ $values.A.Value }} minutes, longer than the hub’s --off-commit-after.',
    // The environment's drift: every reconciler off its target's desired state, with since when.
    hubPath: '/drift?environment={{ urlquery $labels.environment }}',
    runbook: 'reconciler-off-its-desired-commit',
    dashboard: 'kalypso-drift',
    panel: 'Drift',
  },
  {
    uid: 'kalypso-host-offline',
    title: 'Kalypso: host offline',
    group: 'kalypso-fleet',
    // A host whose reconcilers were all removed (a deleted cluster, a vanished Azure configuration)
    // is history, not an outage.
    sql: `SELECT host, host_type, coalesce(environments, '') AS environments,
       round(extract(epoch FROM now() - last_seen_at) / 60.0)::float8 AS minutes_silent
  FROM kalypso_host_summary
 WHERE offline AND reconcilers > 0`,
    labels: ['host', 'host_type', 'environments'],
    value: 'minutes_silent',
    // Offline already means silent for longer than stale-after; five more minutes let a collector's
    // retries land before anyone is told.
    for: '5m',
    severity: 'warning',
    summary: 'Host {{ $labels.host }} is offline',
    description:
      'No report from {{ $labels.host }} ({{ $labels.host_type }}; {{ $labels.environments }}) for {{ $values.A.Value }} minutes, longer than the hub’s --stale-after: its reconcilers count as stale.',
    hubPath: '/hosts/{{ urlquery $labels.host }}',
    runbook: 'host-offline',
    dashboard: 'kalypso-cluster-state',
    panel: 'Hosts',
  },
  {
    uid: 'kalypso-source-silent',
    title: 'Kalypso: source failing',
    group: 'kalypso-fleet',
    sql: `SELECT source_type, source_name, round(silent_for_seconds / 60.0)::float8 AS minutes_silent
  FROM kalypso_polled_source
 WHERE silent`,
    labels: ['source_type', 'source_name'],
    value: 'minutes_silent',
    for: '5m',
    severity: 'critical',
    summary: '{{ $labels.source_type }} source {{ $labels.source_name }} has confirmed none of its reconcilers for {{ $values.A.Value }} minutes',
    description:
      'Its polls fail (or no cluster it sees is alive): every reconciler it reported turns stale. Why a poll fails is on its AzureResourceGraph resource (Ready condition) and in the hub’s /metrics (kalypso_arg_poll_errors_total; the PrometheusRule alerts on it).',
    hubPath: '/hosts?offline=true',
    runbook: 'source-failing',
    dashboard: 'kalypso-cluster-state',
    panel: 'Hosts',
  },
];

/** The Go template of an annotation that links to `suffix` under the URL a label carries, or `fallback`. */
function linkUnder(label: string, fallback: string, suffix: string): string {
  // Trailing slashes of the configured URL are dropped, so that ".../" + "/rollout" is one slash.
  return `{{ reReplaceAll "/+$" "" (or $labels.${label} "${fallback}") }}${suffix}`;
}

/** The panel id of `title` on dashboard `uid`: a rule shows its state there. */
function panelId(uid: string, title: string): number {
  const dashboard = Object.values(DASHBOARDS).find((candidate) => candidate['uid'] === uid);
  const panel = (dashboard?.['panels'] as { id: number; title: string }[] | undefined)?.find((candidate) => candidate.title === title);
  if (panel === undefined) throw new Error(`no panel "${title}" on dashboard ${uid}`);
  return panel.id;
}

function ruleJson(rule: KalypsoAlertRule, routed: boolean): Json {
  return {
    uid: rule.uid,
    title: rule.title,
    condition: 'C',
    data: [
      {
        refId: 'A',
        relativeTimeRange: { from: 600, to: 0 },
        datasourceUid: DATASOURCE.uid,
        model: { refId: 'A', datasource: DATASOURCE, editorMode: 'code', rawQuery: true, format: 'table', rawSql: rule.sql },
      },
      {
        refId: 'C',
        datasourceUid: '__expr__',
        model: {
          refId: 'C',
          datasource: { type: '__expr__', uid: '__expr__' },
          type: 'threshold',
          expression: 'A',
          conditions: [{ evaluator: { type: 'gt', params: [0] } }],
        },
      },
    ],
    dashboardUid: rule.dashboard,
    panelId: panelId(rule.dashboard, rule.panel),
    // No row: nothing is wrong. A query that fails is an error to see, not an alert to page on.
    noDataState: 'OK',
    execErrState: 'Error',
    for: rule.for,
    // Labels are interpolated by Grafana's provisioning (annotations are not): the two URLs come in
    // as labels so that the annotations can build links from them. Unset, they are empty and the
    // annotations fall back to the defaults.
    labels: {
      app: 'kalypso',
      severity: rule.severity,
      kalypso_hub_url: '${KALYPSO_PUBLIC_URL}',
      kalypso_runbooks: '${KALYPSO_ALERT_RUNBOOK_URL}',
    },
    annotations: {
      summary: rule.summary,
      description: rule.description,
      runbook_url: linkUnder('kalypso_runbooks', DEFAULT_RUNBOOKS, `#${rule.runbook}`),
      hub_url: linkUnder('kalypso_hub_url', DEFAULT_HUB_URL, rule.hubPath),
    },
    ...(routed ? { notification_settings: { receiver: CONTACT_POINT, group_by: ['grafana_folder', 'alertname'] } } : {}),
  };
}

function rulesFile(routed: boolean): Json {
  const groups = [...new Set(ALERT_RULES.map((rule) => rule.group))];
  return {
    apiVersion: 1,
    groups: groups.map((group) => ({
      orgId: 1,
      name: group,
      folder: 'Kalypso',
      interval: '1m',
      rules: ALERT_RULES.filter((rule) => rule.group === group).map((rule) => ruleJson(rule, routed)),
    })),
  };
}

function contactPointFile(type: (typeof CONTACT_POINT_TYPES)[number]): Json {
  // The webhook: Grafana's own JSON payload, for any receiver. Slack and Teams: their incoming
  // webhook URLs want their own payloads, which these integrations send.
  const settings = type === 'webhook' ? { url: '${KALYPSO_ALERT_WEBHOOK_URL}', httpMethod: 'POST' } : { url: '${KALYPSO_ALERT_WEBHOOK_URL}' };
  return { apiVersion: 1, contactPoints: [{ orgId: 1, name: CONTACT_POINT, receivers: [{ uid: 'kalypso-alerts', type, settings, disableResolveMessage: false }] }] };
}

function yamlText(header: string, json: Json): string {
  const body = YAML.stringify(json, { lineWidth: 0, aliasDuplicateObjects: false });
  return `${header
    .trim()
    .split('\n')
    .map((line) => `# ${line}`.trimEnd())
    .join('\n')}\n${body}`;
}

const GENERATED = 'Generated by scripts/grafana-alerts.ts (npm run grafana:alerts); edit that, not this file.';

/** Every file this script writes, by path, with its text. */
export function alertingFiles(): Map<string, string> {
  const files = new Map<string, string>();
  files.set(
    path.join(ALERTING_DIR, 'kalypso-alerts.yaml'),
    yamlText(
      `Kalypso's alert rules (docs/alerts.md), routed nowhere: they evaluate and show in Grafana, and the
org's own notification policy decides where they go (a fresh Grafana's sends nothing). With
KALYPSO_ALERT_WEBHOOK_URL set, deploy/grafana/select-alerting.sh provisions
../alerting-webhook/ instead: these rules sent to the Kalypso contact point.
${GENERATED}`,
      rulesFile(false),
    ),
  );
  files.set(
    path.join(ALERTING_WEBHOOK_DIR, 'kalypso-alerts.yaml'),
    yamlText(
      `Kalypso's alert rules (docs/alerts.md), each sent to the "Kalypso" contact point: provision with one
contact-point-*.yaml of this directory (deploy/grafana/select-alerting.sh picks it), never alone —
Grafana refuses a rule whose contact point does not exist, and then does not start.
${GENERATED}`,
      rulesFile(true),
    ),
  );
  for (const type of CONTACT_POINT_TYPES) {
    files.set(
      path.join(ALERTING_WEBHOOK_DIR, `contact-point-${type}.yaml`),
      yamlText(
        `The "Kalypso" contact point as a ${type} integration, its URL from KALYPSO_ALERT_WEBHOOK_URL in Grafana's
environment. Provision it only when that is set: an empty url fails provisioning, and Grafana does
not start (deploy/grafana/select-alerting.sh decides).
${GENERATED}`,
        contactPointFile(type),
      ),
    );
  }
  return files;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const [file, text] of alertingFiles()) {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, text);
    console.log(`wrote ${path.relative(process.cwd(), file)}`);
  }
}
