// Writes the settings tables of docs/configuration.md (run: npm run docs:config). The tables are
// generated from the hub's own list of settings (hubSettingsMarkdown, src/settings.ts); the prose around them is
// written by hand, so only the part between the markers is replaced. test/unit/readme.test.ts
// fails when the committed file differs from what this script writes.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { hubSettingsMarkdown } from '../src/settings.ts';

export const CONFIGURATION_DOC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../docs/configuration.md');
export const BEGIN_MARKER = '<!-- settings:begin -->';
export const END_MARKER = '<!-- settings:end -->';

/** `text` with the part between the markers replaced by the current settings tables. */
export function withSettingsTables(text: string, tables: string = hubSettingsMarkdown()): string {
  const begin = text.indexOf(BEGIN_MARKER);
  const end = text.indexOf(END_MARKER);
  if (begin < 0 || end < begin || text.indexOf(BEGIN_MARKER, begin + 1) >= 0 || text.indexOf(END_MARKER, end + 1) >= 0) {
    throw new Error(`${path.basename(CONFIGURATION_DOC)} must hold "${BEGIN_MARKER}" once, and "${END_MARKER}" once after it`);
  }
  return `${text.slice(0, begin + BEGIN_MARKER.length)}\n\n${tables}\n\n${text.slice(end)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const before = await readFile(CONFIGURATION_DOC, 'utf8');
  const after = withSettingsTables(before);
  if (after === before) console.log(`${path.relative(process.cwd(), CONFIGURATION_DOC)} is up to date`);
  else {
    await writeFile(CONFIGURATION_DOC, after);
    console.log(`wrote ${path.relative(process.cwd(), CONFIGURATION_DOC)}`);
  }
}
