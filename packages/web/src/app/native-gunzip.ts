/**
 * gzip inflated by the browser's own zlib (`DecompressionStream`), before core reads the
 * profile: core's platform-neutral reader inflates with pako, a JavaScript zlib, which took 2.3–4 s
 * of the 1M-sample profile's first paint (78 MB gzipped, 103 MB inflated) where the native one
 * takes about a quarter of it. Only an accelerator: anything it is not sure of (a second gzip
 * member, bytes after the member, corrupt data, output past core's `maxDecompressedBytes`, no
 * `DecompressionStream`) gives `undefined`, and the caller hands the gzip bytes to core as before,
 * whose reader then reports it with its own typed errors and limits.
 */

import { DEFAULT_LIMITS } from '@profkit/core';

const GZIP_MAGIC = [0x1f, 0x8b] as const;
/** The smallest gzip member: a 10-byte header, an empty deflate block, the 8-byte trailer. */
const MIN_GZIP_BYTES = 20;

/** Bytes of a buffer being filled: doubled as it fills, the exact view returned at the end. */
function appended(into: Uint8Array, used: number, chunk: Uint8Array): Uint8Array {
  if (used + chunk.length <= into.length) {
    into.set(chunk, used);
    return into;
  }
  const larger = new Uint8Array(Math.max(used + chunk.length, into.length * 2));
  larger.set(into.subarray(0, used));
  larger.set(chunk, used);
  return larger;
}

/**
 * The inflated bytes of `bytes` when it is one gzip member that the platform's
 * `DecompressionStream` inflates to at most `maxBytes` (core's `maxDecompressedBytes` by default);
 * `undefined` otherwise (not gzip, or anything core's own reader should decide).
 */
export async function nativeGunzip(bytes: Uint8Array, maxBytes: number = DEFAULT_LIMITS.maxDecompressedBytes): Promise<Uint8Array | undefined> {
  if (typeof DecompressionStream !== 'function' || bytes.length < MIN_GZIP_BYTES || bytes[0] !== GZIP_MAGIC[0] || bytes[1] !== GZIP_MAGIC[1]) return undefined;
  // The trailer's ISIZE (the size mod 2^32, which zlib checks) sizes the output buffer; one
  // past the limit, or 0, only costs a buffer grown as it fills.
  const n = bytes.length;
  const announced = (bytes[n - 4]! | (bytes[n - 3]! << 8) | (bytes[n - 2]! << 16) | (bytes[n - 1]! << 24)) >>> 0;
  let out: Uint8Array = new Uint8Array(Math.min(announced > 0 && announced <= maxBytes ? announced : n * 4, maxBytes, 2 ** 31));
  let used = 0;
  // Chromium's and Firefox's DecompressionStream reject bytes after the first member (another
  // member, or trailing garbage): those reach core's reader, which reads every member as Go does.
  const reader = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream('gzip')).getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (used + value.length > maxBytes) {
        await reader.cancel();
        return undefined;
      }
      out = appended(out, used, value);
      used += value.length;
    }
  } catch {
    return undefined;
  }
  return out.subarray(0, used);
}
