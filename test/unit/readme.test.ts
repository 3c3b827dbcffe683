import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { describeSettings } from '../../src/config/config.ts';

describe('README', () => {
  it('documents every setting exactly as the hub defines it', async () => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    expect(readme).toContain(describeSettings());
  });

  it('gives the two commands on its first screen', async () => {
    const firstScreen = (await readFile(new URL('../../README.md', import.meta.url), 'utf8')).split('\n').slice(0, 20).join('\n');
    expect(firstScreen).toContain('npm install && npm start');
    expect(firstScreen).toContain('npm test');
  });
});
