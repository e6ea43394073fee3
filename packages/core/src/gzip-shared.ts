/**
 * What both gzip implementations (`gzip-node.ts`, `gzip-browser.ts`) share: the limits, the
 * errors (so that a limit or corrupt data reads the same on Node and in a browser) and byte helpers.
 */

import { ErrorCodes, ProfkitError } from './errors.js';

/** Safe defaults; every one can be raised by the option named in its error. */
export const DEFAULT_LIMITS = {
  /** Largest compressed or raw input read into memory (`maxInputBytes`). */
  maxInputBytes: 4 * 1024 ** 3,
  /** Largest decompressed size of a gzip input (`maxDecompressedBytes`). */
  maxDecompressedBytes: 4 * 1024 ** 3,
} as const;

export interface Limits {
  maxInputBytes?: number;
  maxDecompressedBytes?: number;
}

/** The decompressed-size limit of a whole-buffer inflation (zlib cannot return more than 4 GiB at once). */
export function maxDecompressed(limits: Limits): number {
  return Math.min(limits.maxDecompressedBytes ?? DEFAULT_LIMITS.maxDecompressedBytes, 2 ** 32);
}

export function decompressedLimitError(max: number, file?: string): ProfkitError {
  return new ProfkitError(ErrorCodes.LIMIT, `decompressed input exceeds ${max} bytes (raise it with the option limits.maxDecompressedBytes)`, {
    file,
    option: 'maxDecompressedBytes',
    rule: 'decompressed size limit',
  });
}

/** Corrupt gzip data; `subject` names what was inflated in the message (the file, or `gzip data`). */
export function decompressError(subject: string, message: string, file?: string, cause?: unknown): ProfkitError {
  return new ProfkitError(ErrorCodes.DECOMPRESS, `decompressing ${subject} failed: ${message}`, { file, rule: 'gzip stream' }, cause === undefined ? undefined : { cause });
}

/** Inflate never expands data more than this. */
const MAX_INFLATE_RATIO = 1032;

/**
 * The decompressed size a gzip buffer announces in its (last) trailer, when it is plausible:
 * ISIZE (size mod 2^32), non-zero and no more than the compressed size can expand to.
 * `undefined` when it cannot be trusted.
 */
export function gzipAnnouncedSize(gz: Uint8Array): number | undefined {
  if (gz.length < 18) return undefined;
  const n = (gz[gz.length - 4]! | (gz[gz.length - 3]! << 8) | (gz[gz.length - 2]! << 16) | (gz[gz.length - 1]! << 24)) >>> 0;
  if (n === 0 || n > gz.length * MAX_INFLATE_RATIO) return undefined;
  return n;
}

/**
 * How many times its compressed size a gzip's own claim of its inflated size (the trailer's
 * ISIZE) may make the first buffer it is inflated into: deflate inflates up to 1032 times, so a
 * forged trailer would otherwise make a 2 MB file allocate 2 GiB before a byte is inflated. Honest
 * profiles inflate about 1.3 to 4 times (the 1M-sample profile: 78 MB to 103 MB); one that
 * inflates more only grows its output as the bytes arrive (towards `maxDecompressedBytes`).
 */
export const MAX_ANNOUNCED_INFLATE_RATIO = 4;

/**
 * The first size of the buffer a gzip of `compressedBytes` bytes (0: unknown) is inflated into,
 * given the inflated size it announces (`announced`, 0: none): the claim, but no more than
 * MAX_ANNOUNCED_INFLATE_RATIO times the compressed size, so that a forged claim costs no more than
 * no claim. The inflate then grows its output as it fills, up to `maxDecompressedBytes`.
 */
export function inflateBufferSize(announced: number, compressedBytes: number): number {
  const most = compressedBytes * MAX_ANNOUNCED_INFLATE_RATIO;
  return announced > 0 ? Math.min(announced, most) : most;
}

