// Human-friendly durations ("15m", "30s", "1h30m", "250ms") and sizes ("64MiB", "512KiB").

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const SIZE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  kb: 1_000,
  mb: 1_000_000,
  gb: 1_000_000_000,
  kib: 1_024,
  mib: 1_048_576,
  gib: 1_073_741_824,
};

/** Milliseconds, or undefined when the text is not a duration. A bare number means seconds. */
export function parseDuration(text: string): number | undefined {
  const value = text.trim().toLowerCase();
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1_000);
  if (!/^(\d+(\.\d+)?(ms|s|m|h|d))+$/.test(value)) return undefined;
  let total = 0;
  for (const [, amount, unit] of value.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)) {
    total += Number(amount) * DURATION_UNITS[unit!]!;
  }
  return Math.round(total);
}

/** Bytes, or undefined when the text is not a size. */
export function parseSize(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(text.trim());
  const factor = SIZE_UNITS[(match?.[2] ?? 'x').toLowerCase()];
  return match === null || factor === undefined ? undefined : Math.round(Number(match[1]) * factor);
}

export function formatDuration(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1_000 === 0) return `${ms / 1_000}s`;
  return `${ms}ms`;
}
