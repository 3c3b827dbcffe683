// `--help` and `-h` on every entry point, as a new user tries them: exit 0, plain text that fits
// 100 columns, the settings in their groups; and mistakes on the command line named in plain text.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SETTING_GROUPS } from '../../src/config/setting.ts';
import { HUB_SETTINGS } from '../../src/settings.ts';
import { type CommandResult, REPO, runCommand, runKalypsoHub } from '../support/run-command.ts';

const GROUP_TITLES = Object.values(SETTING_GROUPS);

/** Lines wider than a terminal of 100 columns (counted in characters, not bytes). */
function tooWide(text: string): string[] {
  return text.split('\n').filter((line) => [...line].length > 100);
}

function expectPlainHelp(result: CommandResult, usage: string): void {
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout.startsWith(`Usage: ${usage}`), result.stdout.slice(0, 200)).toBe(true);
  expect(tooWide(result.stdout)).toEqual([]);
  // Markdown (tables, code spans, emphasis) reads badly in a terminal.
  expect(result.stdout).not.toMatch(/[|`]|\*\*/);
}

/** Every group title, in the order of SETTING_GROUPS, each on a line of its own. */
function expectGroupsInOrder(text: string, titles: readonly string[] = GROUP_TITLES): void {
  const positions = titles.map((title) => text.split('\n').indexOf(title));
  expect(positions.every((position) => position > 0), `group titles ${titles.join(', ')} in:\n${text}`).toBe(true);
  expect([...positions].sort((a, b) => a - b)).toEqual(positions);
}

describe('--help and -h', () => {
  for (const flag of ['--help', '-h']) {
    it(`kalypso-hub ${flag}: the commands and every setting, grouped`, async () => {
      const result = await runKalypsoHub([flag]);
      expectPlainHelp(result, 'kalypso-hub [command] [options]');
      for (const command of ['serve', 'migrate', 'rollout', 'demo', 'help']) expect(result.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
      expectGroupsInOrder(result.stdout);
      for (const setting of Object.values(HUB_SETTINGS)) expect(result.stdout).toMatch(new RegExp(`^  --${setting.flag} `, 'm'));
    });

    it(`kalypso-hub serve ${flag}: every setting, grouped, with its variable and default`, async () => {
      const result = await runKalypsoHub(['serve', flag]);
      expectPlainHelp(result, 'kalypso-hub [serve] [options]');
      expectGroupsInOrder(result.stdout);
      const network = result.stdout.slice(result.stdout.indexOf('\nNetwork\n'), result.stdout.indexOf('\nDatabase\n'));
      expect(network).toMatch(/^ {2}--http-port +HTTP API, web UI, health and metrics\.\n {4,}env KALYPSO_HTTP_PORT; default 8080$/m);
    });

    it(`kalypso-hub migrate ${flag}: the database and logging settings`, async () => {
      const result = await runKalypsoHub(['migrate', flag]);
      expectPlainHelp(result, 'kalypso-hub migrate [options]');
      expectGroupsInOrder(result.stdout, [SETTING_GROUPS.database, SETTING_GROUPS.logging]);
      expect(result.stdout).not.toContain('--otlp-grpc-port');
    });

    it(`kalypso-hub rollout ${flag}: its options and exit codes`, async () => {
      const result = await runKalypsoHub(['rollout', flag]);
      expectPlainHelp(result, 'kalypso-hub rollout --endpoint');
      expect(result.stdout).toMatch(/^Exit codes\n {2}0 +Every subscriber succeeded\.$/m);
      expect(result.stdout).toMatch(/^ {2}3 +Could not ask/m);
    });

    it(`kalypso-hub demo ${flag}: its options`, async () => {
      const result = await runKalypsoHub(['demo', flag]);
      expectPlainHelp(result, 'kalypso-hub demo');
      expect(result.stdout).toMatch(/^ {2}--otlp <url> +The hub's OTLP\/HTTP receiver/m);
    });
  }

  it('kalypso-hub help, help --help and help <command>', async () => {
    const help = await runKalypsoHub(['help']);
    expectPlainHelp(help, 'kalypso-hub [command] [options]');
    expect((await runKalypsoHub(['help', '--help'])).stdout).toBe(help.stdout);
    const rollout = await runKalypsoHub(['help', 'rollout']);
    expectPlainHelp(rollout, 'kalypso-hub rollout');
    expect(rollout.stdout).toBe((await runKalypsoHub(['rollout', '--help'])).stdout);
    const unknown = await runKalypsoHub(['help', 'deploy']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "deploy"');
  });

  it('--help wins over the other arguments, even ones that would be refused', async () => {
    const result = await runKalypsoHub(['serve', '--http-port', 'eighty', '--no-such-flag', '-h']);
    expectPlainHelp(result, 'kalypso-hub [serve] [options]');
  });

  it('bin/kalypso-hub.js --help, run as a program (its #! line finds the Node on PATH)', async () => {
    const result = await runCommand(path.join(REPO, 'bin/kalypso-hub.js'), ['--help'], {
      env: { PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}` },
    });
    expectPlainHelp(result, 'kalypso-hub [command] [options]');
  });

  // npm echoes the script it runs ("> node … src/cli/main.ts serve --help"); those lines are npm's.
  const withoutNpmEcho = (result: CommandResult): CommandResult => ({
    ...result,
    stdout: result.stdout.split('\n').filter((line) => !line.startsWith('> ')).join('\n').trimStart(),
  });

  it('npm start -- --help: serve’s help', async () => {
    const result = withoutNpmEcho(await runCommand('npm', ['start', '--', '--help']));
    expectPlainHelp(result, 'kalypso-hub [serve] [options]');
    expectGroupsInOrder(result.stdout);
  });

  it('npm run hub -- --help and -h: the commands', async () => {
    for (const flag of ['--help', '-h']) {
      const result = withoutNpmEcho(await runCommand('npm', ['run', 'hub', '--', flag]));
      expectPlainHelp(result, 'kalypso-hub [command] [options]');
    }
  });

  it('npm run migrate -- --help', async () => {
    expectPlainHelp(withoutNpmEcho(await runCommand('npm', ['run', 'migrate', '--', '--help'])), 'kalypso-hub migrate [options]');
  });
});

