// Progress on stderr (long runs show they are alive), results as a Markdown table.
import os from 'node:os';

const STARTED = performance.now();

/** A progress line on stderr, with the minutes and seconds since the bench started (which step ran when). */
export function progress(message: string): void {
  const seconds = Math.round((performance.now() - STARTED) / 1_000);
  const elapsed = `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
  process.stderr.write(`[bench ${elapsed}] ${message}\n`);
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return Math.round(sorted[Math.max(0, index)]! * 10) / 10;
}

export function machineLine(): string {
  const cpus = os.cpus();
  return `${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM, Node ${process.version}, ${os.platform()} ${os.release()}`;
}

export function markdownTable(header: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n');
}
