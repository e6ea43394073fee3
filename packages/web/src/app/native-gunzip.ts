/**
 * gzip inflated by the browser's own zlib (`DecompressionStream`), before core reads the
 * profile: core's platform-neutral reader inflates with pako, a JavaScript zlib, which took 2.3–4 s
 * of the 1M-sample profile's first paint (78 MB gzipped, 103 MB inflated) where the native one
 * takes about a quarter of it. Only an accelerator: anything it is not sure of (a second gzip
 * member, bytes after the member, corrupt data, output past core's `maxDecompressedBytes`, no
 * `DecompressionStream`) gives `undefined`, and the caller hands the gzip bytes to core as before,
 * whose reader then reports it with its own typed errors and limits.
 */

import { DEFAULT_LIMITS, ErrorCodes, ProfkitError } from '@profkit/core';
import { inflateBufferSize } from './protocol.js';

const GZIP_MAGIC = [0x1f, 0x8b] as const;
/** The smallest gzip member: a 10-byte header, an empty deflate block, the 8-byte trailer. */
const MIN_GZIP_BYTES = 20;

/**
 * Bytes of a buffer being filled: doubled as it fills, but never past `maxBytes` (the caller's
 * limit: doubling a buffer near it would allocate up to twice the limit), nor past `expectedBytes`
 * (the size the input announces, 0 if none) while the bytes fit it: a buffer first sized below an
 * honest claim then ends at exactly that size, after one copy. The exact view is returned at the end.
 */
function appended(into: Uint8Array, used: number, chunk: Uint8Array, maxBytes: number, expectedBytes: number): Uint8Array {
  if (used + chunk.length <= into.length) {
    into.set(chunk, used);
    return into;
  }
  const doubled = Math.min(into.length * 2, maxBytes);
  const grown = expectedBytes >= used + chunk.length && expectedBytes < doubled ? expectedBytes : doubled;
  const larger = new Uint8Array(Math.max(used + chunk.length, grown));
  larger.set(into.subarray(0, used));
  larger.set(chunk, used);
  return larger;
}

/**
 * What sees the bytes of a buffer being filled as they arrive: the buffer so far after each chunk
 * (one buffer that grows, each call's bytes beginning with the previous call's), as
 * `ProfileDecoder.index` takes them.
 */
export type ArrivingBytes = (soFar: Uint8Array) => void;

/**
 * Reads a stream of bytes into one buffer of `sizeHint` bytes, grown as it fills (towards
 * `expectedBytes`, the size announced, when larger); undefined past `maxBytes`.
 */
async function collected(stream: ReadableStream<Uint8Array>, sizeHint: number, maxBytes: number, onBytes?: ArrivingBytes, expectedBytes = 0): Promise<Uint8Array | undefined> {
  // Allocated at the first chunk: a stream that errors at once (not gzip) costs no buffer of the hint's size.
  let out: Uint8Array | undefined;
  let used = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (used + value.length > maxBytes) {
      // Not awaited: a branch of a tee is cancelled only when the other one is too (the raw branch
      // waited here for the inflate to read the whole body).
      reader.cancel().catch(() => {});
      return undefined;
    }
    out = appended(out ?? new Uint8Array(Math.min(sizeHint, maxBytes, 2 ** 31)), used, value, maxBytes, expectedBytes);
    used += value.length;
    onBytes?.(out.subarray(0, used));
  }
  return out ? out.subarray(0, used) : new Uint8Array(0);
}

/**
 * A small worker of its own that inflates (`DecompressionStream` inflates on the thread that reads
 * it): the analysis worker meanwhile runs pass 1 of the pprof decode on the bytes inflated so far,
 * where it would otherwise wait for the whole input (on the 1M-sample profile, the inflate and
 * pass 1 each take about half a second).
 */
const INFLATE_WORKER_SOURCE = "onmessage = (e) => { const out = e.data.pipeThrough(new DecompressionStream('gzip')); postMessage(out, [out]); };";

