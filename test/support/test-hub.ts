// A hub started in-process against a test database, on random ports.
import { Writable } from 'node:stream';
import pino from 'pino';
import { resolveHubConfig } from '../../src/settings.ts';
import { type HubOverrides, type RunningHub, startHub } from '../../src/hub.ts';
import { createLogger } from '../../src/log/logger.ts';

/** The flags of a test hub: the database, loopback on random ports, no Kubernetes; then `flags`. */
export function testHubFlags(databaseUrl: string, flags: readonly string[] = []): string[] {
  return [
    '--database-url',
    databaseUrl,
    '--listen-host',
    '127.0.0.1',
    '--http-port',
    '0',
    '--otlp-grpc-port',
    '0',
    '--otlp-http-port',
    '0',
    '--shutdown-timeout',
    '5s',
    '--kube',
    'off',
    ...flags,
  ];
}

export async function startTestHub(
  databaseUrl: string,
  flags: readonly string[] = [],
  overrides: HubOverrides = {},
): Promise<RunningHub> {
  const config = resolveHubConfig(testHubFlags(databaseUrl, flags), {});
  return startHub(config, createLogger(process.env.KALYPSO_TEST_LOG_LEVEL === 'debug' ? 'debug' : 'silent'), { processMetrics: false, ...overrides });
}

/**
 * A test hub whose log lines (JSON, from level info) are kept for the test to read, for what the hub
 * logs about requests; `env` gives settings through their KALYPSO_* variables.
 */
export async function startLoggingTestHub(
  databaseUrl: string,
  flags: readonly string[],
  env: Record<string, string>,
  overrides: HubOverrides = {},
): Promise<{ hub: RunningHub; lines: string[] }> {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString().split('\n').filter((line) => line !== ''));
      done();
    },
  });
  const config = resolveHubConfig(testHubFlags(databaseUrl, flags), env);
  const hub = await startHub(config, pino({ level: 'info' }, sink), { processMetrics: false, ...overrides });
  return { hub, lines };
}
