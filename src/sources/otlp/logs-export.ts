// One OTLP logs export, whatever the transport: decode and normalize (one walk) → store → outcome.
// The gRPC and HTTP receivers only translate the outcome into their protocol's answer.
import type { Logger } from '../../log/logger.ts';
import type { HubMetrics } from '../../metrics/hub-metrics.ts';
import type { OtlpLimits } from '../../normalize/otlp-limits.ts';
import { LogsNormalizer, type NormalizedLogs, type Rejection } from '../../normalize/otlp-logs.ts';
import { StoreUnavailableError } from '../../store/store-errors.ts';
import { OTLP_TUNING } from './otlp-settings.ts';
import type { GroupCommit } from './group-commit.ts';
import { type DecodeMemory, decodedSizeEstimate, type Reservation, retainedSizeBound, type WireEncoding } from './decode-memory.ts';
import { type LogsWalk, OtlpDecodeError } from '../../wire/otlp-logs.ts';

export type Transport = 'grpc' | 'http';

export type ExportOutcome =
  /** Stored; `rejected` > 0 makes it a partial success. */
  | { readonly kind: 'ok'; readonly rejected: number; readonly errorMessage: string }
  /** Nothing stored; the client should send the same request again later. */
  | { readonly kind: 'unavailable'; readonly retryAfterSeconds: number; readonly message: string }
  /** The payload cannot be decoded: retrying cannot help. */
  | { readonly kind: 'invalid'; readonly message: string }
  /** The request exceeds a limit as a whole (not one record of it): retrying the same cannot help. */
  | { readonly kind: 'too-large'; readonly message: string };

/** How many rejections the partial-success message spells out. */
const MAX_LISTED_REJECTIONS = 10;

export interface LogsExportDeps {
  readonly groupCommit: GroupCommit;
  readonly metrics: HubMetrics;
  readonly log: Logger;
  readonly limits: OtlpLimits;
  readonly decodeMemory: DecodeMemory;
}

/** The request as it arrived: its size after decompression, and how it is encoded. */
export interface WireRequest {
  readonly bytes: number;
  readonly encoding: WireEncoding;
}

type DecodeReservation = Extract<Reservation, { kind: 'reserved' }>;

const MiB = (bytes: number): string => `${(bytes / 1_048_576).toFixed(1)} MiB`;

export class LogsExport {
  readonly #deps: LogsExportDeps;

  constructor(deps: LogsExportDeps) {
    this.#deps = deps;
  }

  /** `workspaces`: those the sender may send reports of (its credential's), undefined for every one. */
  async export(transport: Transport, wire: WireRequest, walk: LogsWalk, workspaces?: readonly string[]): Promise<ExportOutcome> {
    const outcome = await this.#withinMemory(wire, (reservation) => this.#export(transport, walk, wire, reservation, workspaces));
    return this.#counted(transport, outcome);
  }

  /**
   * For a request whose size is known before its body is read: the answer if it cannot be taken
   * now (counted like an export), so the receiver need not read what it would refuse anyway.
   */
  refusalFor(transport: Transport, wire: WireRequest): ExportOutcome | undefined {
    const estimate = decodedSizeEstimate(wire.bytes, wire.encoding);
    const fits = this.#deps.decodeMemory.check(estimate);
    return fits === 'fits' ? undefined : this.#counted(transport, this.#memoryRefusal(fits, wire, estimate));
  }

