// Streams of deployment-state reports for fault tests, built so that "stored exactly once" is
// checkable: every report of a reconciler carries a state (commit) of its own, so each one is a
// transition and must appear in history exactly once, whatever order it arrives in.
import { stateLog } from './kalypso-logs.ts';
import { buildLogRecords } from './otlp-client.ts';
import { protobufRequest } from './raw-otlp.ts';
import { minute } from './records.ts';
import { seededRandom } from './seeded-random.ts';

export interface Report {
  readonly host: string;
  readonly reconciler: string;
  readonly commit: string;
  readonly status: 'success' | 'failure' | 'in_progress';
  readonly at: Date;
}

const STATUSES = ['in_progress', 'success', 'failure'] as const;

/** `reportsEach` reports for each of `reconcilers` reconcilers (on hosts named `<prefix>-<n>`). */
export function reportSet(prefix: string, reconcilers: number, reportsEach: number): Report[] {
  const reports: Report[] = [];
  for (let r = 0; r < reconcilers; r += 1) {
    for (let n = 0; n < reportsEach; n += 1) {
      reports.push({
        host: `${prefix}-${r % 7}`,
        reconciler: `flux-system/app-${r}`,
        commit: `${prefix}-r${r}-c${n}`,
        status: STATUSES[n % STATUSES.length]!,
        // Seconds apart, so reports of one reconciler never share an instant.
        at: new Date(minute(10).getTime() + n * 1_000),
      });
    }
  }
  return reports;
}

export { seededRandom };

export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

export function chunks<T>(items: readonly T[], size: number): T[][] {
  const result: T[][] = [];
  for (let i = 0; i < items.length; i += size) result.push(items.slice(i, i + size));
  return result;
}

/**
 * One OTLP/protobuf ExportLogsServiceRequest carrying the reports, and optionally an ordinary
 * log record of `paddingBytes` (which the hub ignores) to make the request weigh something.
 */
export async function protobufBatch(reports: readonly Report[], paddingBytes = 0): Promise<Buffer> {
  const specs = reports.map((report) =>
    stateLog({ host: report.host, reconciler: report.reconciler, commit: report.commit, status: report.status, at: report.at }),
  );
  if (paddingBytes > 0) specs.push({ resource: { 'service.name': 'chatty-app' }, body: 'x'.repeat(paddingBytes) });
  return protobufRequest(await buildLogRecords(specs));
}

/** The history a set of reports must leave: one row per distinct report, in a stable order. */
export function expectedHistory(reports: readonly Report[]): StoredReport[] {
  const unique = new Map(reports.map((report) => [`${report.reconciler}\u0000${report.commit}`, report]));
  return sortReports([...unique.values()].map(toStored));
}

/** The current state a set of reports must leave: the newest report of each reconciler. */
export function expectedCurrent(reports: readonly Report[]): StoredReport[] {
  const newest = new Map<string, Report>();
  for (const report of reports) {
    const key = `${report.host}\u0000${report.reconciler}`;
    const known = newest.get(key);
    if (known === undefined || report.at > known.at) newest.set(key, report);
  }
  return sortReports([...newest.values()].map(toStored));
}

/** A report as the store keeps it (what history and current state are compared by). */
export interface StoredReport {
  readonly host: string;
  readonly reconciler: string;
  readonly commit: string;
  readonly status: string;
  readonly observedAt: string;
}

function toStored(report: Report): StoredReport {
  return { host: report.host, reconciler: report.reconciler, commit: report.commit, status: report.status, observedAt: report.at.toISOString() };
}

export function sortReports<T extends StoredReport>(rows: readonly T[]): T[] {
  const key = (row: StoredReport): string => `${row.host}\u0000${row.reconciler}\u0000${row.observedAt}\u0000${row.commit}`;
  return [...rows].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}
