// UTF-8 bytes → string, without losing the fact that bytes were invalid. Buffer decoding turns
// invalid bytes into U+FFFD, which looks like text that was sent; here each invalid byte becomes
// a lone surrogate instead (U+DC80–U+DCFF, Python's "surrogateescape", PEP 383). The normalizers
// refuse lone surrogates in the fields they store, naming the field, so a record with a broken
// name is rejected alone instead of being stored garbled — or failing its whole request.
import { isUtf8 } from 'node:buffer';

export function decodeUtf8(bytes: Uint8Array): string {
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (isUtf8(buffer)) return buffer.toString('utf8');
  let text = '';
  let start = 0;
  let index = 0;
  while (index < buffer.length) {
    const lead = buffer[index]!;
    const length = lead < 0x80 ? 1 : lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
    if (length > 0 && index + length <= buffer.length && (length === 1 || isUtf8(buffer.subarray(index, index + length)))) {
      index += length;
      continue;
    }
    text += buffer.toString('utf8', start, index) + String.fromCharCode(0xdc00 + lead);
    index += 1;
    start = index;
  }
  return text + buffer.toString('utf8', start, index);
}
