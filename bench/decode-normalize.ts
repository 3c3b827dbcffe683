// The hub's own work per record before the store: decoding an export request and normalizing its
// records, in this process, without gRPC or a database. The ingest runs measure the whole path,
// where this part is a few microseconds among thirty and drowned in the machine's noise; here a
// change to the decoders or the normalizers shows on its own. CPU time of this process, garbage
// collection included, at its best over several passes (the least disturbed by the machine).
// With several checkouts (`--against`), each one's code is loaded into this process and the
// passes alternate between them, so that they meet the same moments of the machine's noise.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { JsonLogsSerializer } from '@opentelemetry/otlp-transformer';
import { protobufRequest } from '../test/support/raw-otlp.ts';
import { progress } from './bench-report.ts';
import { workloadRecords } from './ingest-raw-grpc.ts';

const PASSES = 12;
const BATCH = 1_000;
/** Requests timed together. */
const CHUNK = 10;

export interface DecodeResult {
  readonly checkout: string;
  readonly encoding: string;
  readonly bytesPerRecord: number;
  readonly decodeUs: number;
  readonly decodeNormalizeUs: number;
}

/** One checkout's decoders and normalizer, as the receivers call them. */
interface Pipeline {
  readonly name: string;
  decode(encoding: Encoding, body: Buffer | string): unknown;
  decodeNormalize(encoding: Encoding, body: Buffer | string): { readonly records: readonly unknown[] };
}

type Encoding = 'protobuf' | 'JSON';

/** Checkouts before the walking decoders (commit ca7f07f and older) built a request tree first. */
async function loadPipeline(checkout: string): Promise<Pipeline> {
  const load = (file: string) => import(pathToFileURL(path.join(checkout, file)).href) as Promise<Record<string, (...args: never[]) => never>>;
  const normalize = await load('src/normalize/otlp-logs.ts');
  const protobuf = await load('src/sources/otlp/decode-protobuf.ts');
  const json = await load('src/sources/otlp/decode-json.ts');
  const name = path.basename(checkout);
  const Normalizer = normalize['LogsNormalizer'] as unknown as (new (receivedAt: Date) => { result(): { records: unknown[] } }) | undefined;
  if (Normalizer !== undefined) {
    const walk = (encoding: Encoding, body: Buffer | string, visitor: unknown): void =>
      encoding === 'protobuf' ? protobuf['walkLogsProtobuf']!(body as never, visitor as never) : json['walkLogsJson']!(body as never, visitor as never);
    const ignore = { resource: () => undefined, scope: () => undefined, record: () => undefined };
    return {
      name,
      decode: (encoding, body) => walk(encoding, body, ignore),
      decodeNormalize: (encoding, body) => {
        const normalizer = new Normalizer(new Date());
        walk(encoding, body, normalizer);
        return normalizer.result();
      },
    };
  }
  const decode = (encoding: Encoding, body: Buffer | string): unknown =>
    encoding === 'protobuf' ? protobuf['decodeLogsProtobuf']!(body as never) : json['decodeLogsJson']!(body as never);
  return { name, decode, decodeNormalize: (encoding, body) => normalize['normalizeLogsRequest']!(decode(encoding, body) as never, new Date() as never) };
}

/** The ingest bench's records (2,000 hosts × 12 reconcilers × 5 rounds) in requests of 1,000, through each checkout. */
export async function benchDecodeNormalize(checkouts: readonly string[]): Promise<DecodeResult[]> {
  const pipelines = await Promise.all(checkouts.map(loadPipeline));
  const records = (await workloadRecords({ hosts: 2_000, reconcilersPerHost: 12, rounds: 5, kind: 'transitions', runId: 1 })).flat();
  const batches = [];
  for (let i = 0; i < records.length; i += BATCH) batches.push(records.slice(i, i + BATCH));
  const encodings: { name: Encoding; bodies: (Buffer | string)[] }[] = [
    { name: 'protobuf', bodies: batches.map((batch) => protobufRequest(batch)) },
    { name: 'JSON', bodies: batches.map((batch) => Buffer.from(JsonLogsSerializer.serializeRequest(batch)!).toString('utf8')) },
  ];
  const results: DecodeResult[] = [];
  for (const { name, bodies } of encodings) {
    progress(`decode and normalize: ${name}, ${PASSES} passes${pipelines.length > 1 ? ' each, alternating' : ''}`);
    // Each pass times the requests a few at a time: a chunk's best over the passes is a moment the
    // machine left this process alone, which a whole pass of half a second may never get.
    const chunks: (Buffer | string)[][] = [];
    for (let i = 0; i < bodies.length; i += CHUNK) chunks.push(bodies.slice(i, i + CHUNK));
    const best = pipelines.map(() => ({ decode: chunks.map(() => Infinity), decodeNormalize: chunks.map(() => Infinity) }));
    for (let pass = 0; pass < PASSES; pass += 1) {
      pipelines.forEach((pipeline, index) => {
        const mine = best[index]!;
        chunks.forEach((chunk, c) => {
          mine.decode[c] = Math.min(mine.decode[c]!, cpuMicros(() => {
            for (const body of chunk) pipeline.decode(name, body);
          }));
          mine.decodeNormalize[c] = Math.min(mine.decodeNormalize[c]!, cpuMicros(() => {
            for (const body of chunk) {
              const normalized = pipeline.decodeNormalize(name, body);
              if (normalized.records.length !== BATCH) throw new Error(`${pipeline.name}, ${name}: ${normalized.records.length} of ${BATCH} records normalized`);
            }
          }));
        });
      });
    }
    const perRecord = (micros: readonly number[]) => micros.reduce((sum, value) => sum + value, 0) / records.length;
    const bytesPerRecord = Math.round(bodies.reduce((sum, body) => sum + Buffer.byteLength(body), 0) / records.length);
    pipelines.forEach((pipeline, index) =>
      results.push({ checkout: pipeline.name, encoding: name, bytesPerRecord, decodeUs: perRecord(best[index]!.decode), decodeNormalizeUs: perRecord(best[index]!.decodeNormalize) }),
    );
  }
  return results;
}

function cpuMicros(work: () => void): number {
  const before = process.cpuUsage();
  work();
  const spent = process.cpuUsage(before);
  return spent.user + spent.system;
}
