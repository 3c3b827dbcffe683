// Reads a request body with size limits on the wire and after decompression, so that neither a
// huge upload nor a gzip bomb can exhaust memory.
import { promisify } from 'node:util';
import { gunzip, inflate } from 'node:zlib';

const gunzipAsync = promisify(gunzip);
const inflateAsync = promisify(inflate);

export class BodyTooLargeError extends Error {
  override readonly name = 'BodyTooLargeError';
}

export class BodyEncodingError extends Error {
  override readonly name = 'BodyEncodingError';
}

export const SUPPORTED_ENCODINGS = ['identity', 'gzip', 'deflate'] as const;

export async function readBody(
  stream: ReadableStream<Uint8Array> | null,
  encoding: string,
  maxBytes: number,
): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (stream !== null) {
    const reader = stream.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel();
        throw new BodyTooLargeError(`request body exceeds ${maxBytes} bytes`);
      }
      chunks.push(value);
    }
  }
  const raw = Buffer.concat(chunks);
  if (encoding === 'identity' || encoding === '') return raw;
  try {
    const inflateBody = encoding === 'gzip' ? gunzipAsync : inflateAsync;
    return await inflateBody(raw, { maxOutputLength: maxBytes });
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError) {
      throw new BodyTooLargeError(`decompressed request body exceeds ${maxBytes} bytes`);
    }
    throw new BodyEncodingError(`invalid ${encoding} body: ${(error as Error).message}`);
  }
}
