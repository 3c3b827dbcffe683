// A minimal OTLP/HTTP (protobuf) log sender for the hub's own tools (the demo fleet): the real
// wire format, encoded with the hub's own OTLP schema, no SDK needed at run time.
import Long from 'long';
import { describeFetchFailure, shownUrl } from '../http/fetch-failure.ts';
import { otlpTypes } from '../sources/otlp/otlp-proto.ts';

export type AttributeValue = string | number | boolean;

export interface LogToSend {
  readonly eventName: string;
  readonly time: Date;
  readonly attributes: Readonly<Record<string, AttributeValue>>;
  /** A string, or a map (sent as an OTLP kvlist). */
  readonly body: string | Readonly<Record<string, unknown>>;
}

export interface ResourceLogsToSend {
  readonly resource: Readonly<Record<string, AttributeValue>>;
  readonly logs: readonly LogToSend[];
}

function anyValue(value: unknown): Record<string, unknown> {
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  if (typeof value === 'number') return Number.isInteger(value) ? { intValue: value } : { doubleValue: value };
  if (Array.isArray(value)) return { arrayValue: { values: value.map(anyValue) } };
  if (typeof value === 'object' && value !== null) return { kvlistValue: { values: keyValues(value as Record<string, unknown>) } };
  return {};
}

function keyValues(map: Readonly<Record<string, unknown>>): Record<string, unknown>[] {
  return Object.entries(map)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => ({ key, value: anyValue(value) }));
}

export function encodeLogs(batch: readonly ResourceLogsToSend[]): Uint8Array {
  const request = otlpTypes.ExportLogsServiceRequest.fromObject({
    resourceLogs: batch.map((entry) => ({
      resource: { attributes: keyValues(entry.resource) },
      scopeLogs: [
        {
          scope: { name: 'kalypso-hub/demo' },
          logRecords: entry.logs.map((log) => ({
            timeUnixNano: Long.fromString(`${BigInt(log.time.getTime()) * 1_000_000n}`, true),
            eventName: log.eventName,
            attributes: keyValues(log.attributes),
            body: anyValue(log.body),
          })),
        },
      ],
    })),
  });
  return otlpTypes.ExportLogsServiceRequest.encode(request).finish();
}

export interface SendResult {
  readonly rejected: number;
  readonly errorMessage: string;
}

/** A hub that accepted the connection but does not answer is given up on after this long. */
const SEND_TIMEOUT_MS = 30_000;

/**
 * POSTs one export request; throws on a non-2xx answer or no answer at all, naming the URL and the
 * cause (the caller decides whether to retry).
 */
export async function sendLogs(endpoint: string, batch: readonly ResourceLogsToSend[], token?: string): Promise<SendResult> {
  const url = `${endpoint.replace(/\/+$/, '')}/v1/logs`;
  let response: Response;
  let bytes: Uint8Array;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf', ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
      body: encodeLogs(batch),
      signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
    });
    bytes = new Uint8Array(await response.arrayBuffer());
  } catch (error) {
    throw new Error(describeFetchFailure(url, error, SEND_TIMEOUT_MS), { cause: error });
  }
  if (!response.ok) throw new Error(`${shownUrl(url)} answered ${response.status} ${response.statusText}`.trimEnd());
  const answer = otlpTypes.ExportLogsServiceResponse.toObject(otlpTypes.ExportLogsServiceResponse.decode(bytes), { longs: Number }) as {
    partialSuccess?: { rejectedLogRecords?: number; errorMessage?: string };
  };
  return { rejected: answer.partialSuccess?.rejectedLogRecords ?? 0, errorMessage: answer.partialSuccess?.errorMessage ?? '' };
}