describe('mistakes on the command line', () => {
  it('an unknown option exits 2 with one plain line naming it, and the nearest known one', async () => {
    for (const command of ['serve', 'migrate']) {
      const result = await runKalypsoHub([command, '--htp-port', '9090']);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(
        `kalypso-hub ${command}: unknown option --htp-port (did you mean --http-port?)\n(kalypso-hub ${command} --help lists the settings)\n`,
      );
    }
    const noGuess = await runKalypsoHub(['--no-such-flag']);
    expect(noGuess.code).toBe(2);
    expect(noGuess.stderr).toMatch(/^kalypso-hub serve: unknown option --no-such-flag\n/);
  });

  it('rollout exits 3 on an unknown option (could not ask), demo 2', async () => {
    const rollout = await runKalypsoHub(['rollout', '--endpont', 'x', '--commit', 'abc1234']);
    expect(rollout.code).toBe(3);
    expect(rollout.stderr).toMatch(/^kalypso-hub rollout: unknown option --endpont \(did you mean --endpoint\?\)\n/);
    const demo = await runKalypsoHub(['demo', '--host', '10']);
    expect(demo.code).toBe(2);
    expect(demo.stderr).toMatch(/^kalypso-hub demo: unknown option --host \(did you mean --hosts\?\)\n/);
  });

  it('a flag without its value, a value for a switch, an unknown command', async () => {
    const missing = await runKalypsoHub(['serve', '--http-port']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^kalypso-hub serve: --http-port needs a value\n/);
    const switchValue = await runKalypsoHub(['serve', '--demo=yes']);
    expect(switchValue.code).toBe(2);
    expect(switchValue.stderr).toMatch(/^kalypso-hub serve: --demo takes no value\n/);
    const command = await runKalypsoHub(['deploy']);
    expect(command.code).toBe(2);
    expect(command.stderr).toMatch(/^kalypso-hub: unknown command "deploy"/);
  });
});
