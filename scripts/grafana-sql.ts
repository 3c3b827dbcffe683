// What Grafana's PostgreSQL datasource does to a panel's SQL before it runs it: expand the time
// macros and substitute template variables (multi-value → quoted, comma-separated list). Shared
// by the dashboard tests and the panel benchmark.

export interface TimeRange {
  readonly from: Date;
  readonly to: Date;
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

export function expandGrafanaSql(
  rawSql: string,
  variables: ReadonlyMap<string, readonly string[]>,
  range: TimeRange,
  interval = '1m',
): string {
  let text = rawSql.replaceAll('$__interval', interval);
  text = text.replace(/\$__timeFilter\(([^)]+)\)/g, (_, column: string) => `${column.trim()} BETWEEN '${range.from.toISOString()}' AND '${range.to.toISOString()}'`);
  text = text.replace(/\$__timeGroupAlias\(([^,]+),([^)]+)\)/g, (_, column: string, step: string) => {
    const seconds = intervalSeconds(step);
    return `floor(extract(epoch from ${column.trim()})/${seconds})*${seconds} AS "time"`;
  });
  text = text.replaceAll('$__timeFrom()', `'${range.from.toISOString()}'`).replaceAll('$__timeTo()', `'${range.to.toISOString()}'`);
  text = text.replace(/\$\{(\w+)\}|\$(\w+)/g, (whole: string, braced: string | undefined, bare: string | undefined) => {
    const name = braced ?? bare!;
    const values = variables.get(name);
    if (values === undefined) throw new Error(`unknown variable ${whole} in: ${rawSql}`);
    return sqlList(values);
  });
  if (/\$__\w+/.test(text)) throw new Error(`unexpanded macro in: ${text}`);
  return text;
}
