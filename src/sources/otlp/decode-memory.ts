// Decoding an OTLP request can take many times its size on the wire: measured on protobuf 21–38×,
// on JSON 5–8× (most for many small attributes), when requests were decoded into a tree. A 64 MiB
// request can thus need more memory than the hub's whole heap. Before decoding, each request
// reserves its estimated decoded size from a budget — half of V8's heap limit. A request that alone
// exceeds the budget is refused as too large (retrying cannot help; smaller batches can); one that
// does not fit beside the requests in flight is refused as "overloaded, retry".
//
// Once decoded, an export holds far less while it waits for the database: its wire bytes and its
// normalized records (measured 280–650 bytes a record, 0.4–2.1× the wire size, across state
// reports, descriptors and rejections). Its reservation then shrinks to `retainedSizeBound`, so
// that the exports waiting for a transaction are counted for what they hold: with the decoded
// size held for the whole write, two collectors sending the OpenTelemetry Collector's default
// batch (8,192 records, about 3 MB) could not both wait at once, and the second was told to retry.
import { getHeapStatistics } from 'node:v8';

export type WireEncoding = 'protobuf' | 'json';

/** Upper bounds of the measured growth from wire bytes to the decoded request. */
const GROWTH: Readonly<Record<WireEncoding, number>> = { protobuf: 40, json: 10 };

export function decodedSizeEstimate(wireBytes: number, encoding: WireEncoding): number {
  return wireBytes * GROWTH[encoding];
}

/** One normalized record or rejection, with its strings: measured 280–650 bytes. */
const RETAINED_PER_RECORD = 1_024;

/**
 * What a decoded export holds until it is answered, at most: the request's bytes, its strings
 * copied out of them (never more bytes than the wire held), and each record's objects.
 */
export function retainedSizeBound(wireBytes: number, records: number): number {
  return 2 * wireBytes + records * RETAINED_PER_RECORD;
}

export type Reservation =
  | {
      readonly kind: 'reserved';
      /** Keeps only `bytes` of the reservation (never grows it). */
      shrinkTo(bytes: number): void;
      release(): void;
    }
  | { readonly kind: 'busy' }
  | { readonly kind: 'too-large' };

export class DecodeMemory {
  readonly capacityBytes: number;
  #reserved = 0;

  constructor(capacityBytes: number) {
    this.capacityBytes = capacityBytes;
  }

  /** Half of this process's heap limit (which `--max-old-space-size` sets). */
  static halfOfHeap(): DecodeMemory {
    return new DecodeMemory(Math.floor(getHeapStatistics().heap_size_limit / 2));
  }

  get reservedBytes(): number {
    return this.#reserved;
  }

  /** Whether `bytes` could be reserved now, without reserving them. */
  check(bytes: number): 'fits' | 'busy' | 'too-large' {
    if (bytes > this.capacityBytes) return 'too-large';
    return this.#reserved + bytes > this.capacityBytes ? 'busy' : 'fits';
  }

  reserve(bytes: number): Reservation {
    const fits = this.check(bytes);
    if (fits !== 'fits') return { kind: fits };
    this.#reserved += bytes;
    let held = bytes;
    return {
      kind: 'reserved',
      shrinkTo: (keep) => {
        const kept = Math.min(held, Math.max(0, keep));
        this.#reserved -= held - kept;
        held = kept;
      },
      release: () => {
        this.#reserved -= held;
        held = 0;
      },
    };
  }
}
