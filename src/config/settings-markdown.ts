// The README's configuration tables, one per group of settings. test/unit/readme.test.ts checks
// that the README holds exactly this text, so the README cannot drift from the settings.
import { settingsByGroup, shownDefault } from './setting-groups.ts';

export function settingsMarkdown(): string {
  return settingsByGroup()
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
