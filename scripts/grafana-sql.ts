// What Grafana's PostgreSQL datasource does to a panel's SQL before it runs it: expand the time
// macros and substitute template variables (multi-value → quoted, comma-separated list). Shared
// by the dashboard tests and the panel benchmark.

export interface TimeRange {
  readonly from: Date;
  readonly to: Date;
}

/**
 * What Grafana puts in a query for a variable. A list — each value quoted, comma-separated — for a
 * multi-value or "All"-capable variable; text inserted as it is for a custom "All" value (allValue)
 * and for a single-value variable (see `substitution`).
 */
export type Substitution = readonly string[] | string;

/** A dashboard variable: as much of its JSON as decides what Grafana substitutes for it. */
export interface GrafanaVariable {
  readonly name: string;
  readonly type: string;
  readonly query: string;
  readonly multi?: boolean;
  readonly includeAll?: boolean;
  readonly allValue?: string;
  readonly current?: { readonly value: string | readonly string[] };
}

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

function intervalSeconds(text: string): number {
  const match = /^'?(\d+)([smhd])'?$/.exec(text.trim());
  if (match === null) throw new Error(`interval ${text} is not one Grafana would pass`);
  return Number(match[1]) * UNIT_SECONDS[match[2]!]!;
}

/** `'a','b'`, with quotes doubled, as Grafana renders a multi-value variable for SQL. */
export function sqlList(values: readonly string[]): string {
  return values.map((value) => `'${value.replaceAll("'", "''")}'`).join(',');
}

/** The values a custom variable offers: its query is `a,b,c` or `text : value` pairs, comma-separated. */
export function customValues(query: string): string[] {
  return query.split(',').map((option) => {
    const [text, value] = option.split(' : ');
    return (value ?? text!).trim();
  });
}

/**
 * What Grafana substitutes for `variable` when `selected` is chosen (undefined: "All" for a variable
 * that has it, its current value otherwise); `offered` is what its query returned. "All" is every
 * offered value, or the variable's custom allValue inserted as it is. A single-value variable's value
 * is inserted as it is with its quotes doubled, not quoted: the SQL quotes it where it needs to.
 */
export function substitution(variable: GrafanaVariable, offered: readonly string[], selected?: readonly string[]): Substitution {
  if (selected === undefined && variable.includeAll === true) return variable.allValue ?? offered;
  const current = variable.current?.value;
  const values = selected ?? (typeof current === 'string' ? [current] : (current ?? []));
  if (variable.multi === true || variable.includeAll === true) return values;
  if (values.length !== 1) throw new Error(`variable ${variable.name} takes one value, not ${values.length}`);
  return values[0]!.replaceAll("'", "''");
}

export function expandGrafanaSql(rawSql: string, variables: ReadonlyMap<string, Substitution>, range: TimeRange, interval = '1m'): string {
  let text = rawSql.replaceAll('$__interval', interval);
  text = text.replace(/\$__timeFilter\(([^)]+)\)/g, (_, column: string) => `${column.trim()} BETWEEN '${range.from.toISOString()}' AND '${range.to.toISOString()}'`);
  // $__timeGroup(column, step[, fill]): the fill (0, NULL, previous) is applied by Grafana to the result.
  text = text.replace(/\$__timeGroup(Alias)?\(([^,]+),([^,)]+)(?:,[^)]+)?\)/g, (_, alias: string | undefined, column: string, step: string) => {
    const seconds = intervalSeconds(step);
    return `floor(extract(epoch from ${column.trim()})/${seconds})*${seconds}${alias === undefined ? '' : ' AS "time"'}`;
  });
  text = text.replaceAll('$__timeFrom()', `'${range.from.toISOString()}'`).replaceAll('$__timeTo()', `'${range.to.toISOString()}'`);
  text = text.replace(/\$\{(\w+)\}|\$(\w+)/g, (whole: string, braced: string | undefined, bare: string | undefined) => {
    const name = braced ?? bare!;
    const value = variables.get(name);
    if (value === undefined) throw new Error(`unknown variable ${whole} in: ${rawSql}`);
    return typeof value === 'string' ? value : sqlList(value);
  });
  if (/\$__\w+/.test(text)) throw new Error(`unexpanded macro in: ${text}`);
  return text;
}
