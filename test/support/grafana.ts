// The generated Grafana dashboards as the tests read them, and their variables resolved the way
// Grafana resolves them: query variables run (as the caller's role), custom ones parsed.
import type pg from 'pg';
import { expect } from 'vitest';
import { customValues, expandGrafanaSql, type GrafanaVariable, type Substitution, substitution, type TimeRange } from '../../scripts/grafana-sql.ts';

export interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  datasource: { type: string; uid: string };
  targets: { refId: string; rawSql: string; format: string; datasource: { uid: string } }[];
  fieldConfig: { defaults: Record<string, any>; overrides: { matcher: { id: string; options: string }; properties: { id: string; value: any }[] }[] };
  options: Record<string, any>;
  transformations?: { id: string; options: Record<string, any> }[];
}

export interface DashboardVariable extends GrafanaVariable {
  datasource?: { uid: string };
  options?: { text: string; value: string; selected: boolean }[];
}

/** An annotation query of the dashboard (Grafana's SQL annotations: time, timeend, text, tags). */
export interface Annotation {
  name: string;
  enable: boolean;
  iconColor: string;
  datasource: { type: string; uid: string };
  target: { refId: string; rawSql: string; format: string; datasource: { uid: string } };
}

export interface Dashboard {
  uid: string;
  title: string;
  tags: string[];
  time: { from: string; to: string };
  links: { type: string; tags: string[]; includeVars: boolean }[];
  templating: { list: DashboardVariable[] };
  annotations: { list: Annotation[] };
  panels: Panel[];
}

/**
 * Every variable of `dashboard` as Grafana substitutes it, in order (a variable's query may use the
 * ones before it): those named in `chosen` with the values chosen (which must be offered), the
 * others at "All" or, without one, at their current value. Each must offer at least one value.
 */
export async function resolveVariables(
  client: pg.Client,
  dashboard: Dashboard,
  range: TimeRange,
  chosen: Record<string, string[]> = {},
): Promise<Map<string, Substitution>> {
  const values = new Map<string, Substitution>();
  for (const variable of dashboard.templating.list) {
    const offered =
      variable.type === 'custom'
        ? customValues(variable.query)
        : (await client.query<Record<string, unknown>>(expandGrafanaSql(variable.query, values, range))).rows.map((row) => String(Object.values(row)[0]));
    expect(offered.length, `${dashboard.uid}: variable ${variable.name} offers values`).toBeGreaterThan(0);
    const choice = chosen[variable.name];
    if (choice !== undefined) expect(offered, `${variable.name} offers ${choice.join(', ')}`).toEqual(expect.arrayContaining(choice));
    values.set(variable.name, substitution(variable, offered, choice));
  }
  return values;
}

export type PanelRow = Record<string, any>;

const INT8 = 20;
const NUMERIC = 1700;

/**
 * The rows of a panel's query as Grafana gets them for `range`, with the variables in `chosen` set
 * (the others at "All" or their current value), run by `client` (as kalypso_reader); bigint and
 * numeric as numbers, as Grafana shows them.
 */
export async function panelRows(
  client: pg.Client,
  dashboard: Dashboard,
  title: string,
  range: TimeRange,
  chosen: Record<string, string[]> = {},
): Promise<PanelRow[]> {
  const panel = dashboard.panels.find((candidate) => candidate.title === title);
  if (panel === undefined) throw new Error(`no panel "${title}" in ${dashboard.uid}`);
  const variables = await resolveVariables(client, dashboard, range, chosen);
  const result = await client.query(expandGrafanaSql(panel.targets[0]!.rawSql, variables, range));
  const numeric = result.fields.filter((field) => field.dataTypeID === INT8 || field.dataTypeID === NUMERIC).map((field) => field.name);
  return result.rows.map((row: PanelRow) => {
    for (const name of numeric) if (row[name] !== null) row[name] = Number(row[name]);
    return row;
  });
}
