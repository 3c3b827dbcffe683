// What a person who just ran `npm start` in a terminal needs from the start-up, in one place: where
// the UI is, where agents send to, how to reach the database, where the data is, how to stop. The
// same facts are in the log lines; in a terminal they would scroll past between them.
import path from 'node:path';
import type { HubConfig } from '../settings.ts';
import { addressOf, postgresUrlParts, unixSocketDirectory } from '../config/postgres-url.ts';
import type { RunningHub } from '../hub.ts';

export interface BannerFacts {
  /** The address the hub listens on; a wildcard is shown as localhost. */
  readonly listenHost: string;
  readonly tls: boolean;
  readonly ports: { readonly http: number; readonly otlpGrpc: number; readonly otlpHttp: number };
  /** The database in use (an external one is shown without its credentials). */
  readonly databaseUrl: string;
  /** Set when the hub runs its embedded PostgreSQL: the psql command and the data directory. */
  readonly embedded: { readonly psql: string; readonly dataDir: string } | undefined;
}

export function bannerFacts(config: HubConfig, hub: RunningHub): BannerFacts {
  return {
    listenHost: config.listenHost,
    tls: config.tlsCertFile !== undefined,
    ports: hub.ports,
    databaseUrl: hub.databaseUrl,
    embedded: hub.psql === undefined ? undefined : { psql: hub.psql, dataDir: path.resolve(config.dataDir) },
  };
}

export function startBanner(facts: BannerFacts): string {
  const scheme = facts.tls ? 'https' : 'http';
  const host = shownHost(facts.listenHost);
  const rows: [string, string][] = [
    ['Web UI', `${scheme}://${host}:${facts.ports.http}/`],
    ['API docs', `${scheme}://${host}:${facts.ports.http}/api/docs`],
    ['OTLP/gRPC', `${scheme}://${host}:${facts.ports.otlpGrpc}`],
    ['OTLP/HTTP', `${scheme}://${host}:${facts.ports.otlpHttp}/v1/logs`],
    ...(facts.embedded === undefined
      ? ([['PostgreSQL', `external, ${withoutCredentials(facts.databaseUrl)}`]] as [string, string][])
      : ([
          ['PostgreSQL', facts.embedded.psql],
          ['Data', facts.embedded.dataDir],
        ] as [string, string][])),
  ];
  const width = Math.max(...rows.map(([label]) => label.length)) + 2;
  return [
    '',
    '  Kalypso Observability Hub is running.',
    '',
    ...rows.map(([label, value]) => `  ${label.padEnd(width)}${value}`),
    '',
    '  Ctrl-C stops it (in-flight work finishes first; a second Ctrl-C stops it at once).',
    '',
    '',
  ].join('\n');
}

function shownHost(listenHost: string): string {
  if (listenHost === '0.0.0.0' || listenHost === '::' || listenHost === '') return 'localhost';
  return listenHost.includes(':') ? `[${listenHost}]` : listenHost;
}

function withoutCredentials(url: string): string {
  const shown = postgresUrlParts(url);
  if (shown === undefined) return '(URL not shown)';
  // A Unix socket's URL has no host: its address (the socket directory) says where it connects.
  if (unixSocketDirectory(shown) !== undefined) return `${shown.pathname.slice(1)} at ${addressOf(shown)}`;
  shown.username = '';
  shown.password = '';
  shown.search = '';
  return shown.toString();
}
