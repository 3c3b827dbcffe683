// CPU time of the hub processes and of the PostgreSQL server during a run, read from /proc: tells
// whether a change moved work between the hub and the database or removed it. Linux only; elsewhere
// every figure is 0.
import { readdir, readFile } from 'node:fs/promises';

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

async function ticksOf(pid: number): Promise<{ comm: string; ticks: number; reapedTicks: number } | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (stat === undefined) return undefined;
  // The command name is in parentheses and may hold spaces; the fields after it are fixed.
  const close = stat.lastIndexOf(')');
  const fields = stat.slice(close + 2).split(' ');
  // Fields 14–17 of stat (utime, stime, and cutime, cstime of children already reaped) are 11–14
  // after the state field.
  return {
    comm: stat.slice(stat.indexOf('(') + 1, close),
    ticks: Number(fields[11]) + Number(fields[12]),
    reapedTicks: Number(fields[13]) + Number(fields[14]),
  };
}

export interface CpuSample {
  readonly hubSeconds: number;
  readonly postgresSeconds: number;
}

/**
 * CPU seconds used so far by `hubPids` and by the PostgreSQL server: every live process named
 * `postgres`, plus what the postmaster's children that have exited used (autovacuum workers come
 * and go).
 */
export async function sampleCpu(hubPids: readonly number[]): Promise<CpuSample> {
  let hub = 0;
  let postgres = 0;
  for (const pid of hubPids) hub += (await ticksOf(pid))?.ticks ?? 0;
  const entries = await readdir('/proc').catch(() => [] as string[]);
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const process = await ticksOf(Number(entry));
    if (process?.comm === 'postgres') postgres += process.ticks + process.reapedTicks;
  }
  return { hubSeconds: hub / TICKS_PER_SECOND, postgresSeconds: postgres / TICKS_PER_SECOND };
}

/** µs of CPU per record on each side between two samples. */
export function cpuPerRecord(before: CpuSample, after: CpuSample, records: number): { hubUs: number; postgresUs: number } {
  const perRecord = (seconds: number) => Math.round((seconds * 1e6) / records * 10) / 10;
  return { hubUs: perRecord(after.hubSeconds - before.hubSeconds), postgresUs: perRecord(after.postgresSeconds - before.postgresSeconds) };
}
