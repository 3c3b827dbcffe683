export function ago(iso: string, now = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - new Date(iso).getTime()) / 1_000));
  return `${duration(seconds)} ago`;
}

export function duration(seconds: number): string {
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3_600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3_600)}h ${Math.floor((seconds % 3_600) / 60)}m`;
  return `${Math.floor(seconds / 86_400)}d ${Math.floor((seconds % 86_400) / 3_600)}h`;
}

export function shortCommit(commit: string): string {
  return /^[0-9a-f]{12,}$/.test(commit) ? commit.slice(0, 10) : commit;
}

export function localTime(iso: string): string {
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' });
}

/** A duration in seconds that may not have come yet (null): a dash then. */
export function optionalDuration(seconds: number | null): string {
  return seconds === null ? '—' : duration(Math.round(seconds));
}

/** A ratio as a percentage, one decimal only when it has one (33.3 %, 40 %). */
export function percent(ratio: number | null): string {
  return ratio === null ? '—' : `${Number((ratio * 100).toFixed(1))} %`;
}

/** At most two decimals, and none that are zero (0.17, 2.5, 3). Not localized, like the durations. */
export function decimal(value: number): string {
  return String(Number(value.toFixed(2)));
}
