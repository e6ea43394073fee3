/**
 * gzip outside Node (browsers, workers, Deno without node:zlib): pako, a JavaScript port of
 * zlib, synchronous like node:zlib's `*Sync` functions, so the readers and writers run unchanged.
 * Same functions, limits and errors as `gzip-node.ts`; the package's `imports` map (`#gzip`)
 * picks this file wherever the `node` condition does not apply. `maxDecompressedBytes` is
 * enforced while inflating (output is counted chunk by chunk), so a gzip bomb stops at the limit.
 */

import { Deflate, Inflate } from 'pako';
import { isProfkitError } from './errors.js';
import { MAX_GZIP_BUFFER_BYTES, concatBytes, decompressError, decompressedLimitError, gzipAnnouncedSize, gzipBound, firstInflateChunkSize, gzipOutputLimitError, maxDecompressed, type ArrivingDeflateAhead, type DeflateAhead, type Limits } from './gzip-shared.js';

/** Which implementation this is (for tests and messages). */
export const GZIP_IMPLEMENTATION: 'node:zlib' | 'pako' = 'pako';

const GZIP_MAGIC_0 = 0x1f;
const GZIP_MAGIC_1 = 0x8b;

/**
 * Inflates gzip input pushed piece by piece, member after member (as Go's reader and node:zlib
 * do), handing each output chunk to `onData`. pako ends at the end of a member; the bytes after
 * it start the next member when they start with the gzip magic, and are ignored otherwise.
 */
class MultiMemberInflater {
  private inflate: Inflate | undefined;
  /** True after a member ended exactly at the end of a push: the next push may start a new one. */
  private betweenMembers = false;
  private done = false;

  constructor(
    private readonly onData: (chunk: Uint8Array) => void,
    private readonly chunkSize = 1 << 16,
  ) {}

  /** Pushes input; throws the inflater's error message (as an `Error`) on corrupt data. */
  push(data: Uint8Array, last: boolean): void {
    let input = data;
    while (!this.done && (input.length > 0 || last)) {
      if (!this.inflate || this.betweenMembers) {
        if (this.inflate && (input.length < 2 || input[0] !== GZIP_MAGIC_0 || input[1] !== GZIP_MAGIC_1)) {
          // After a complete member: anything that is not another member is ignored.
          this.done = input.length > 0 || last;
          return;
        }
        if (input.length === 0) break;
        const inflate: Inflate = new Inflate({ chunkSize: this.chunkSize });
        inflate.onData = (chunk) => this.onData(chunk);
        inflate.onEnd = () => undefined;
        this.inflate = inflate;
        this.betweenMembers = false;
      }
      const inflate = this.inflate;
      inflate.push(input, last);
      if (inflate.err !== 0) throw new Error(inflate.msg || `zlib error ${inflate.err}`);
      if (!inflate.ended) {
        if (last) throw new Error('unexpected end of file');
        return;
      }
      // A member ended; pako leaves the bytes it did not consume in avail_in.
      const left = (inflate as unknown as { strm: { avail_in: number } }).strm.avail_in;
      input = left > 0 ? input.subarray(input.length - left) : new Uint8Array(0);
      this.betweenMembers = true;
      if (input.length === 0 && last) return;
    }
  }
}

/**
 * Inflates a whole gzip buffer (all members), refusing output above `maxDecompressedBytes`: the
 * output is counted while it is produced, so a gzip bomb costs a bounded amount of memory.
 */
export function gunzipBounded(bytes: Uint8Array, limits: Limits = {}, file?: string): Uint8Array {
  const max = maxDecompressed(limits);
  const announced = gzipAnnouncedSize(bytes);
  const parts: Uint8Array[] = [];
  let total = 0;
  const inflater = new MultiMemberInflater(
    (chunk) => {
      total += chunk.length;
      if (total > max) throw decompressedLimitError(max, file);
      parts.push(chunk);
    },
    // The trailer's claim sizes the chunks only as far as firstInflateChunkSize trusts it: a forged
    // ISIZE (up to 1032 times the input) would otherwise reserve gigabytes up front.
    announced !== undefined && announced < max ? Math.max(64, firstInflateChunkSize(announced + 1, bytes.length)) : 1 << 16,
  );
  try {
    inflater.push(bytes, true);
  } catch (e) {
    if (isProfkitError(e)) throw e;
    throw decompressError('gzip data', (e as Error).message, file, e);
  }
  return concatBytes(parts, total);
}

/**
 * Inflates at most `max` bytes from the start of a gzip stream, tolerating truncation and corrupt
 * tails: used for format detection. Input goes in small pieces and inflation stops as soon as
 * `max` bytes came out, so the work is bounded whatever the compression ratio.
 */
export function gunzipHead(bytes: Uint8Array, max = 4096): Uint8Array {
  const parts: Uint8Array[] = [];
  let total = 0;
  const full = new Error('head complete');
  const inflater = new MultiMemberInflater((chunk) => {
    parts.push(chunk);
    total += chunk.length;
    if (total >= max) throw full;
  }, Math.max(1024, Math.min(max, 1 << 16)));
  try {
    for (let at = 0; at < bytes.length; at += 1024) inflater.push(bytes.subarray(at, Math.min(bytes.length, at + 1024)), false);
  } catch {
    // The head is complete, or the data is truncated or corrupt: what came out is the head.
  }
  return concatBytes(parts, Math.min(total, max));
}

