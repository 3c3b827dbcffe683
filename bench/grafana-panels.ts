// Every Grafana panel's query on a generated fleet, as Grafana would run it: variables at "All" (or
// their default), macros expanded for the dashboard's default time range, as kalypso_reader.
import pg from 'pg';
import { DASHBOARDS } from '../scripts/grafana-dashboards.ts';
import { customValues, expandGrafanaSql, type GrafanaVariable, type Substitution, substitution } from '../scripts/grafana-sql.ts';
import { percentile, progress } from './bench-report.ts';

export interface PanelLatency {
  readonly panel: string;
  readonly rows: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
}

interface Dashboard {
  title: string;
  time: { from: string };
  templating: { list: GrafanaVariable[] };
  panels: { title: string; targets: { rawSql: string }[] }[];
}

/** `dashboards`: the files of scripts/grafana-dashboards.ts to run (default: all). */
export async function benchGrafanaPanels(databaseUrl: string, repetitions = 10, dashboards?: readonly string[]): Promise<PanelLatency[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('SET ROLE kalypso_reader');
    const results: PanelLatency[] = [];
    const chosen = Object.entries(DASHBOARDS).filter(([file]) => dashboards === undefined || dashboards.includes(file));
    for (const dashboard of chosen.map(([, json]) => json) as unknown as Dashboard[]) {
      const days = Number(/^now-(\d+)d$/.exec(dashboard.time.from)?.[1] ?? 1);
      const range = { from: new Date(Date.now() - days * 86_400_000), to: new Date() };
      const variables = new Map<string, Substitution>();
      for (const variable of dashboard.templating.list) {
        const offered =
          variable.type === 'custom'
            ? customValues(variable.query)
            : (await client.query<Record<string, unknown>>(expandGrafanaSql(variable.query, variables, range))).rows.map((row) => String(Object.values(row)[0]));
        variables.set(variable.name, substitution(variable, offered));
      }
      for (const panel of dashboard.panels) {
        const query = expandGrafanaSql(panel.targets[0]!.rawSql, variables, range);
        const samples: number[] = [];
        let rows = 0;
        for (let i = 0; i <= repetitions; i += 1) {
          const started = performance.now();
          rows = (await client.query(query)).rowCount ?? 0;
          if (i > 0) samples.push(performance.now() - started); // the first run warms the cache
        }
        const name = `${dashboard.title.replace('Kalypso · ', '')} / ${panel.title}`;
        results.push({ panel: name, rows, p50Ms: percentile(samples, 50), p95Ms: percentile(samples, 95) });
        progress(`grafana: ${name} p50 ${percentile(samples, 50)} ms`);
      }
    }
    return results;
  } finally {
    await client.end();
  }
}
