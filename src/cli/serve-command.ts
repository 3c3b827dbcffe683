// `kalypso-hub serve`: run until SIGINT/SIGTERM/SIGHUP, then shut down gracefully. A second signal
// exits at once.
import type { HubConfig } from '../settings.ts';
import { feedDemoFleet, followDemoFleet } from '../demo/demo-feeder.ts';
import { startListening } from '../hub.ts';
import { createLogger, type Logger, resolveLogFormat } from '../log/logger.ts';
import type { Help } from './help-format.ts';
import { HELP_ENTRY } from './help-request.ts';
import { PRECEDENCE, settingsHelp } from './settings-help.ts';
import { bannerFacts, startBanner } from './start-banner.ts';

export const SERVE_HELP: Help = {
  usage: ['kalypso-hub [serve] [options]', 'npm start -- [options]'],
  about:
    'Runs the hub: the OTLP receivers (gRPC and HTTP), the HTTP API with the web UI, and the store. ' +
    'Without --database-url it starts an embedded PostgreSQL with its data in --data-dir. ' +
    'Ctrl-C or SIGTERM stops it gracefully (in-flight requests finish first); a second signal exits at once.',
  sections: [{ title: 'Options', entries: [HELP_ENTRY] }, { title: 'Settings', text: PRECEDENCE }, ...settingsHelp()],
};

export async function runServe(config: HubConfig): Promise<void> {
  const log = createLogger(config.logLevel, resolveLogFormat(config.logFormat));
  let hub;
  try {
    hub = await startListening(config, log);
  } catch (error) {
    log.fatal({ err: error }, 'hub failed to start');
    process.exitCode = 1;
    return;
  }
  log.info({ ports: hub.ports, ui: `http://localhost:${hub.ports.http}/` }, 'Kalypso Observability Hub listening');
  // Only for a person at a terminal; a pipe or a pod gets the log lines alone.
  if (process.stdout.isTTY) process.stdout.write(startBanner(bannerFacts(config, hub)));
  // Ready once the database answers and is migrated; until then every answer says why not.
  const demo = new AbortController();
  hub.ready.then(
    () => {
      log.info('Kalypso Observability Hub ready');
      if (config.demo) startDemo(config, hub.ports.otlpHttp, log, demo.signal);
    },
    (error: unknown) => {
      log.fatal({ err: error }, 'hub failed to start');
      process.exit(1);
    },
  );
  const running = hub;
  let stopping = false;
  const shutdown = (signal: NodeJS.Signals): void => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    demo.abort();
    log.info({ signal }, 'shutting down: finishing in-flight work');
    running.stop().then(
      () => {
        log.info('shutdown complete');
        process.exit(0);
      },
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
  // A closed terminal sends SIGHUP; Node's default would exit at once and leave the embedded
  // PostgreSQL running with the data directory's lock held by a dead process.
  process.on('SIGHUP', shutdown);
}

/** `--demo`: a fleet of 40 hosts fed into this hub over OTLP/HTTP, then kept moving. */
function startDemo(config: HubConfig, otlpHttpPort: number, log: Logger, signal: AbortSignal): void {
  // With TLS on, the demo connects as any client would: to localhost, trusting the certificate
  // only if this process does (NODE_EXTRA_CA_CERTS for a private CA).
  const otlpEndpoint = `${config.tlsCertFile === undefined ? 'http://127.0.0.1' : 'https://localhost'}:${otlpHttpPort}`;
  const options = { otlpEndpoint, hosts: 40, log, ...(config.ingestToken === undefined ? {} : { token: config.ingestToken[0]! }) };
  feedDemoFleet(options)
    .then((fleet) => followDemoFleet(options, fleet, signal))
    .catch((error: unknown) => log.error({ err: (error as Error).message }, 'demo fleet failed'));
}