/**
 * `gzip` inflated by `DecompressionStream` in a worker of its own, where this platform can start
 * one and hand it streams (Chromium, Firefox: a worker may start workers); on this thread otherwise
 * (Node's tests, a browser without either). `done` ends the helper worker.
 */
async function inflatingStream(gzip: ReadableStream<Uint8Array>): Promise<{ stream: ReadableStream<Uint8Array>; done(): void }> {
  const here = () => ({ stream: gzip.pipeThrough(new DecompressionStream('gzip') as unknown as ReadableWritablePair<Uint8Array, Uint8Array>), done() {} });
  if (typeof Worker !== 'function' || typeof Blob !== 'function' || typeof URL.createObjectURL !== 'function') return here();
  const url = URL.createObjectURL(new Blob([INFLATE_WORKER_SOURCE], { type: 'text/javascript' }));
  let helper: Worker;
  try {
    helper = new Worker(url);
  } catch {
    URL.revokeObjectURL(url);
    return here();
  }
  const done = () => {
    helper.terminate();
    URL.revokeObjectURL(url);
  };
  try {
    // Throws (and leaves `gzip` as it was) where streams cannot be transferred.
    helper.postMessage(gzip, [gzip as unknown as Transferable]);
  } catch {
    done();
    return here();
  }
  try {
    const stream = await new Promise<ReadableStream<Uint8Array>>((resolve, reject) => {
      helper.onmessage = (e: MessageEvent<ReadableStream<Uint8Array>>) => resolve(e.data);
      helper.onerror = (e: ErrorEvent) => reject(new Error(e.message));
    });
    return { stream, done };
  } catch (e) {
    done();
    throw e;
  }
}

/**
 * A gzip stream inflated by the platform, or undefined on any error (core's reader then decides).
 * `signal` stops it (the download of the rest too); `onBytes` sees the inflated bytes as they arrive.
 */
async function inflated(gzip: ReadableStream<Uint8Array>, sizeHint: number, maxBytes: number, signal?: AbortSignal, onBytes?: ArrivingBytes, expectedBytes = 0): Promise<Uint8Array | undefined> {
  // Chromium's and Firefox's DecompressionStream reject bytes after the first member (another
  // member, or trailing garbage): those reach core's reader, which reads every member as Go does.
  let inflating: { stream: ReadableStream<Uint8Array>; done(): void } | undefined;
  try {
    // The signal acts here, on this side of the helper worker: the abort errors what it inflates.
    inflating = await inflatingStream(signal ? gzip.pipeThrough(new TransformStream<Uint8Array, Uint8Array>(), { signal }) : gzip);
    return await collected(inflating.stream, sizeHint, maxBytes, onBytes, expectedBytes);
  } catch {
    return undefined;
  } finally {
    inflating?.done();
  }
}

/**
 * The inflated bytes of `bytes` when it is one gzip member that the platform's
 * `DecompressionStream` inflates to at most `maxBytes` (core's `maxDecompressedBytes` by default);
 * `undefined` otherwise (not gzip, or anything core's own reader should decide).
 */
export async function nativeGunzip(bytes: Uint8Array, maxBytes: number = DEFAULT_LIMITS.maxDecompressedBytes, onBytes?: ArrivingBytes): Promise<Uint8Array | undefined> {
  if (typeof DecompressionStream !== 'function' || bytes.length < MIN_GZIP_BYTES || bytes[0] !== GZIP_MAGIC[0] || bytes[1] !== GZIP_MAGIC[1]) return undefined;
  // The trailer's ISIZE (the size mod 2^32, which zlib checks at the end) sizes the output
  // buffer, as far as the served path trusts it (4x the file: the file's own claim, which a
  // crafted file makes 1032x); past that, or 0, or past the limit, it only costs a buffer grown as it fills.
  const n = bytes.length;
  const announced = (bytes[n - 4]! | (bytes[n - 3]! << 8) | (bytes[n - 2]! << 16) | (bytes[n - 1]! << 24)) >>> 0;
  return inflated(piecesOf(bytes), inflateBufferSize(announced, n), maxBytes, undefined, onBytes, announced);
}

