/**
 * gzip helpers of the pprof codec, on core's gzip seam (node:zlib on Node, pako elsewhere; see
 * @profkit/core's `gzip.ts`), which avoids node:zlib's output doubling: when the final size is
 * known in advance (gunzip: the gzip trailer's ISIZE; gzip: a bound of the compressed size), one
 * chunk that large holds the whole output and no concatenation (no second copy) happens.
 */

import { gunzipBounded, gzipAnnouncedSize as coreGzipAnnouncedSize, gzipBytes, gzipChunks as coreGzipChunks, gzipStream as coreGzipStream, type DeflateAhead, type Limits } from '@profkit/core';

/**
 * Inflates a whole gzip buffer into one output buffer sized from the gzip trailer: core's
 * `gunzipBounded` does exactly that (same limits, same errors); kept as this package's name.
 */
export function gunzipExact(gz: Uint8Array, limits: Limits = {}, file?: string): Uint8Array {
  return gunzipBounded(gz, limits, file);
}

/** The size a gzip trailer announces (re-exported from core). */
export const gzipAnnouncedSize = coreGzipAnnouncedSize;

/** gzips into one output buffer (no concatenation copy), memLevel 9 (see core's `gzipBytes`). */
export function gzipOneBuffer(raw: Uint8Array, level: number): Uint8Array {
  return gzipBytes(raw, level);
}

/**
 * gzips a stream of chunks of known total size (as `gzipOneBuffer` would gzip their
 * concatenation) without the whole input ever being in memory (see core's `gzipChunks`).
 */
export function gzipChunks(total: number, chunks: Iterable<Uint8Array>, level: number): Promise<Uint8Array> {
  return coreGzipChunks(total, chunks, level);
}

/**
 * gzips a stream of chunks into a stream of compressed pieces: neither the input nor the output
 * is ever whole in memory (what writing a file needs). `patchHeader` may rewrite the 10-byte gzip
 * header, which is handed to it whole (pieces shorter than that are joined first). `total`: the
 * exact byte count of `chunks` when known (deflating then starts block by block; see core's).
 * `ahead`: blocks deflated early from a guess of the bytes (see core's `startDeflateAhead`).
 */
export async function* gzipStream(chunks: Iterable<Uint8Array>, level: number, patchHeader?: (first: Uint8Array) => void, total?: number, ahead?: DeflateAhead): AsyncGenerator<Uint8Array> {
  let pending: Uint8Array | undefined;
  for await (const piece of coreGzipStream(chunks, level, total, ahead)) {
    let out = piece;
    if (patchHeader) {
      if (pending) {
        const joined = new Uint8Array(pending.length + out.length);
        joined.set(pending);
        joined.set(out, pending.length);
        out = joined;
        pending = undefined;
      }
      if (out.length < 10) {
        pending = out;
        continue;
      }
      patchHeader(out);
      patchHeader = undefined;
    }
    yield out;
  }
  if (pending) yield pending;
}
