// Settings as help and the docs list them: group by group in SETTING_GROUPS' order, each group's
// settings in the order the table declares them.
import { type Setting, SETTING_GROUPS, type SettingGroup, type SettingsTable } from './setting.ts';

export interface SettingsOfGroup {
  readonly group: SettingGroup;
  readonly title: string;
  readonly settings: readonly Setting<unknown>[];
}

/** Every group of the table (or the ones named), with its settings. */
export function settingsByGroup(table: SettingsTable, only?: readonly SettingGroup[]): SettingsOfGroup[] {
  const all: readonly Setting<unknown>[] = Object.values(table);
  return (Object.keys(SETTING_GROUPS) as SettingGroup[])
    .filter((group) => only === undefined || only.includes(group))
    .map((group) => ({ group, title: SETTING_GROUPS[group], settings: all.filter((setting) => setting.group === group) }));
}

/** The default as users would write it. */
export function shownDefault(setting: Setting<unknown>): string {
  return setting.shownDefault ?? String(setting.default);
}
