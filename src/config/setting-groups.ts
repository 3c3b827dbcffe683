// The settings as help and the README list them: group by group in SETTING_GROUPS' order, each
// group's settings in the order SETTINGS declares them.
import { type Setting, SETTING_GROUPS, SETTINGS, type SettingGroup } from './settings.ts';

export interface SettingsOfGroup {
  readonly group: SettingGroup;
  readonly title: string;
  readonly settings: readonly Setting<unknown>[];
}

/** Every group (or the ones named), with its settings. */
export function settingsByGroup(only?: readonly SettingGroup[]): SettingsOfGroup[] {
  const all: readonly Setting<unknown>[] = Object.values(SETTINGS);
  return (Object.keys(SETTING_GROUPS) as SettingGroup[])
    .filter((group) => only === undefined || only.includes(group))
    .map((group) => ({ group, title: SETTING_GROUPS[group], settings: all.filter((setting) => setting.group === group) }));
}

/** The default as users would write it. */
export function shownDefault(setting: Setting<unknown>): string {
  return setting.shownDefault ?? String(setting.default);
}
