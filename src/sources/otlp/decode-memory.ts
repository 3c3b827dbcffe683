// Decoded OTLP requests take many times their size on the wire: measured on protobuf 21–38×,
// on JSON 5–8× (most for many small attributes). A 64 MiB request can thus need more memory
// than the hub's whole heap, and many ordinary requests decoded while others wait for the
// database can too. Before decoding, each request reserves its estimated decoded size from a
// budget — half of V8's heap limit — and gives it back when its export is answered. A request
// that alone exceeds the budget is refused as too large (retrying cannot help; smaller batches
// can); one that does not fit beside the requests in flight is refused as "overloaded, retry".
import { getHeapStatistics } from 'node:v8';

export type WireEncoding = 'protobuf' | 'json';

/** Upper bounds of the measured growth from wire bytes to the decoded request. */
const GROWTH: Readonly<Record<WireEncoding, number>> = { protobuf: 40, json: 10 };

export function decodedSizeEstimate(wireBytes: number, encoding: WireEncoding): number {
  return wireBytes * GROWTH[encoding];
}

export type Reservation = { readonly kind: 'reserved'; release(): void } | { readonly kind: 'busy' } | { readonly kind: 'too-large' };

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
    let released = false;
    return {
      kind: 'reserved',
      release: () => {
        if (released) return;
        released = true;
        this.#reserved -= bytes;
      },
    };
  }
}
