// --notifications FILE: checked whole at start, every mistake named by entry and field; secrets
// read from files (without their trailing newline) or the environment, never written in the file.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/config.ts';
import { loadNotifications } from '../../src/notify/notifications-file.ts';
import { loadChannels } from '../../src/notify/notifications.ts';
import { randomCommit } from '../support/random-ids.ts';

let directory: string;
let tokenFile: string;
const token = `ghp_${randomCommit()}`;

beforeAll(async () => {
  directory = await mkdtemp(path.join(os.tmpdir(), 'notifications-file-'));
  tokenFile = path.join(directory, 'token');
  await writeFile(tokenFile, `${token}\n`);
});
afterAll(async () => rm(directory, { recursive: true, force: true }));

async function fileWith(text: string): Promise<string> {
  const file = path.join(directory, `${randomCommit().slice(0, 8)}.yaml`);
  await writeFile(file, text);
  return file;
}

describe('the notifications file', () => {
  it('reads providers and webhooks with their defaults; a token file loses its trailing newline', async () => {
    const file = await fileWith(
      [
        'commitStatus:',
        '  - { name: apps, type: github, tokenFile: ' + tokenFile + ', repos: ["https://github.com/contoso/*"] }',
        '  - { name: lab, type: gitlab, apiUrl: "https://gitlab.example.com/api/v4/", tokenEnv: LAB_TOKEN, repos: ["https://gitlab.example.com/**"] }',
        'webhooks:',
        '  - { name: decisions, url: "https://hooks.example/kalypso", secretFile: ' + tokenFile + ', types: ["io.kalypso.rollout.*"] }',
      ].join('\n'),
    );
    const channels = await loadNotifications(file, { LAB_TOKEN: 'glpat-x' });
    expect(channels.map((channel) => [channel.name, channel.kind])).toEqual([['apps', 'commit-status'], ['lab', 'commit-status'], ['decisions', 'webhook']]);
    const [apps, lab, decisions] = channels;
    expect(apps).toMatchObject({ type: 'github', apiUrl: 'https://api.github.com' });
    expect(lab).toMatchObject({ apiUrl: 'https://gitlab.example.com/api/v4' });
    if (apps?.kind !== 'commit-status' || decisions?.kind !== 'webhook') throw new Error('kinds');
    expect(await apps.token.read()).toBe(token);
    expect(apps.token.origin).toBe(`file ${tokenFile}`);
    expect(decisions.types.map((glob) => glob.test('io.kalypso.rollout.succeeded'))).toEqual([true]);
    expect(decisions.types.map((glob) => glob.test('io.kalypso.host.offline'))).toEqual([false]);
  });

  it.each([
    ['commitStatus:\n  - { name: a, type: bitbucket, tokenEnv: T, repos: [x] }', 'commitStatus[0].type: Invalid option'],
    ['commitStatus:\n  - { name: a, type: github, repos: ["https://github.com/x/*"] }', 'commitStatus[0]: give exactly one of tokenFile and tokenEnv'],
    ['commitStatus:\n  - { name: a, type: github, tokenEnv: T, tokenFile: /t, repos: ["https://github.com/x/*"] }', 'commitStatus[0]: give exactly one of tokenFile and tokenEnv'],
    ['commitStatus:\n  - { name: a, type: github, tokenEnv: T, repos: [] }', 'commitStatus[0].repos: Too small'],
    ['commitStatus:\n  - { name: a, type: github, tokenEnv: T, repos: ["no url"] }', 'commitStatus[0].repos[0]: must be a repository URL'],
    ['commitStatus:\n  - { name: a, type: github, tokenEnv: T, repo: ["https://github.com/x/*"] }', 'commitStatus[0]: Unrecognized key: "repo"'],
    ['webhooks:\n  - { name: h, url: "ftp://x", secretEnv: T }', 'webhooks[0].url: must be an http:// or https:// URL'],
    ['webhooks:\n  - { name: h, url: "https://x" }', 'webhooks[0]: give exactly one of secretFile and secretEnv'],
    ['webhooks:\n  - { name: "h h", url: "https://x", secretEnv: T }', 'webhooks[0].name: letters, digits'],
    ['commitStatus:\n  - { name: same, type: github, tokenEnv: T, repos: ["https://github.com/x/*"] }\nwebhooks:\n  - { name: same, url: "https://x", secretEnv: T }', 'name: "same" names two entries'],
    ['hooks: []', 'Unrecognized key: "hooks"'],
    ['commitStatus: [', 'Flow sequence'],
  ])('refuses %j, naming the field', async (text, message) => {
    const file = await fileWith(text);
    const loading = loadNotifications(file, { T: 'x' });
    await expect(loading).rejects.toThrow(ConfigError);
    await expect(loading).rejects.toThrow(`invalid --notifications ${file}: ${message}`);
  });

  it('refuses a secret it cannot read now, naming where it looked — never the value', async () => {
    const missing = path.join(directory, 'missing-token');
    const file = await fileWith(`commitStatus:\n  - { name: apps, type: github, tokenFile: ${missing}, repos: ["https://github.com/x/*"] }`);
    await expect(loadNotifications(file, {})).rejects.toThrow(`apps: cannot read its token from file ${missing}`);
    const unset = await fileWith('webhooks:\n  - { name: h, url: "https://x", secretEnv: HOOK_SECRET }');
    await expect(loadNotifications(unset, {})).rejects.toThrow('h: cannot read its secret from environment HOOK_SECRET: environment variable HOOK_SECRET is not set');
  });

  it('needs --public-url for the links it sends', async () => {
    const file = await fileWith(`commitStatus:\n  - { name: apps, type: github, tokenFile: ${tokenFile}, repos: ["https://github.com/x/*"] }`);
    await expect(loadChannels({ notifications: file, publicUrl: undefined }, {})).rejects.toThrow('--notifications needs --public-url');
    expect(await loadChannels({ notifications: file, publicUrl: 'https://kalypso.example.com' }, {})).toHaveLength(1);
    expect(await loadChannels({ notifications: undefined, publicUrl: undefined }, {})).toEqual([]);
  });
});
