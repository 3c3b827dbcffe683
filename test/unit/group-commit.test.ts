// Group commit's scheduling (src/sources/otlp/group-commit.ts), against a store whose transactions
// the test ends by hand: what is written together, when each export is acknowledged, what is
// refused, and what a failing group does. (Through a real hub and database: the OTLP and fault suites.)
import { describe, expect, it } from 'vitest';
import type { NormalizedRecord } from '../../src/model/deployment-records.ts';
import type { RecordSink, WriteSummary } from '../../src/model/record-sink.ts';
import { GroupCommit } from '../../src/sources/otlp/group-commit.ts';
import { StoreUnavailableError } from '../../src/store/store-errors.ts';

const SUMMARY: WriteSummary = { realStates: 0, desiredStates: 0, transitions: 0, assignments: 0, removed: 0 };

/** A store whose every transaction stays open until the test commits or fails it. */
class HeldStore implements RecordSink {
  readonly transactions: { records: readonly NormalizedRecord[]; commit(): void; fail(error: Error): void }[] = [];
  refuse?: (records: readonly NormalizedRecord[]) => boolean;

  write(records: readonly NormalizedRecord[]): Promise<WriteSummary> {
    if (this.refuse?.(records) === true) return Promise.reject(new Error('refused'));
    return new Promise((resolve, reject) => {
      this.transactions.push({ records, commit: () => resolve(SUMMARY), fail: reject });
    });
  }
}

/** An export of `n` records, told apart by `tag`. */
const batch = (tag: string, n = 1): NormalizedRecord[] =>
  Array.from({ length: n }, (_, i) => ({ kind: 'reconciler-removed', host: tag, reconciler: `r${i}`, removedAt: new Date(0) }));
