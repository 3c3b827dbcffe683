import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { hubSettingsMarkdown } from '../../src/settings.ts';

describe('README', () => {
  it('documents every setting exactly as the hub defines it, group by group', async () => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    // To update the README: node -e "import('./src/settings.ts').then((m) => console.log(m.hubSettingsMarkdown()))"
    expect(readme).toContain(hubSettingsMarkdown());
  });

  it('gives the two commands on its first screen', async () => {
    const firstScreen = (await readFile(new URL('../../README.md', import.meta.url), 'utf8')).split('\n').slice(0, 20).join('\n');
    expect(firstScreen).toContain('npm install && npm start');
    expect(firstScreen).toContain('npm test');
  });
});
