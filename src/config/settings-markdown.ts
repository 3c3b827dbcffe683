// The configuration reference's tables, one per group of settings. A test checks that
// docs/configuration.md holds exactly this text for the hub's settings, so the docs cannot drift.
import type { SettingsTable } from './setting.ts';
import { settingsByGroup, shownDefault } from './setting-groups.ts';

export function settingsMarkdown(table: SettingsTable): string {
  return settingsByGroup(table)
    .map(({ title, settings }) =>
      [
        `**${title}**`,
        '',
        '| flag | environment | default | meaning |',
        '|---|---|---|---|',
        ...settings.map(
          (setting) =>
            `| \`--${setting.flag}\` | ${setting.env.map((name) => `\`${name}\``).join(', ')} | \`${shownDefault(setting)}\` | ${setting.description} |`,
        ),
      ].join('\n'),
    )
    .join('\n\n');
}
