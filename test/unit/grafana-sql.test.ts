// scripts/grafana-sql.ts substitutes variables and expands macros the way Grafana's PostgreSQL
// datasource does, so that the dashboard tests run what Grafana would run.
import { describe, expect, it } from 'vitest';
import { customValues, expandGrafanaSql, type GrafanaVariable, substitution } from '../../scripts/grafana-sql.ts';

const RANGE = { from: new Date('2026-11-10T00:00:00Z'), to: new Date('2026-11-12T00:00:00Z') };
const multi: GrafanaVariable = { name: 'host', type: 'query', query: 'SELECT 1', multi: true, includeAll: true };
const single: GrafanaVariable = { name: 'fix_window', type: 'custom', query: 'never : 0,1 hour : 3600', multi: false, includeAll: false, current: { value: '3600' } };

describe('Grafana variables', () => {
  it('a custom variable offers the values of its `text : value` pairs, or its bare values', () => {
    expect(customValues('never : 0,30 minutes : 1800,1 day : 86400')).toEqual(['0', '1800', '86400']);
    expect(customValues('a,b, c')).toEqual(['a', 'b', 'c']);
  });

  it('"All" is every offered value, quoted, or a custom all value as it is', () => {
    expect(substitution(multi, ["o'neil", 'b'])).toEqual(["o'neil", 'b']);
    expect(expandGrafanaSql('host IN ($host)', new Map([['host', substitution(multi, ["o'neil", 'b'])]]), RANGE)).toBe("host IN ('o''neil','b')");
    expect(expandGrafanaSql("'*' IN ($host)", new Map([['host', substitution({ ...multi, allValue: "'*'" }, ['a'])]]), RANGE)).toBe("'*' IN ('*')");
    expect(substitution({ ...multi, allValue: "'*'" }, ['a', 'b'], ['b'])).toEqual(['b']);
  });

  it('a single-value variable is inserted as it is, quotes doubled: at its current value or as chosen', () => {
    const expand = (value: string | undefined) =>
      expandGrafanaSql("'${fix_window}'::float8", new Map([['fix_window', substitution(single, ['0', '3600'], value === undefined ? undefined : [value])]]), RANGE);
    expect(expand(undefined)).toBe("'3600'::float8");
    expect(expand('0')).toBe("'0'::float8");
    expect(expand("1'; DROP TABLE x; --")).toBe("'1''; DROP TABLE x; --'::float8");
    expect(() => substitution(single, ['0'], ['0', '3600'])).toThrow(/takes one value/);
  });

  it('refuses a variable it does not know', () => {
    expect(() => expandGrafanaSql('host IN ($nobody)', new Map(), RANGE)).toThrow(/unknown variable \$nobody/);
  });
});

describe('Grafana macros', () => {
  it('time filter, range and groups, with or without the alias and a fill', () => {
    const expand = (text: string) => expandGrafanaSql(text, new Map(), RANGE);
    expect(expand('$__timeFilter(assigned_at)')).toBe("assigned_at BETWEEN '2026-11-10T00:00:00.000Z' AND '2026-11-12T00:00:00.000Z'");
    expect(expand('$__timeTo()::timestamptz - $__timeFrom()::timestamptz')).toBe("'2026-11-12T00:00:00.000Z'::timestamptz - '2026-11-10T00:00:00.000Z'::timestamptz");
    expect(expand("$__timeGroupAlias(assigned_at, '1d', 0)")).toBe('floor(extract(epoch from assigned_at)/86400)*86400 AS "time"');
    expect(expand('$__timeGroupAlias(observed_at, $__interval)')).toBe('floor(extract(epoch from observed_at)/60)*60 AS "time"');
    expect(expand("$__timeGroup(assigned_at, '1h') AS t")).toBe('floor(extract(epoch from assigned_at)/3600)*3600 AS t');
    expect(() => expand('$__unixEpochFilter(x)')).toThrow(/\$__unixEpochFilter/); // a macro it does not expand
  });
});
