// `kalypso-hub <command>`: serve (default), migrate, help.
import { ConfigError, resolveConfig } from '../config/config.ts';
import { settingsMarkdown } from '../config/settings-markdown.ts';
import { createLogger } from '../log/logger.ts';
import { DEMO_USAGE, runDemo } from './demo-command.ts';
import { runMigrate } from './migrate-command.ts';
import { ROLLOUT_USAGE, runRollout } from './rollout-command.ts';
import { runServe } from './serve-command.ts';

const USAGE = `Usage: kalypso-hub [command] [flags]

Commands:
  serve      run the hub: OTLP receivers, API, store (default)
  migrate    apply database migrations and exit
  rollout    rollout gate for CD pipelines (kalypso-hub rollout --help)
  demo       feed a demo fleet into a running hub (kalypso-hub demo --help)
  help       show this help

Settings (flag > KALYPSO_* variable > generic variable > default):
${settingsMarkdown()}
`;

const args = process.argv.slice(2);
const command = args[0] === undefined || args[0].startsWith('-') ? 'serve' : args[0];
const flags = command === args[0] ? args.slice(1) : args;

try {
  switch (command) {
    case 'serve':
      await runServe(resolveConfig(flags, process.env));
      break;
    case 'migrate':
      process.exitCode = await runMigrate(resolveConfig(flags, process.env));
      break;
    case 'rollout':
      if (flags.includes('--help')) process.stdout.write(ROLLOUT_USAGE);
      else process.exitCode = await runRollout(flags, process.env);
      break;
    case 'demo':
      if (flags.includes('--help')) process.stdout.write(DEMO_USAGE);
      else process.exitCode = await runDemo(flags, process.env);
      break;
    case 'help':
    case '--help':
      process.stdout.write(USAGE);
      break;
    default:
      process.stderr.write(`unknown command ${JSON.stringify(command)}\n\n${USAGE}`);
      process.exitCode = 2;
  }
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  createLogger('info').fatal(`configuration error: ${error.message}`);
  process.exitCode = 2;
}
