// A hub started in-process against a test database, on random ports.
import { resolveHubConfig } from '../../src/settings.ts';
import { type HubOverrides, type RunningHub, startHub } from '../../src/hub.ts';
import { createLogger } from '../../src/log/logger.ts';

export async function startTestHub(
  databaseUrl: string,
  flags: readonly string[] = [],
  overrides: HubOverrides = {},
): Promise<RunningHub> {
  const config = resolveHubConfig(
    [
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
    ],
    {},
  );
  return startHub(config, createLogger(process.env.KALYPSO_TEST_LOG_LEVEL === 'debug' ? 'debug' : 'silent'), { processMetrics: false, ...overrides });
}
