import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { hubSettingsMarkdown } from '../../src/settings.ts';
import { CONFIGURATION_DOC, withSettingsTables } from '../../scripts/docs-configuration.ts';

const readme = (): Promise<string> => readFile(new URL('../../README.md', import.meta.url), 'utf8');

describe('README', () => {
  it('gives the two commands on its first screen', async () => {
    const firstScreen = (await readme()).split('\n').slice(0, 20).join('\n');
    expect(firstScreen).toContain('npm install && npm start');
    expect(firstScreen).toContain('npm test');
  });

  it('is a front door: at most 300 lines, pointing to the configuration reference', async () => {
    const text = await readme();
    expect(text.split('\n').length).toBeLessThanOrEqual(300);
    expect(text).toContain('](docs/configuration.md)');
  });
});

describe('docs/configuration.md', () => {
  it('documents every setting exactly as the hub defines it, group by group (npm run docs:config)', async () => {
    const reference = await readFile(CONFIGURATION_DOC, 'utf8');
    expect(reference, 'the settings tables are stale: run npm run docs:config').toBe(withSettingsTables(reference));
    expect(reference).toContain(hubSettingsMarkdown());
  });

  it('keeps the hand-written prose around the generated tables', () => {
    const text = ['# Configuration', 'prose before', '<!-- settings:begin -->', 'old tables', '<!-- settings:end -->', 'prose after'].join('\n');
    expect(withSettingsTables(text, '**Group**\n\n| a |')).toBe(
      ['# Configuration', 'prose before', '<!-- settings:begin -->', '', '**Group**', '', '| a |', '', '<!-- settings:end -->', 'prose after'].join('\n'),
    );
    expect(() => withSettingsTables('no markers here')).toThrow(/settings:begin/);
  });
});
