import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { settingsMarkdown } from '../../src/config/settings-markdown.ts';

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
  it('documents every setting exactly as the hub defines it, group by group', async () => {
    const reference = await readFile(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    expect(reference).toContain(settingsMarkdown());
  });
});