  #counted(transport: Transport, outcome: ExportOutcome): ExportOutcome {
    const label = outcome.kind === 'ok' && outcome.rejected > 0 ? 'partial' : outcome.kind;
    this.#deps.metrics.ingestRequests.inc({ transport, outcome: label });
    return outcome;
  }

  /** Runs the export with its decoded size reserved (see decode-memory.ts), or says why not. */
  async #withinMemory(wire: WireRequest, work: (reservation: DecodeReservation) => Promise<ExportOutcome>): Promise<ExportOutcome> {
    const estimate = decodedSizeEstimate(wire.bytes, wire.encoding);
    const reservation = this.#deps.decodeMemory.reserve(estimate);
    if (reservation.kind !== 'reserved') return this.#memoryRefusal(reservation.kind, wire, estimate);
    try {
      return await work(reservation);
    } finally {
      reservation.release();
    }
  }

  #memoryRefusal(reason: 'busy' | 'too-large', wire: WireRequest, estimate: number): ExportOutcome {
    if (reason === 'busy') return { kind: 'unavailable', retryAfterSeconds: OTLP_TUNING.overloadRetrySeconds, message: 'hub overloaded: too much data in flight' };
    return {
      kind: 'too-large',
      message: `request of ${MiB(wire.bytes)} would take about ${MiB(estimate)} of memory decoded; this hub decodes at most ${MiB(this.#deps.decodeMemory.capacityBytes)} at once (half its heap: raise --max-old-space-size in NODE_OPTIONS for larger requests): send smaller batches`,
    };
  }

  async #export(transport: Transport, walk: LogsWalk, wire: WireRequest, reservation: DecodeReservation, workspaces: readonly string[] | undefined): Promise<ExportOutcome> {
    const { groupCommit, metrics, log } = this.#deps;
    const normalized = this.#normalized(walk, workspaces);
    if (!('records' in normalized)) return normalized;
    // Decoded: from here on the export holds only its bytes and records (see decode-memory.ts).
    reservation.shrinkTo(retainedSizeBound(wire.bytes, normalized.records.length + normalized.rejected.length));
    metrics.ingestRecords.inc({ transport, outcome: 'rejected' }, normalized.rejected.length);
    metrics.ingestRecords.inc({ transport, outcome: 'ignored' }, normalized.ignored);
    const partial = {
      kind: 'ok',
      rejected: normalized.rejected.length,
      errorMessage: describeRejections(normalized.rejected),
    } as const;
    if (normalized.rejected.length > 0) {
      log.info({ transport, rejected: normalized.rejected.length, reason: partial.errorMessage }, 'rejected log records');
    }
    if (normalized.records.length === 0) return partial;

    const stopTimer = metrics.writeSeconds.startTimer({ source: `otlp-${transport}` });
    metrics.inFlightWrites.inc();
    try {
      const result = await groupCommit.write(normalized.records);
      if (!result.admitted) {
        return { kind: 'unavailable', retryAfterSeconds: OTLP_TUNING.overloadRetrySeconds, message: 'hub overloaded: too many exports in flight' };
      }
      metrics.ingestRecords.inc({ transport, outcome: 'accepted' }, normalized.records.length);
      return partial;
    } catch (error) {
      if (error instanceof StoreUnavailableError) {
        log.warn({ transport, err: error.message }, 'export refused: store unavailable');
        return { kind: 'unavailable', retryAfterSeconds: error.retryAfterSeconds, message: error.message };
      }
      throw error;
    } finally {
      metrics.inFlightWrites.dec();
      stopTimer();
    }
  }

  /**
   * The request decoded and normalized, or why it cannot be. A call of its own, which returns
   * nothing of the decoding: what an async function holds in locals is kept across its awaits.
   */
  #normalized(walk: LogsWalk, workspaces: readonly string[] | undefined): NormalizedLogs | ExportOutcome {
    const { limits } = this.#deps;
    const normalizer = new LogsNormalizer(new Date(), limits, workspaces);
    try {
      walk(normalizer);
    } catch (error) {
      if (error instanceof OtlpDecodeError) return { kind: 'invalid', message: error.message };
      throw error;
    }
    if (normalizer.recordCount > limits.maxRecordsPerRequest) {
      return {
        kind: 'too-large',
        message: `request has ${normalizer.recordCount} log records; the limit is ${limits.maxRecordsPerRequest} (--max-records-per-request): send smaller batches`,
      };
    }
    return normalizer.result();
  }
}

export function describeRejections(rejections: readonly Rejection[]): string {
  if (rejections.length === 0) return '';
  const listed = rejections.slice(0, MAX_LISTED_REJECTIONS).map((rejection) => `${rejection.position}: ${rejection.reason}`);
  const more = rejections.length > MAX_LISTED_REJECTIONS ? `; … and ${rejections.length - MAX_LISTED_REJECTIONS} more` : '';
  return `${rejections.length} log record(s) rejected: ${listed.join('; ')}${more}`;
}