/** `gunzipHead`, asynchronous like the Node implementation's. */
export function inflateHead(raw: Uint8Array, max = 4096): Promise<Uint8Array> {
  return Promise.resolve(gunzipHead(raw, max));
}

/**
 * Inflates a stream of gzip chunks. An error of the source (a limit) comes out as it is; corrupt
 * data is `PROFKIT_E_DECOMPRESS`. The caller bounds the output.
 */
export async function* gunzipChunks(raw: AsyncIterable<Uint8Array>, file?: string): AsyncGenerator<Uint8Array> {
  let out: Uint8Array[] = [];
  const inflater = new MultiMemberInflater((chunk) => out.push(chunk));
  const push = (chunk: Uint8Array, last: boolean) => {
    try {
      inflater.push(chunk, last);
    } catch (e) {
      throw decompressError(file ?? 'gzip data', (e as Error).message, file, e);
    }
  };
  for await (const chunk of raw) {
    // In slices: inflating a whole chunk before yielding would hold up to 1032 times its size
    // (a gzip bomb in one large chunk) before the caller's limit sees a byte of it.
    for (let at = 0; at < chunk.length; at += INFLATE_SLICE_BYTES) {
      push(chunk.subarray(at, Math.min(chunk.length, at + INFLATE_SLICE_BYTES)), false);
      const ready = out;
      out = [];
      yield* ready;
    }
  }
  push(new Uint8Array(0), true);
  yield* out;
}

/** Compressed bytes inflated at a time by `gunzipChunks` (at most ~16 MiB of output). */
const INFLATE_SLICE_BYTES = 16 * 1024;

function deflater(level: number, chunkSize: number, onData: (chunk: Uint8Array) => void): Deflate {
  // memLevel 9 as on Node: the same standard deflate stream, a larger hash table.
  const d = new Deflate({ level, memLevel: 9, gzip: true, chunkSize });
  d.onData = onData;
  d.onEnd = () => undefined;
  return d;
}

function pushOrThrow(d: Deflate, data: Uint8Array, last: boolean): void {
  if (!d.push(data, last)) throw decompressError('gzip output', d.msg || `zlib error ${d.err}`);
}

/** gzips a buffer into one output buffer (sized to the deflate bound: no concatenation). */
export function gzipBytes(raw: Uint8Array, level: number): Uint8Array {
  const parts: Uint8Array[] = [];
  pushOrThrow(deflater(level, gzipBound(raw.length), (c) => parts.push(c)), raw, true);
  return concatBytes(parts);
}

/** pako's output piece at most (it allocates one of its `chunkSize`): larger outputs are joined at the end. */
const MAX_DEFLATE_PIECE_BYTES = 64 << 20;

/**
 * gzips chunks of known total size, as `gzipBytes` would gzip their concatenation. An output past
 * one buffer (`maxBytes`, at most `MAX_GZIP_BUFFER_BYTES`) is a `PROFKIT_E_LIMIT` error.
 */
export async function gzipChunks(total: number, chunks: Iterable<Uint8Array>, level: number, maxBytes = MAX_GZIP_BUFFER_BYTES): Promise<Uint8Array> {
  const max = Math.min(maxBytes, MAX_GZIP_BUFFER_BYTES);
  const parts: Uint8Array[] = [];
  let size = 0;
  const d = deflater(level, Math.min(gzipBound(total), MAX_DEFLATE_PIECE_BYTES), (c) => {
    size += c.length;
    if (size > max) throw gzipOutputLimitError(total, max);
    parts.push(c);
  });
  for (const c of chunks) pushOrThrow(d, c, false);
  pushOrThrow(d, new Uint8Array(0), true);
  return concatBytes(parts);
}

/**
 * No deflating ahead here: pako deflates on the calling thread, so starting early would only
 * delay the caller (the Node version deflates on the thread pool). Always `undefined`.
 */
export function startDeflateAhead(_expected: Uint8Array, _level: number): DeflateAhead | undefined {
  return undefined;
}

/** No deflating ahead here either (see `startDeflateAhead`). Always `undefined`. */
export function startDeflateAheadOfArriving(_buffer: Uint8Array, _level: number): ArrivingDeflateAhead | undefined {
  return undefined;
}

/** Nothing to prepare (see `startDeflateAhead`). */
export function prepareDeflateAhead(): () => void {
  return () => undefined;
}

/** gzips a stream of chunks into a stream of compressed pieces (neither is ever whole in memory). */
// `total` (the exact input size, when known) and `ahead` only matter to the Node version's parallel blocks.
export async function* gzipStream(chunks: Iterable<Uint8Array>, level: number, _total?: number, _ahead?: DeflateAhead): AsyncGenerator<Uint8Array> {
  let out: Uint8Array[] = [];
  const d = deflater(level, 1 << 18, (c) => out.push(c));
  for (const c of chunks) {
    pushOrThrow(d, c, false);
    const ready = out;
    out = [];
    yield* ready;
  }
  pushOrThrow(d, new Uint8Array(0), true);
  yield* out;
}
