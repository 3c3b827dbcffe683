// What every feed of the hub implements: the OTLP receiver, the Kubernetes CRD watcher and the
// Azure Resource Graph poller each turn their input into normalized records and hand them to
// one sink (the store), which acknowledges only what is committed.
import type { RecordSink } from '../model/record-sink.ts';

export interface Source {
  readonly name: string;
  /** Starts feeding `sink`; resolves once the source is running (listening, watching, polling). */
  start(sink: RecordSink, signal: AbortSignal): Promise<void>;
  /** Stops taking new input and finishes the work in flight. */
  stop(): Promise<void>;
}