/**
 * `bytes` as a stream of 64 KiB copies: small pieces as a download's (the inflate checks
 * `maxBytes` after each one's output), copied one at a time because the stream crosses to the
 * inflate's helper worker, and a view crossing a thread takes its whole buffer along (structured
 * clone): 64 KiB views of the 78 MB 1M-sample profile copied 93 GB, and its first paint took
 * minutes. (A Blob's stream would copy the whole input first.)
 */
function piecesOf(bytes: Uint8Array): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.length) controller.close();
      else controller.enqueue(bytes.slice(at, (at += 1 << 16)));
    },
  });
}

/**
 * The bytes of a profile arriving as a stream (the served file's body, `size` bytes as its
 * Content-Length says, 0 if unknown): inflated while they arrive when they are one gzip member
 * the platform inflates to at most `limits.maxDecompressedBytes`, else as they are (for core's
 * reader). The download and the inflate overlap (the 78 MB of the 1M-sample profile took 0.7 s to
 * fetch and 1.5 s to inflate, one after the other, on a loaded machine). More than
 * `limits.maxInputBytes` arriving is core's `maxInputBytes` error. `inflatedSize`: the size the
 * server announces (a hint for the buffer, 0 if none).
 */
export async function streamedProfileBytes(name: string, stream: ReadableStream<Uint8Array>, size: number, limits = DEFAULT_LIMITS, onInflated?: ArrivingBytes, inflatedSize = 0): Promise<Uint8Array> {
  if (typeof DecompressionStream !== 'function') return rawBytes(name, stream, size, limits.maxInputBytes);
  const [forRaw, forInflate] = stream.tee();
  // Both branches read at once; the raw bytes are kept until the inflate is known to have worked.
  // The raw branch failing (maxInputBytes, the download) stops the inflate too, which would
  // otherwise go on downloading and inflating the rest of the body for nothing.
  const stopInflate = new AbortController();
  // The announced inflated size (the trailer's ISIZE), bounded by the download's size: the
  // file's own claim, so a forged one must not allocate more than no claim would.
  const inflating = inflated(forInflate, inflateBufferSize(inflatedSize, size), limits.maxDecompressedBytes, stopInflate.signal, onInflated, inflatedSize);
  let raw: Uint8Array;
  try {
    raw = await rawBytes(name, forRaw, size, limits.maxInputBytes);
  } catch (e) {
    stopInflate.abort();
    throw e;
  }
  return (await inflating) ?? raw;
}

/**
 * The profile `profkit web` inflated (`?inflated=1`), read into one buffer of `sizeHint` bytes (its
 * announced size, already bounded as `streamedProfileBytes` bounds the trailer's claim) grown as it
 * fills; undefined when the download fails (the server aborts it on a gzip error or its limit) or
 * passes `limits.maxDecompressedBytes`: the caller then reads the original bytes.
 */
export async function serverInflatedBytes(stream: ReadableStream<Uint8Array>, sizeHint: number, limits = DEFAULT_LIMITS, onBytes?: ArrivingBytes): Promise<Uint8Array | undefined> {
  try {
    return await collected(stream, sizeHint > 0 ? sizeHint : 1 << 20, limits.maxDecompressedBytes, onBytes);
  } catch {
    return undefined;
  }
}

async function rawBytes(name: string, stream: ReadableStream<Uint8Array>, size: number, maxInputBytes: number): Promise<Uint8Array> {
  const bytes = await collected(stream, size, maxInputBytes);
  if (!bytes) throw inputSizeError(name, `more than ${maxInputBytes} bytes`, maxInputBytes);
  return bytes;
}

/** Core's input limit error for a profile the page is given (`size`: how big it is). */
export function inputSizeError(name: string, size: string, maxInputBytes: number): ProfkitError {
  return new ProfkitError(ErrorCodes.LIMIT, `${name}: input is ${size}, above the limit of ${maxInputBytes} (maxInputBytes)`, { file: name, option: 'maxInputBytes' });
}
