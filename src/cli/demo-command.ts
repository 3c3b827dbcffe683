// `kalypso-hub demo [--hosts N] [--otlp URL] [--follow]`: feed a realistic demo fleet into a
// running hub through its OTLP/HTTP receiver.
import { parseArgs } from 'node:util';
import { feedDemoFleet, followDemoFleet } from '../demo/demo-feeder.ts';
import { describeArgvError } from '../config/argv-errors.ts';
import { createLogger, resolveLogFormat } from '../log/logger.ts';
import { isHttpUrl } from './ask-hub.ts';
import type { Help } from './help-format.ts';
import { HELP_ENTRY } from './help-request.ts';

export const DEMO_HELP: Help = {
  usage: ['kalypso-hub demo [--hosts 40] [--otlp http://localhost:4318] [--token <token>] [--follow]'],
  about:
    'Sends a demo fleet (3 workspaces, 7 workloads, 4 environments, clusters and edge devices, with a ' +
    'rollout in progress, a failing host, an offline host and drift) to a running hub over OTLP/HTTP.',
  sections: [
    {
      title: 'Options',
      entries: [
        { term: '--hosts <n>', description: 'Hosts in the fleet, 8 to 100000 (default 40).' },
        { term: '--otlp <url>', description: 'The hub\'s OTLP/HTTP receiver (default $KALYPSO_OTLP_URL, else http://localhost:4318).' },
        { term: '--token <token>', description: 'Bearer token for the receiver, when the hub requires one (its --ingest-token).' },
        { term: '--follow', description: 'Keep the fleet moving (the rollout lands host by host) until interrupted.' },
        HELP_ENTRY,
      ],
    },
  ],
};

export async function runDemo(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  let flags: { hosts?: string; otlp?: string; token?: string; follow?: boolean };
  const flagOptions = { hosts: { type: 'string' }, otlp: { type: 'string' }, token: { type: 'string' }, follow: { type: 'boolean' } } as const;
  try {
    flags = parseArgs({ args: [...argv], options: flagOptions, strict: true }).values;
  } catch (error) {
    process.stderr.write(`kalypso-hub demo: ${describeArgvError(error, Object.keys(flagOptions))}\n(kalypso-hub demo --help shows the options)\n`);
    return 2;
  }
  const hosts = Number(flags.hosts ?? '40');
  if (!Number.isInteger(hosts) || hosts < 8 || hosts > 100_000) {
    process.stderr.write(`kalypso-hub demo: --hosts must be an integer from 8 to 100000 (got ${JSON.stringify(flags.hosts)})\n`);
    return 2;
  }
  const otlpEndpoint = flags.otlp ?? env.KALYPSO_OTLP_URL ?? 'http://localhost:4318';
  if (!isHttpUrl(otlpEndpoint)) {
    process.stderr.write(`kalypso-hub demo: --otlp must be an http:// or https:// URL (got ${JSON.stringify(otlpEndpoint)})\n`);
    return 2;
  }
  const log = createLogger('info', resolveLogFormat('auto'));
  const options = {
    otlpEndpoint,
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
    // Said once, plainly, on stderr: the URL and the cause (see sendLogs), not a log record.
    process.stderr.write(`kalypso-hub demo: ${(error as Error).message}\n`);
    return 1;
  }
}
