// The PrometheusRule for the hub's own health (deploy/prometheus/kalypso-hub-rules.yaml): a
// prometheus-operator object of the shape its CRD takes, every expr parses as PromQL (the grammar of
// the Prometheus repository, @prometheus-io/lezer-promql), and every metric an expr names is one a
// hub registers — read from the /metrics of a hub started here, plus the embedded PostgreSQL's pair,
// which only a hub with an embedded server registers. The Helm chart renders this file as its
// PrometheusRule; test/deploy/helm-chart.test.ts checks that rendering against it.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parser } from '@prometheus-io/lezer-promql';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { DEFAULT_RUNBOOKS } from '../../scripts/grafana-alerts.ts';
import type { RunningHub } from '../../src/hub.ts';
import { anchors } from '../docs/markdown.ts';
import { createSupervisorMetrics } from '../../src/store/embedded/postgres-supervisor.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';
import { waitFor } from '../support/wait-for.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const JOB = 'kalypso-hub-api';

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

const file = YAML.parse(await readFile(path.join(ROOT, 'deploy/prometheus/kalypso-hub-rules.yaml'), 'utf8')) as {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec: { groups: { name: string; interval?: string; rules: Rule[] }[] };
};
const rules = file.spec.groups.flatMap((group) => group.rules);

let testDb: TestDatabase;
let hub: RunningHub;
let exposition: string;

beforeAll(async () => {
  testDb = await createTestDatabase();
  hub = await startTestHub(testDb.url);
  await hub.ready;
  const scrape = async (): Promise<string> => (await fetch(`http://127.0.0.1:${hub.ports.http}/metrics`)).text();
  // Once the refreshers have run: their timestamps are what the lag alerts read.
  await waitFor(async () => /^kalypso_summary_refresh_last_run_timestamp_seconds [1-9]/m.test(await scrape()), 'a summary refresh');
  exposition = await scrape();
});

afterAll(async () => {
  await hub.stop();
  await testDb.drop();
});

/** The metric families a registry exposes (# TYPE lines), with a histogram's series. */
function families(text: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name!);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
  }
  return names;
}

/** The metric names an expr selects, and the label matchers of each selector, from its syntax tree. */
function selectors(expr: string): { errors: number; selected: { metric: string; matchers: string }[] } {
  const tree = parser.parse(expr);
  let errors = 0;
  const selected: { metric: string; matchers: string }[] = [];
  tree.iterate({
    enter(node) {
      if (node.type.isError) errors += 1;
      if (node.name === 'VectorSelector') {
        const metric = node.node.getChild('Identifier');
        const matchers = node.node.getChild('LabelMatchers');
        selected.push({
          metric: metric === null ? '' : expr.slice(metric.from, metric.to),
          matchers: matchers === null ? '' : expr.slice(matchers.from, matchers.to),
        });
      }
    },
  });
  return { errors, selected };
}