/**
 * A claim core's whole-buffer gunzip (`gunzipBounded`) takes as its first chunk's size whatever
 * the ratio: reserving this much for a forged trailer is a bounded cost, while an honest gzip that
 * inflates more than MAX_ANNOUNCED_INFLATE_RATIO times (text profiles do: Rprof and gperftools
 * text gzip 8 to 30 times) is inflated into one chunk instead of many chunks and a final copy
 * (a 1.7 MB file inflating to 112 MB: 265 MB peak and twice the time in chunks).
 */
export const TRUSTED_ANNOUNCED_INFLATE_BYTES = 64 * 1024 * 1024;

/**
 * The first chunk of `gunzipBounded` for a gzip of `compressedBytes` bytes announcing `announced`
 * (> 0): the claim, up to the larger of `inflateBufferSize`'s bound and TRUSTED_ANNOUNCED_INFLATE_BYTES.
 */
export function firstInflateChunkSize(announced: number, compressedBytes: number): number {
  return Math.min(announced, Math.max(compressedBytes * MAX_ANNOUNCED_INFLATE_RATIO, TRUSTED_ANNOUNCED_INFLATE_BYTES));
}

/**
 * zlib's deflateBound (stored-block worst case), plus the gzip header and trailer. A bound that
 * is ever too small only costs a second chunk and a concatenation, never wrong output.
 */
export function gzipBound(n: number): number {
  // Divisions, not `>>>`: a size past 4 GiB would wrap (and the bound come out too small).
  return Math.max(n + Math.floor(n / 2 ** 12) + Math.floor(n / 2 ** 14) + Math.floor(n / 2 ** 25) + 13 + 18 + 64, 64);
}

/** The largest output `gzipChunks` makes: one buffer (Node's `buffer.constants.MAX_LENGTH` on 64-bit Node 20). */
export const MAX_GZIP_BUFFER_BYTES = 2 ** 32;

/**
 * The `PROFKIT_E_LIMIT` error of a `gzipChunks` whose output outgrows one buffer (`maxBytes`): such
 * data can only be gzipped as a stream (`gzipStream`, what writing a file uses).
 */
export function gzipOutputLimitError(total: number, maxBytes: number): ProfkitError {
  return new ProfkitError(ErrorCodes.LIMIT, `gzip output of ${total} input bytes exceeds ${maxBytes} bytes, the largest buffer: gzip it as a stream (gzipStream) instead`, {
    rule: 'gzipChunks output is one buffer',
    limit: maxBytes,
  });
}

/**
 * Deflating started before the write that needs it (`startDeflateAhead`): a guess of the bytes a
 * `gzipStream` will get, deflated on the thread pool while the caller does other work. Only a
 * guess: `gzipStream` takes a block's early result only for bytes equal to the guessed ones, so
 * its output never depends on it. Opaque outside the gzip implementation that made it.
 */
export interface DeflateAhead {
  /** The deflate level the guess is deflated at (`gzipStream` at another level ignores it). */
  readonly level: number;
  /** How many blocks a `gzipStream` took from it (for tests and diagnostics). */
  readonly blocksTaken: number;
  /** Stops deflating and releases the guessed bytes and the results (idempotent). */
  cancel(): void;
}

/** A `DeflateAhead` of bytes still arriving (`startDeflateAheadOfArriving`): told how far they are. */
export interface ArrivingDeflateAhead extends DeflateAhead {
  /** `length` bytes from the buffer's start are written and final. */
  arrived(length: number): void;
  /** The bytes have ended at `total` (no more arrive); only now can `gzipStream` take blocks. */
  end(total: number): void;
}

/** Joins byte chunks into one array (the neutral `Buffer.concat`); one chunk is returned as it is. */
export function concatBytes(chunks: readonly Uint8Array[], total = chunks.reduce((n, c) => n + c.length, 0)): Uint8Array {
  if (chunks.length === 1 && chunks[0]!.length === total) return chunks[0]!;
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    const take = Math.min(c.length, total - at);
    out.set(take === c.length ? c : c.subarray(0, take), at);
    at += take;
    if (at === total) break;
  }
  return out;
}
