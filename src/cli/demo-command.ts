// `kalypso-hub demo [--hosts N] [--otlp URL] [--follow]`: feed a realistic demo fleet into a
// running hub through its OTLP/HTTP receiver.
import { parseArgs } from 'node:util';
import { feedDemoFleet, followDemoFleet } from '../demo/demo-feeder.ts';
import { createLogger } from '../log/logger.ts';

export const DEMO_USAGE = `Usage: kalypso-hub demo [--hosts 40] [--otlp http://localhost:4318] [--token T] [--follow]

Sends a demo fleet — 3 workspaces, 7 workloads, 4 environments, clusters and edge devices, with a
rollout in progress, a failing host, an offline host and drift — to a running hub over OTLP/HTTP.
--follow keeps it moving (the rollout lands host by host) until interrupted.
`;

export async function runDemo(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  let flags: { hosts?: string; otlp?: string; token?: string; follow?: boolean };
  try {
    flags = parseArgs({
      args: [...argv],
      options: { hosts: { type: 'string' }, otlp: { type: 'string' }, token: { type: 'string' }, follow: { type: 'boolean' } },
      strict: true,
    }).values;
  } catch (error) {
    process.stderr.write(`kalypso-hub demo: ${(error as Error).message}\n\n${DEMO_USAGE}`);
    return 2;
  }
  const hosts = Number(flags.hosts ?? '40');
  if (!Number.isInteger(hosts) || hosts < 8 || hosts > 100_000) {
    process.stderr.write(`kalypso-hub demo: --hosts must be an integer from 8 to 100000 (got ${JSON.stringify(flags.hosts)})\n`);
    return 2;
  }
  const log = createLogger('info');
  const options = {
    otlpEndpoint: flags.otlp ?? env.KALYPSO_OTLP_URL ?? 'http://localhost:4318',
    hosts,
    log,
    ...(flags.token === undefined ? {} : { token: flags.token }),
  };
  try {
    const fleet = await feedDemoFleet(options);
    if (flags.follow === true) {
      const stop = new AbortController();
      process.once('SIGINT', () => stop.abort());
      process.once('SIGTERM', () => stop.abort());
      await followDemoFleet(options, fleet, stop.signal);
    }
    return 0;
  } catch (error) {
    log.error({ err: (error as Error).message }, 'demo failed');
    return 1;
  }
}