describe('PrometheusRule kalypso-hub', () => {
  it('is a monitoring.coreos.com/v1 PrometheusRule: uniquely named groups, each rule an alert with expr, severity, summary and runbook', () => {
    expect(file).toMatchObject({ apiVersion: 'monitoring.coreos.com/v1', kind: 'PrometheusRule', metadata: { name: 'kalypso-hub' } });
    // spec.groups is a list-map keyed by name (prometheusrule_types.go).
    expect(new Set(file.spec.groups.map((group) => group.name)).size).toBe(file.spec.groups.length);
    expect(new Set(rules.map((rule) => rule.alert)).size).toBe(rules.length);
    for (const rule of rules) {
      expect(rule.alert, rule.expr).toMatch(/^Kalypso[A-Za-z]+$/);
      expect(rule.record).toBeUndefined();
      expect(typeof rule.expr).toBe('string');
      if (rule.for !== undefined) expect(rule.for).toMatch(/^(\d+(ms|s|m|h|d|w|y))+$/);
      expect(['critical', 'warning']).toContain(rule.labels?.['severity']);
      expect(Object.keys(rule.annotations ?? {}).sort(), rule.alert).toEqual(['description', 'runbook_url', 'summary']);
    }
  });

  it('each runbook_url is a section of docs/alerts.md', async () => {
    const doc = anchors({ path: 'docs/alerts.md', text: await readFile(path.join(ROOT, 'docs/alerts.md'), 'utf8') });
    for (const rule of rules) {
      const url = new URL(rule.annotations!['runbook_url']!);
      expect(url.href.slice(0, -url.hash.length), rule.alert).toBe(DEFAULT_RUNBOOKS);
      expect(doc, rule.alert).toContain(url.hash.slice(1));
    }
  });

  it('covers the hub’s health: down, not ready, database, ingest, refreshes, embedded PostgreSQL, Resource Graph, CRD watch', () => {
    expect(rules.map((rule) => rule.alert)).toEqual([
      'KalypsoHubDown',
      'KalypsoHubReplicaDown',
      'KalypsoHubNotReady',
      'KalypsoHubDatabaseUnavailable',
      'KalypsoEmbeddedPostgresDown',
      'KalypsoEmbeddedPostgresRestarted',
      'KalypsoIngestUnavailable',
      'KalypsoIngestRecordsRejected',
      'KalypsoIngestExportsRefused',
      'KalypsoIngestDecodeMemoryFull',
      'KalypsoStoreWritesSlow',
      'KalypsoDatabasePoolExhausted',
      'KalypsoSummaryRefreshLagging',
      'KalypsoRolloutRefreshLagging',
      'KalypsoApiErrors',
      'KalypsoResourceGraphPollsFailing',
      'KalypsoResourceGraphThrottled',
      'KalypsoResourceGraphAmbiguousTargets',
      'KalypsoCrdWatchFailing',
    ]);
  });

  it('the parser finds broken PromQL', () => {
    expect(selectors('sum(rate(kalypso_ingest_records_total[5m])) > ').errors).toBeGreaterThan(0);
    expect(selectors('rate(kalypso_ingest_records_total{job="x"[5m])').errors).toBeGreaterThan(0);
    expect(selectors('sum by (job) (rate(kalypso_ingest_records_total{job="x"}[5m])) > 0').errors).toBe(0);
  });

  it.each(rules.map((rule) => [rule.alert!, rule] as const))('%s: parses, names only metrics the hub registers, each selected on the hub’s job', (_alert, rule) => {
    const { errors, selected } = selectors(rule.expr);
    expect(errors, rule.expr).toBe(0);
    expect(selected.length).toBeGreaterThan(0);
    const registered = families(exposition);
    for (const name of families(embeddedRegistry().metricsText)) registered.add(name);
    for (const { metric, matchers } of selected) {
      if (metric !== 'up') expect(registered, `${rule.alert}: ${metric}`).toContain(metric);
      // One job to replace when the scrape job has another name (see the file's header).
      expect(matchers, `${rule.alert}: ${metric}`).toContain(`job="${JOB}"`);
    }
  });

  it('reads what a healthy hub says: ready, its database up, refreshed, no watch error', () => {
    expect(exposition).toMatch(/^kalypso_ready 1$/m);
    expect(exposition).toMatch(/^kalypso_database_up 1$/m);
    const lastRun = Number(/^kalypso_summary_refresh_last_run_timestamp_seconds (\S+)$/m.exec(exposition)?.[1]);
    expect(Date.now() / 1_000 - lastRun).toBeLessThan(60);
    expect(exposition).toMatch(/^# TYPE kalypso_kube_watch_errors_total counter$/m);
  });
});

/** The embedded PostgreSQL's metrics, registered as a hub with an embedded server registers them. */
function embeddedRegistry(): { metricsText: string } {
  const registry = new Registry();
  createSupervisorMetrics(registry);
  // Their HELP and TYPE lines are all that `families` reads; a counter's are there before any value.
  return {
    metricsText: registry
      .getMetricsAsArray()
      .map((metric) => `# TYPE ${metric.name} ${metric.type}`)
      .join('\n'),
  };
}
