// `kalypso-hub <command>`: serve (default), migrate, rollout, demo, help. `--help` or `-h` on any of
// them prints its help and exits 0; a mistake on the command line is one plain line on stderr
// (exit 2), naming what was wrong — it is read by a person, not by a log pipeline.
import { ConfigError } from '../config/config.ts';
import { resolveHubConfig } from '../settings.ts';
import { DEMO_HELP, runDemo } from './demo-command.ts';
import { formatHelp, type Help, helpWidth } from './help-format.ts';
import { asksForHelp, HELP_ENTRY } from './help-request.ts';
import { MIGRATE_HELP, runMigrate } from './migrate-command.ts';
import { ROLLOUT_HELP, runRollout } from './rollout-command.ts';
import { runServe, SERVE_HELP } from './serve-command.ts';
import { PRECEDENCE, settingsHelp } from './settings-help.ts';

const MAIN_HELP: Help = {
  usage: ['kalypso-hub [command] [options]', 'npm run hub -- [command] [options]'],
  about:
    'Kalypso Observability Hub: what is deployed where across a fleet. Desired and real deployment state, ' +
    'from OTLP, Kubernetes and Azure Resource Graph, with history, in PostgreSQL. Without a command it runs the hub (serve).',
  sections: [
    {
      title: 'Commands',
      entries: [
        { term: 'serve', description: 'Run the hub: OTLP receivers, HTTP API and web UI, store (the default; npm start).' },
        { term: 'migrate', description: 'Apply the database migrations and exit.' },
        { term: 'rollout', description: 'The rollout gate for CD pipelines: has every subscriber applied a commit?' },
        { term: 'demo', description: 'Feed a demo fleet into a running hub.' },
        { term: 'help [command]', description: 'This help, or a command\'s (as kalypso-hub <command> --help).' },
      ],
    },
    { title: 'Options', entries: [HELP_ENTRY] },
    { title: 'Settings of serve and migrate', text: PRECEDENCE },
    ...settingsHelp(),
  ],
};

const COMMAND_HELP: Readonly<Record<string, Help>> = {
  serve: SERVE_HELP,
  migrate: MIGRATE_HELP,
  rollout: ROLLOUT_HELP,
  demo: DEMO_HELP,
  help: MAIN_HELP,
};

const args = process.argv.slice(2);
// Flags alone (`npm run hub -- --http-port 9090`) are serve's.
const named = args[0] !== undefined && !args[0].startsWith('-');
const command = named ? args[0]! : 'serve';
const flags = named ? args.slice(1) : args;

function printHelp(help: Help): void {
  process.stdout.write(formatHelp(help, helpWidth(process.stdout)));
}

function commandLineError(message: string): void {
  process.stderr.write(`${message}\n`);
  process.exitCode = 2;
}

if (!named && asksForHelp(flags)) {
  printHelp(MAIN_HELP);
} else if (command === 'help') {
  const topic = flags.find((flag) => !flag.startsWith('-'));
  const help = topic === undefined ? MAIN_HELP : COMMAND_HELP[topic];
  if (help === undefined) commandLineError(`kalypso-hub help: unknown command ${JSON.stringify(topic)} (commands: ${Object.keys(COMMAND_HELP).join(', ')})`);
  else printHelp(help);
} else if (COMMAND_HELP[command] === undefined) {
  commandLineError(`kalypso-hub: unknown command ${JSON.stringify(command)} (commands: ${Object.keys(COMMAND_HELP).join(', ')}; kalypso-hub --help)`);
} else if (asksForHelp(flags)) {
  printHelp(COMMAND_HELP[command]);
} else {
  try {
    switch (command) {
      case 'serve':
        await runServe(resolveHubConfig(flags, process.env));
        break;
      case 'migrate':
        process.exitCode = await runMigrate(resolveHubConfig(flags, process.env));
        break;
      case 'rollout':
        process.exitCode = await runRollout(flags, process.env);
        break;
      case 'demo':
        process.exitCode = await runDemo(flags, process.env);
        break;
    }
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    commandLineError(`kalypso-hub ${command}: ${error.message}\n(kalypso-hub ${command} --help lists the settings)`);
  }
}