const tags = (records: readonly NormalizedRecord[]): string[] => [...new Set(records.map((record) => (record as { host: string }).host))];
const settled = async (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

describe('group commit', () => {
  it('writes an export at once when a slot is free, alone', async () => {
    const store = new HeldStore();
    const group = new GroupCommit(store, { maxActive: 2, maxWaiting: 10, maxRecordsPerGroup: 100, smallExportSlots: 10 });
    const a = group.write(batch('a'));
    await settled();
    expect(store.transactions.map((t) => tags(t.records))).toEqual([['a']]);
    store.transactions[0]!.commit();
    expect(await a).toEqual({ admitted: true });
  });

  it('lets small exports start only smallExportSlots transactions; the others wait and go together, while a large one still starts', async () => {
    const store = new HeldStore();
    const group = new GroupCommit(store, { maxActive: 4, maxWaiting: 10, maxRecordsPerGroup: 100, smallExportSlots: 2 });
    // Small: fewer records than half a group (50).
    const small = ['a', 'b', 'c', 'd'].map((tag) => group.write(batch(tag, 10)));
    await settled();
    expect(store.transactions.map((t) => tags(t.records))).toEqual([['a'], ['b']]);
    expect(group.waiting).toBe(2);
    const large = group.write(batch('L', 50));
    await settled();
    // A large export does not jump the queue either: it waits behind the small ones.
    expect(store.transactions.map((t) => tags(t.records))).toEqual([['a'], ['b']]);
    store.transactions[0]!.commit();
    await settled();
    // The freed slot takes every export waiting, up to a group's records: c, d and L (70 records).
    expect(store.transactions.map((t) => tags(t.records))).toEqual([['a'], ['b'], ['c', 'd', 'L']]);
    store.transactions[1]!.commit();
    store.transactions[2]!.commit();
    await Promise.all([...small, large]);
    expect(group.active).toBe(0);
    // With nothing waiting, a large export may take a slot beyond the small exports' two.
    const first = [group.write(batch('e', 10)), group.write(batch('f', 10))];
    const big = group.write(batch('G', 60));
    await settled();
    expect(store.transactions.slice(3).map((t) => tags(t.records))).toEqual([['e'], ['f'], ['G']]);
    for (const transaction of store.transactions.slice(3)) transaction.commit();
    await Promise.all([...first, big]);
  });

  it('writes the exports that waited for a slot together, and acknowledges each only after that commit', async () => {
    const store = new HeldStore();
    const sizes: number[] = [];
    const group = new GroupCommit(store, { maxActive: 1, maxWaiting: 10, maxRecordsPerGroup: 100, smallExportSlots: 10 }, (exports) => sizes.push(exports));
    const acknowledged: string[] = [];
    const write = (tag: string) => group.write(batch(tag, 2)).then(() => acknowledged.push(tag));
    const all = [write('a'), write('b'), write('c'), write('d')];
    await settled();
    expect(store.transactions.map((t) => tags(t.records))).toEqual([['a']]);
    store.transactions[0]!.commit();
    await settled();
    expect(acknowledged).toEqual(['a']);
    expect(store.transactions.map((t) => tags(t.records))).toEqual([['a'], ['b', 'c', 'd']]);
    expect(store.transactions[1]!.records).toHaveLength(6);
    store.transactions[1]!.commit();
    await Promise.all(all);
    expect(acknowledged).toEqual(['a', 'b', 'c', 'd']);
    expect(sizes).toEqual([1, 3]);
    expect(group.active).toBe(0);
  });

  it('puts at most maxRecordsPerGroup records in a group (and an export larger than that alone, a group at a time)', async () => {
    const store = new HeldStore();
    const group = new GroupCommit(store, { maxActive: 1, maxWaiting: 10, maxRecordsPerGroup: 5, smallExportSlots: 10 });
    const all = [group.write(batch('a')), group.write(batch('b', 3)), group.write(batch('c', 2)), group.write(batch('d', 7)), group.write(batch('e'))];
    for (let i = 0; i < 5; i += 1) {
      await settled();
      store.transactions[i]!.commit();
    }
    await Promise.all(all);
    expect(store.transactions.map((t) => tags(t.records))).toEqual([['a'], ['b', 'c'], ['d'], ['d'], ['e']]);
    expect(store.transactions.map((t) => t.records.length)).toEqual([1, 5, 5, 2, 1]);
  });

  it('writes a large export in parts one after the other, acknowledges it after the last, and fails it if a part fails', async () => {
    const store = new HeldStore();
    const group = new GroupCommit(store, { maxActive: 2, maxWaiting: 10, maxRecordsPerGroup: 4, smallExportSlots: 2 });
    let acknowledged = false;
    const large = group.write(batch('L', 10)).then((outcome) => ((acknowledged = true), outcome));
    await settled();
    // One part at a time, in the export's order: the next starts once the one before committed.
    expect(store.transactions.map((t) => t.records.map((record) => (record as { reconciler: string }).reconciler))).toEqual([['r0', 'r1', 'r2', 'r3']]);
    store.transactions[0]!.commit();
    await settled();
    expect(store.transactions.map((t) => t.records.length)).toEqual([4, 4]);
    store.transactions[1]!.commit();
    await settled();
    expect(store.transactions[2]!.records.map((record) => (record as { reconciler: string }).reconciler)).toEqual(['r8', 'r9']);
    expect(acknowledged).toBe(false);
    store.transactions[2]!.commit();
    expect(await large).toEqual({ admitted: true });

    // A part that fails fails the export (the parts before it stay: repeats when it is sent again).
    const failing = group.write(batch('F', 6));
    await settled();
    store.transactions[3]!.commit();
    await settled();
    store.transactions[4]!.fail(new StoreUnavailableError('database unreachable', 1));
    await expect(failing).rejects.toThrow('database unreachable');
    expect(store.transactions.slice(3).map((t) => t.records.length)).toEqual([4, 2]);
  });

  it('refuses an export at once when maxWaiting exports already wait, and takes it later', async () => {
    const store = new HeldStore();
    const group = new GroupCommit(store, { maxActive: 1, maxWaiting: 2, maxRecordsPerGroup: 100, smallExportSlots: 10 });
    const taken = [group.write(batch('a')), group.write(batch('b')), group.write(batch('c'))];
    expect(await group.write(batch('d'))).toEqual({ admitted: false });
    await settled();
    store.transactions[0]!.commit();
    await settled();
    store.transactions[1]!.commit();
    expect(await Promise.all(taken)).toEqual([{ admitted: true }, { admitted: true }, { admitted: true }]);
    const again = group.write(batch('d'));
    await settled();
    store.transactions[2]!.commit();
    expect(await again).toEqual({ admitted: true });
  });

  it('writes a failed group again export by export: the one the store refuses fails alone', async () => {
    const store = new HeldStore();
    const group = new GroupCommit(store, { maxActive: 1, maxWaiting: 10, maxRecordsPerGroup: 100, smallExportSlots: 10 });
    const first = group.write(batch('a'));
    const outcomes = ['b', 'poison', 'c'].map((tag) =>
      group.write(batch(tag)).then(
        () => `${tag}: ok`,
        (error: Error) => `${tag}: ${error.message}`,
      ),
    );
    await settled();
    store.refuse = (records) => tags(records).includes('poison');
    store.transactions[0]!.commit();
    await first;
    // The group b + poison + c is refused as a whole; then b, poison and c go one by one.
    for (let i = 1; i <= 2; i += 1) {
      await settled();
      store.transactions[i]!.commit();
    }
    expect(await Promise.all(outcomes)).toEqual(['b: ok', 'poison: refused', 'c: ok']);
    expect(store.transactions.map((t) => tags(t.records))).toEqual([['a'], ['b'], ['c']]);
  });

  it('tells every export of a group to retry at once when the database is down, without writing them one by one', async () => {
    const store = new HeldStore();
    const group = new GroupCommit(store, { maxActive: 1, maxWaiting: 10, maxRecordsPerGroup: 100, smallExportSlots: 10 });
    const first = group.write(batch('a'));
    const outcomes = ['b', 'c', 'd'].map((tag) =>
      group.write(batch(tag)).then(
        () => `${tag}: ok`,
        (error: Error) => `${tag}: ${error.message}`,
      ),
    );
    await settled();
    store.transactions[0]!.commit();
    await first;
    await settled();
    store.transactions[1]!.fail(new StoreUnavailableError('database unavailable', 5));
    expect(await Promise.all(outcomes)).toEqual(['b: database unavailable', 'c: database unavailable', 'd: database unavailable']);
    expect(store.transactions.map((t) => tags(t.records))).toEqual([['a'], ['b', 'c', 'd']]);
    expect(group.active).toBe(0);
  });
});
