// Bounded admission to the store, with group commit. At most `maxActive` transactions write at
// once and at most `maxWaiting` exports wait for one; past that the hub is overloaded and says so at
// once (clients retry later) instead of queueing without bound. Exports that wait are not written
// one by one: when a transaction ends, every export waiting then (up to `maxRecordsPerGroup`
// records) goes into the next one, so that under load a transaction carries several requests and
// statements, locks and commits are paid once for all of them. An export that finds a free slot is
// written at once: grouping adds no delay. A small export finds fewer slots (`smallExportSlots`):
// a transaction's fixed cost weighs most on few records, so many small exports at once are written
// faster in a few groups than each in a transaction of its own. An export larger than a group is
// written a group at a time, so that a transaction's size does not grow with the batch.
//
// Each export is acknowledged only after the transaction holding its records committed. If the
// store refuses a group's transaction (a defect, not an outage), its exports are written again one
// by one, so that the request at fault fails alone and does not take its neighbours with it; in an
// outage every export of the group is told to retry later at once.
import type { NormalizedRecord } from '../../model/deployment-records.ts';
import { StoreUnavailableError } from '../../store/store-errors.ts';
import type { RecordSink } from '../../model/record-sink.ts';

export interface GroupCommitOptions {
  readonly maxActive: number;
  readonly maxWaiting: number;
  /** A group takes waiting exports until this many records (at least one export). */
  readonly maxRecordsPerGroup: number;
  /**
   * Transactions a small export (fewer records than half a group) may start: past that many
   * running, it waits and is written with the others that wait. Large exports may use every slot.
   */
  readonly smallExportSlots: number;
}

export type GroupCommitOutcome = { readonly admitted: true } | { readonly admitted: false };

interface Waiting {
  readonly records: readonly NormalizedRecord[];
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

export class GroupCommit {
  readonly #sink: RecordSink;
  readonly #options: GroupCommitOptions;
  #active = 0;
  readonly #waiting: Waiting[] = [];
  /** Exports per transaction, for /metrics (observed when a group is written). */
  readonly #onGroup: ((exports: number) => void) | undefined;

  constructor(sink: RecordSink, options: GroupCommitOptions, onGroup?: (exports: number) => void) {
    this.#sink = sink;
    this.#options = options;
    this.#onGroup = onGroup;
  }

  get active(): number {
    return this.#active;
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  /** Resolves once the records are committed; `admitted: false` when too many exports already wait. */
  async write(records: readonly NormalizedRecord[]): Promise<GroupCommitOutcome> {
    const small = records.length * 2 < this.#options.maxRecordsPerGroup;
    const slots = small ? Math.min(this.#options.maxActive, this.#options.smallExportSlots) : this.#options.maxActive;
    if (this.#active < slots && this.#waiting.length === 0) {
      this.#active += 1;
      const done = new Promise<void>((resolve, reject) => this.#run([{ records, resolve, reject }]));
      await done;
      return { admitted: true };
    }
    if (this.#waiting.length >= this.#options.maxWaiting) return { admitted: false };
    await new Promise<void>((resolve, reject) => this.#waiting.push({ records, resolve, reject }));
    return { admitted: true };
  }

  /** Writes one group in a slot already taken, then hands the slot to the exports waiting by then. */
  #run(group: readonly Waiting[]): void {
    void this.#write(group).finally(() => {
      const next = this.#takeGroup();
      if (next.length > 0) this.#run(next);
      else this.#active -= 1;
    });
  }

  async #write(group: readonly Waiting[]): Promise<void> {
    this.#onGroup?.(group.length);
    try {
      if (group.length === 1) await this.#writeInParts(group[0]!.records);
      else await this.#sink.write(group.flatMap((member) => member.records));
      for (const member of group) member.resolve();
    } catch (error) {
      // An outage fails every export alike, and at once: writing them again one by one would only
      // make the last one wait for every other attempt to fail.
      if (group.length === 1 || (error instanceof StoreUnavailableError && error.outage)) {
        for (const member of group) member.reject(error);
        return;
      }
      // Nothing of the group was committed: each export on its own, each with its own outcome.
      for (const member of group) {
        try {
          await this.#sink.write(member.records);
          member.resolve();
        } catch (own) {
          member.reject(own);
        }
      }
    }
  }

  /**
   * An export larger than a group is written a group's worth at a time, one transaction after the
   * other, so that what a transaction builds and reads stays the same size whatever the batch.
   * If a part fails, the export fails: those committed before are repeats when it is sent again.
   */
  async #writeInParts(records: readonly NormalizedRecord[]): Promise<void> {
    const size = this.#options.maxRecordsPerGroup;
    if (records.length <= size) {
      await this.#sink.write(records);
      return;
    }
    for (let start = 0; start < records.length; start += size) await this.#sink.write(records.slice(start, start + size));
  }

  #takeGroup(): Waiting[] {
    const group: Waiting[] = [];
    let records = 0;
    while (this.#waiting.length > 0) {
      const next = this.#waiting[0]!;
      if (group.length > 0 && records + next.records.length > this.#options.maxRecordsPerGroup) break;
      group.push(this.#waiting.shift()!);
      records += next.records.length;
    }
    return group;
  }
}
