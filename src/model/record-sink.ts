// Where normalized records go: the boundary between the feeds, which make records, and the store,
// which commits them. Both sides import it from here, so neither imports the other.
import type { NormalizedRecord } from './deployment-records.ts';

export interface WriteSummary {
  readonly realStates: number;
  readonly desiredStates: number;
  /** History rows added (transitions, late reports); duplicates add none. */
  readonly transitions: number;
  /** New deployment assignments; a descriptor seen before adds none. */
  readonly assignments: number;
  /** Reconcilers taken out of the current state. */
  readonly removed: number;
}

export interface RecordSink {
  /**
   * Stores the records atomically. Resolves once they are committed; rejects with
   * StoreUnavailableError when the store cannot take them now (the caller should retry later).
   */
  write(records: readonly NormalizedRecord[]): Promise<WriteSummary>;
}
