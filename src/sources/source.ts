// What every feed of the hub implements: the OTLP receiver, the Kubernetes CRD watcher and the
// Azure Resource Graph poller each turn their input into normalized records and hand them to
// one sink (the store), which acknowledges only what is committed.
import type { NormalizedRecord } from '../model/deployment-records.ts';

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

export interface Source {
  readonly name: string;
  /** Starts feeding `sink`; resolves once the source is running (listening, watching, polling). */
  start(sink: RecordSink, signal: AbortSignal): Promise<void>;
  /** Stops taking new input and finishes the work in flight. */
  stop(): Promise<void>;
}
