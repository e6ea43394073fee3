/**
 * Byte helpers on Node, where `Buffer` and node:zlib do them natively (measurably faster than the
 * portable code in `native-browser.ts`, which the `#native` imports map picks everywhere else).
 * The codecs (pprof's decoder and encoder, Fuchsia's names) call these, never `Buffer` itself.
 */

import { crc32 as zlibCrc32 } from 'node:zlib';

/** A decoder of UTF-8 slices of `bytes` (no copy of the input); invalid UTF-8 becomes U+FFFD. */
export function utf8Decoder(bytes: Uint8Array): (start: number, end: number) => string {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return (start, end) => buf.toString('utf8', start, end);
}

/** The UTF-8 length of a string (lone surrogates count as U+FFFD, 3 bytes, as TextEncoder writes them). */
export function utf8Length(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

/** CRC-32 (IEEE, as gzip's), continuing from `value`. */
export function crc32(data: Uint8Array, value = 0): number {
  return zlibCrc32(data, value);
}

/** A byte array whose contents are not zeroed first (the caller writes every byte). */
export function allocUninitialized(n: number): Uint8Array {
  const b = Buffer.allocUnsafeSlow(n);
  return new Uint8Array(b.buffer, b.byteOffset, n);
}

/** The bytes of a typed array as a string of one character per byte (a compact map key). */
export function latin1String(bytes: ArrayBufferView): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}
