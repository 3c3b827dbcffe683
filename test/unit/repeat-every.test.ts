// The timer behind the background refreshes: every interval while runs are quick, a rest in
// proportion to a slow run, so that work that grows under load cannot run back to back, and runs
// deferred for a while when they fall due during writes — the rest kept only while they last.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { repeatEvery } from '../../src/store/repeat-every.ts';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance'] });
});

afterEach(() => {
  vi.useRealTimers();
});

/** Start times of `run`s that take `durations` ms in turn, over `totalMs` of fake time. */
async function startsOf(intervalMs: number, durations: readonly number[], totalMs: number, restRatio?: number): Promise<number[]> {
  const starts: number[] = [];
  const repeating = repeatEvery(
    intervalMs,
    async () => {
      starts.push(performance.now());
      await new Promise((resolve) => setTimeout(resolve, durations[Math.min(starts.length - 1, durations.length - 1)]));
    },
    { immediately: true, ...(restRatio === undefined ? {} : { restRatio }) },
  );
  await vi.advanceTimersByTimeAsync(totalMs);
  const stopped = repeating.stop();
  await vi.runOnlyPendingTimersAsync();
  await stopped;
  const origin = starts[0] ?? 0;
  return starts.map((start) => Math.round(start - origin));
}

describe('repeatEvery', () => {
  it('starts a quick run every interval', async () => {
    expect(await startsOf(1_000, [30], 3_500)).toEqual([0, 1_000, 2_000, 3_000]);
  });

  it('starts the next run when a slow one ends, without a rest ratio', async () => {
    const starts = await startsOf(1_000, [2_500], 6_000);
    expect(starts).toHaveLength(3);
    // (A timer of 0 ms fires after 1.)
    for (const [i, start] of starts.slice(1).entries()) expect(start - starts[i]!).toBeOneOf([2_500, 2_501]);
  });

  it('rests after a slow run in proportion to how long it took, and keeps the interval after quick ones', async () => {
    // 2,500 ms run, then 7,500 ms rest (3×); then quick runs every second again.
    expect(await startsOf(1_000, [2_500, 100, 100], 12_500, 3)).toEqual([0, 10_000, 11_000, 12_000]);
  });

  it('defers a run that falls due while busy until it is not, checking every recheckMs', async () => {
    let busyUntil = 2_600;
    const starts: number[] = [];
    const repeating = repeatEvery(
      1_000,
      async () => {
        starts.push(performance.now());
        await Promise.resolve();
      },
      { yieldTo: { busy: () => performance.now() < busyUntil, maxMs: 30_000, recheckMs: 250 } },
    );
    await vi.advanceTimersByTimeAsync(5_200);
    // Due at 1,000 while busy: checked again at 1,250, …, 2,750 (no longer busy); then every second.
    expect(starts.map(Math.round)).toEqual([2_750, 3_750, 4_750]);
    busyUntil = Infinity;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(starts).toHaveLength(3);
    await repeating.stop();
  });

  it('runs a deferred run anyway once maxMs have passed since it fell due', async () => {
    const starts: number[] = [];
    const repeating = repeatEvery(
      1_000,
      async () => {
        starts.push(performance.now());
        await new Promise((resolve) => setTimeout(resolve, 100));
      },
      { yieldTo: { busy: () => true, maxMs: 5_000, recheckMs: 250 } },
    );
    await vi.advanceTimersByTimeAsync(13_000);
    await repeating.stop();
    // Due at 1,000, run at 6,000 (the first check at or past 5,000 ms after it fell due); the next
    // due at 7,000 (an interval after the start), run at 12,000.
    expect(starts.map(Math.round)).toEqual([6_000, 12_000]);
  });

  it('keeps the rest of a slow run while busy, and gives it up once not', async () => {
    const starts = async (busyUntil: number): Promise<number[]> => {
      const at: number[] = [];
      const origin = performance.now();
      // The hub writes from 1,000 ms (the first run has begun: it runs at once) until busyUntil.
      const busy = () => performance.now() - origin >= 1_000 && performance.now() - origin < busyUntil;
      const repeating = repeatEvery(
        1_000,
        async () => {
          at.push(performance.now());
          await new Promise((resolve) => setTimeout(resolve, at.length === 1 ? 2_000 : 100));
        },
        { immediately: true, restRatio: 10, yieldTo: { busy, maxMs: 30_000, recheckMs: 250 } },
      );
      await vi.advanceTimersByTimeAsync(24_000);
      await repeating.stop();
      return at.map((start) => Math.round(start - origin));
    };
    // The 2,000 ms run earned a rest until 22,000. Busy until 5,000: it runs then, not at 22,000.
    // (Its next check fell due at once after the slow run: a timer of 0 ms fires after 1.)
    expect((await starts(5_000))[1]).toBeOneOf([5_000, 5_001]);
    // Busy throughout: the rest is kept (and then it gives way to writes for up to maxMs more).
    expect(await starts(Infinity)).toEqual([0]);
    // Busy until 15,000: still within the rest, and then it runs at the first check past it.
    expect((await starts(15_000))[1]).toBeOneOf([15_000, 15_001]);
  });

  it('runs nothing more once stopped, and waits for the run under way', async () => {
    let ended = false;
    const repeating = repeatEvery(
      1_000,
      async () => {
        await new Promise((resolve) => setTimeout(resolve, 500));
        ended = true;
      },
      { immediately: true },
    );
    const stopped = repeating.stop();
    await vi.advanceTimersByTimeAsync(5_000);
    await stopped;
    expect(ended).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });
});
