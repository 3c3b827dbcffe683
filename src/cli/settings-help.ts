// The hub's settings as help sections, one per group. Descriptions are written once, for the docs
// too, with Markdown code spans; a terminal shows them without the backticks.
import { shownDefault } from '../config/setting-groups.ts';
import type { SettingGroup } from '../config/setting.ts';
import { hubSettingsByGroup } from '../settings.ts';
import type { HelpSection } from './help-format.ts';

export const PRECEDENCE = 'A flag wins over its KALYPSO_* variable, which wins over a generic variable (DATABASE_URL), which wins over the default.';

export function settingsHelp(only?: readonly SettingGroup[]): HelpSection[] {
  return hubSettingsByGroup(only).map(({ title, settings }) => ({
    title,
    entries: settings.map((setting) => ({
      term: `--${setting.flag}`,
      description: `${plainText(setting.description)}\nenv ${setting.env.join(', ')}; default ${plainText(shownDefault(setting))}`,
    })),
  }));
}

function plainText(markdown: string): string {
  return markdown.replace(/`([^`]*)`/g, '$1');
}
