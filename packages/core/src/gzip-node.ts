/**
 * gzip on Node: node:zlib (native, inflates and deflates on libuv's thread pool). The browser
 * build uses `gzip-browser.ts` instead, with the same functions, limits and errors; the package's
 * `imports` map (`#gzip`) picks one by the `node` condition. Nothing else in the package imports
 * node:zlib.
 *
 * `gunzipSync`/`gzipSync` collect their output in `chunkSize` pieces (16 KiB by default) and
 * `Buffer.concat` them at the end, so for a moment the output exists twice. When the final size is
 * known in advance (gunzip: the gzip trailer's ISIZE; gzip: a bound of the compressed size), one
 * chunk that large holds the whole output and no concatenation (no second copy) happens. The chunk
 * is allocated uninitialized, so the pages it never touches do not count in the resident set.
 */

import { Readable, pipeline, type TransformOptions } from 'node:stream';
import type { Worker as WorkerThread } from 'node:worker_threads';
import { constants as zc, crc32, createGunzip, deflateRaw, gunzipSync, gzipSync, type ZlibOptions } from 'node:zlib';
import { ErrorCodes, ProfkitError, isProfkitError } from './errors.js';
import { MAX_GZIP_BUFFER_BYTES, concatBytes, decompressError, decompressedLimitError, gzipAnnouncedSize, gzipBound, firstInflateChunkSize, gzipOutputLimitError, maxDecompressed, type ArrivingDeflateAhead, type DeflateAhead, type Limits } from './gzip-shared.js';

/** Which implementation this is (for tests and messages). */
export const GZIP_IMPLEMENTATION: 'node:zlib' | 'pako' = 'node:zlib';

function bytesOf(b: Buffer): Uint8Array {
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/**
 * Inflates a whole gzip buffer (all members, as Go's reader does), refusing output above
 * `maxDecompressedBytes` so that a gzip bomb costs a bounded amount of memory. When the trailer
 * announces the size, one chunk just above it holds the whole output and no copy is made (a wrong
 * announcement only costs more chunks; a claim past `firstInflateChunkSize`'s bound, the larger
 * of 64 MiB and 4 times the input, is not trusted for the first chunk).
 */
export function gunzipBounded(bytes: Uint8Array, limits: Limits = {}, file?: string): Uint8Array {
  const max = maxDecompressed(limits);
  const announced = gzipAnnouncedSize(bytes);
  // The trailer's claim sizes the first chunk only as far as firstInflateChunkSize trusts it (a forged
  // ISIZE would reserve up to 1032 times the input); zlib adds chunks as the output grows.
  const chunkSize = announced !== undefined && announced < max ? firstInflateChunkSize(announced + 1, bytes.length) : undefined;
  try {
    return bytesOf(gunzipSync(bytes, { maxOutputLength: max, ...(chunkSize !== undefined ? { chunkSize: Math.max(64, chunkSize) } : {}) }));
  } catch (e) {
    const err = e as { code?: string; message?: string };
    if (err.code === 'ERR_BUFFER_TOO_LARGE' || /Cannot create a Buffer larger|maxOutputLength/.test(String(err.message))) throw decompressedLimitError(max, file);
    throw decompressError('gzip data', String(err.message), file, e);
  }
}

/**
 * Inflates at most `max` bytes from the start of a gzip stream, tolerating truncation: used for
 * format detection, which only needs the head of a file. Synchronous (sniffers are), and bounded:
 * deflate expands at most ~1032:1, so inflating a prefix of `take` input bytes can never need
 * more than `take * 1100` output bytes; the prefix doubles until the head is long enough.
 */
export function gunzipHead(bytes: Uint8Array, max = 4096): Uint8Array {
  for (let take = Math.min(bytes.length, 64); ; take = Math.min(bytes.length, take * 2)) {
    let out: Buffer;
    try {
      out = gunzipSync(bytes.subarray(0, take), { finishFlush: zc.Z_SYNC_FLUSH, maxOutputLength: take * 1100 + 4096 });
    } catch {
      // A prefix may end inside the header; only a failure on the whole input is final.
      if (take === bytes.length) return new Uint8Array(0);
      continue;
    }
    if (out.byteLength >= max || take === bytes.length) return new Uint8Array(out.buffer, out.byteOffset, Math.min(out.byteLength, max));
  }
}

/**
 * Inflates at most `max` bytes from the start of gzip data, tolerating truncation and corrupt
 * tails (detection only needs the head). Output is bounded whatever the compression ratio: the
 * stream is stopped as soon as `max` bytes came out.
 */
export function inflateHead(raw: Uint8Array, max = 4096): Promise<Uint8Array> {
  return new Promise((resolve) => {
    const gunzip = createGunzip({ chunkSize: Math.max(1024, Math.min(max, 64 * 1024)) });
    const parts: Uint8Array[] = [];
    let total = 0;
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      gunzip.destroy();
      resolve(concatBytes(parts, Math.min(total, max)));
    };
    gunzip.on('data', (chunk: Buffer) => {
      if (finished) return;
      parts.push(bytesOf(chunk));
      total += chunk.length;
      if (total >= max) finish();
    });
    gunzip.on('end', finish);
    gunzip.on('error', finish);
    gunzip.on('close', finish);
    gunzip.end(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength));
  });
}

/**
 * Inflates a stream of gzip chunks (256 KiB output pieces: zlib's default is 16 KiB; each piece is
 * a thread-pool round trip and a main-thread callback, and a 14 MB profile took 500 of them at
 * 64 KiB: measured 20–30 % less CPU per pass at 256 KiB). An error of the source (a limit) comes
 * out as it is; corrupt data is `PROFKIT_E_DECOMPRESS`. The caller bounds the output.
 *
 * The inflating runs up to `INFLATE_AHEAD_BYTES` ahead of the consumer, on the thread pool while
 * the consumer (a decoder) works on the main thread: with the stream's default 16 KiB buffer it
 * stopped after each piece until the consumer asked for the next, so the two took turns.
 */
export async function* gunzipChunks(raw: AsyncIterable<Uint8Array>, file?: string): AsyncGenerator<Uint8Array> {
  // zlib's streams hand their options on to Transform (its typings only list zlib's own).
  const gunzip = createGunzip({ chunkSize: 1 << 18, readableHighWaterMark: INFLATE_AHEAD_BYTES } as ZlibOptions & TransformOptions);
  // pipeline, not pipe: it hands an error of the source on to the gunzip stream.
  pipeline(Readable.from(raw, { objectMode: false }), gunzip, () => undefined);
  try {
    for await (const chunk of gunzip as AsyncIterable<Buffer>) yield bytesOf(chunk);
  } catch (e) {
    if (isProfkitError(e)) throw e;
    throw decompressError(file ?? 'gzip data', (e as Error).message, file, e);
  }
}

/**
 * Inflated bytes `gunzipChunks` may hold ahead of its consumer (so at most this much beyond what a
 * caller's limit has counted). 4 MiB: 16 pieces, a few ms of decoding each.
 */
export const INFLATE_AHEAD_BYTES = 4 << 20;

/**
 * gzips a buffer into one output buffer (no concatenation copy): the buffer is sized to zlib's
 * bound of the compressed size, and only the bytes written become resident.
 *
 * memLevel 9 (zlib's maximum; its default is 8): a larger hash table, measured 12–15 % less CPU
 * at level 6 on profile.proto data and slightly smaller output. The stream stays standard
 * deflate; the window (and so what a decompressor needs) is unchanged.
 */
export function gzipBytes(raw: Uint8Array, level: number): Uint8Array {
  return bytesOf(gzipSync(raw, { level, memLevel: 9, chunkSize: gzipBound(raw.length) }));
}

/**
 * Input bytes per independently deflated block of `gzipStream`/`gzipChunks` when the total is not
 * announced, and the largest block otherwise (pigz's scheme, with pigz's 128 KiB raised: each
 * block is one thread-pool job, and a larger block means fewer flush markers and round trips;
 * measured on profile.proto data, 512 KiB–2 MiB deflate alike). 512 KiB rather than 1 MiB: the
 * first block starts deflating after half as much encoding, the last ones are waited for half
 * as long, and 4 blocks in flight fill the gaps 2 left (200,000-sample encoding, 19 MB: same CPU,
 * +0.01 % output).
 */
export const DEFLATE_BLOCK_BYTES = 512 << 10;

/**
 * The smallest block `deflateBlockBytes` picks, so an encoding up to this size is one zlib stream.
 * Each join costs ~60 bytes and a zlib set-up: in 64 KiB blocks a 200 KB encoding was +0.5 %
 * larger and deflated slower than one stream (4.5 against 3.7 ms at best); in 128 KiB blocks
 * +0.2 % and faster (2.8 ms), 600 KB +0.3 % (10.0 against 11.3 ms).
 */
export const MIN_DEFLATE_BLOCK_BYTES = 128 << 10;

/**
 * Blocks an announced total is cut into at least (down to `MIN_DEFLATE_BLOCK_BYTES`). With 1 MiB
 * blocks a 2 MB encoding (the Rprof benchmark's) was two blocks: the first waited for a whole
 * MiB of encoding, the second started when the encoding ended and was then waited for alone on
 * one core. Four or more blocks keep both cores busy, and what is left to wait for after the
 * encoding is deflated on both. Each block costs ~60 bytes of Huffman tables at its join and its
 * own zlib stream set-up: 8 blocks of 256 KiB are +0.10 % output on that 2 MB, 15 of 128 KiB +0.31 %.
 */
const MIN_BLOCKS_PER_STREAM = 4;

/**
 * The block size `gzipStream` cuts an input of `total` bytes into: the largest power of two
 * between `MIN_DEFLATE_BLOCK_BYTES` and `DEFLATE_BLOCK_BYTES` that makes at least
 * `MIN_BLOCKS_PER_STREAM` blocks (`DEFLATE_BLOCK_BYTES` when the total is unknown). It depends on
 * the total alone, so the output does too (never on timing or chunking).
 */
export function deflateBlockBytes(total: number | undefined): number {
  if (total === undefined) return DEFLATE_BLOCK_BYTES;
  let size = MIN_DEFLATE_BLOCK_BYTES;
  while (size < DEFLATE_BLOCK_BYTES && size * 2 * MIN_BLOCKS_PER_STREAM <= total) size *= 2;
  return size;
}

/** deflate's window: each block is primed with the 32 KiB of input before it. */
const DEFLATE_WINDOW_BYTES = 32 * 1024;

/**
 * Blocks deflating at once (at most 2 MiB of input, each with its own zlib stream of ~0.4 MB):
 * libuv's default thread pool size, so a block is always deflating while the next is encoded,
 * even on one core. Only 2 made an encoder wait for each 1 MiB chunk's small blocks before
 * encoding the next chunk, so the two took turns; more hold more zlib streams and outputs at once
 * (all 8 blocks of the Rprof benchmark's 2 MB encoding: peak RSS 76 → 77 MiB) with only two cores
 * to run them.
 */
const DEFLATE_BLOCKS_IN_FLIGHT = 4;

const deflateRawAsync = (input: Uint8Array, options: ZlibOptions): Promise<Buffer> =>
  new Promise((resolve, reject) => deflateRaw(input, options, (e, out) => (e ? reject(e) : resolve(out))));

/** The 10-byte gzip header zlib writes (no name, mtime 0, XFL as zlib sets it for `level`, OS Unix). */
function gzipHeader(level: number): Uint8Array {
  return Uint8Array.of(0x1f, 0x8b, 8, 0, 0, 0, 0, 0, level === 9 ? 2 : level < 2 ? 4 : 0, 3);
}

/**
 * The buffers that blocks spanning several chunks are copied into, reused once their deflate job
 * has finished: a 19 MB encoding otherwise allocates a fresh block buffer per block, whose first touch
 * (page faults) and external-memory pressure (V8 collects garbage when it grows) the main thread
 * pays for while the deflating waits on it.
 */
class BlockBuffers {
  private readonly spare: Uint8Array[] = [];
  private readonly owned = new WeakSet<ArrayBufferLike>();
  constructor(private readonly size: number) {}

  take(): Uint8Array {
    const recycled = this.spare.pop();
    if (recycled) return recycled;
    const fresh = new Uint8Array(this.size);
    this.owned.add(fresh.buffer);
    return fresh;
  }

  /** Hands `block` back when it is one of ours; its bytes may be overwritten from now on. */
  release(block: Uint8Array): void {
    if (this.owned.has(block.buffer)) this.spare.push(new Uint8Array(block.buffer, 0, this.size));
  }
}

/**
 * Cuts a stream of chunks into blocks of exactly `size` bytes (the last may be shorter), so that
 * the output depends on the bytes only, never on how they were chunked. A block within one chunk
 * is a view of it; one spanning chunks is copied into a buffer of `buffers`.
 */
function* blocksOf(chunks: Iterable<Uint8Array>, size: number, buffers: BlockBuffers): Generator<Uint8Array> {
  let parts: Uint8Array[] = [];
  let bytes = 0;
  const joined = (): Uint8Array => {
    if (parts.length === 1) return parts[0]!;
    const block = buffers.take();
    let at = 0;
    for (const part of parts) {
      block.set(part, at);
      at += part.length;
    }
    return block.subarray(0, bytes);
  };
  for (const chunk of chunks) {
    for (let c = chunk; c.length > 0; ) {
      const take = Math.min(c.length, size - bytes);
      parts.push(c.subarray(0, take));
      bytes += take;
      c = c.subarray(take);
      if (bytes === size) {
        yield joined();
        parts = [];
        bytes = 0;
      }
    }
  }
  if (bytes > 0) yield joined();
}

/** The options `gzipStream` deflates a block with (and `DeflateAheadWorker` too: the same bytes out). */
function blockOptions(level: number, length: number, last: boolean, dictionary: Uint8Array | undefined): ZlibOptions {
  // chunkSize: the block's whole output in one piece, so one thread-pool round trip per block
  // (zlib's default 16 KiB pieces cost a main-thread callback each: 64 per MiB). The dictionary
  // is copied when the job is created; the input is read until the job ends.
  const options: ZlibOptions = { level, memLevel: 9, chunkSize: gzipBound(length), finishFlush: last ? zc.Z_FINISH : zc.Z_SYNC_FLUSH };
  if (dictionary) options.dictionary = dictionary.subarray(Math.max(0, dictionary.length - DEFLATE_WINDOW_BYTES));
  return options;
}

/** The entries of `DeflateAheadWorker.progress`, shared with its worker thread (see `DEFLATE_AHEAD_WORKER`). */
const LENGTH = 0; // input bytes that exist so far (the total once ENDED is set)
const BLOCK_BYTES = 1; // deflateBlockBytes(total), once it is known (0 before)
const ENDED = 2; // 1 once the input has ended
const GENERATION = 3; // bumped at every change of the others, which the worker sleeps on

/**
 * The worker thread of `startDeflateAhead` (CommonJS, evaluated as a string: it needs no file of
 * its own beside a bundle). It may start before its bytes exist (`prepareDeflateAhead`), and the
 * bytes may still be arriving (`startDeflateAheadOfArriving`): the job comes in one message, then
 * it deflates the blocks in order with `blockOptions`' settings, each block once, as soon as it
 * can: when the block size is known (`progress[BLOCK_BYTES]`, set by the main thread) and the
 * block is whole with bytes after it (so not the last, which ends the stream), or once the input
 * has ended (`progress[ENDED]`, with its length). It sleeps on `progress[GENERATION]`, which the
 * main thread bumps at each change. A block is claimed in the shared `claims` (0 free, 1 the
 * worker's, 2 the main thread's) before it is deflated, and the worker stops when the last entry
 * of `claims` is set (cancelled). Each output is posted as a fresh buffer of its own (transferred,
 * not copied again); with its one message listener gone, the thread ends.
 */
const DEFLATE_AHEAD_WORKER = `
const { parentPort } = require('node:worker_threads');
const { constants, deflateRawSync } = require('node:zlib');
parentPort.once('message', ({ bytes, claims, progress, windowBytes, level, chunkSize }) => {
  const cancelled = claims.length - 1;
  for (let i = 0; i < cancelled; i++) {
    let from, to, last;
    for (;;) {
      const generation = Atomics.load(progress, ${GENERATION});
      if (Atomics.load(claims, cancelled) !== 0) return;
      // ENDED before LENGTH: the main thread stores the final length before it sets ENDED.
      const ended = Atomics.load(progress, ${ENDED}) !== 0;
      const length = Atomics.load(progress, ${LENGTH});
      const blockBytes = Atomics.load(progress, ${BLOCK_BYTES});
      from = i * blockBytes;
      if (ended && from >= length) return;
      if (blockBytes > 0 && (ended || length > from + blockBytes)) {
        to = Math.min(from + blockBytes, length);
        last = ended && to === length;
        break;
      }
      Atomics.wait(progress, ${GENERATION}, generation);
    }
    if (Atomics.compareExchange(claims, i, 0, 1) !== 0) continue;
    const options = { level, memLevel: 9, chunkSize, finishFlush: last ? constants.Z_FINISH : constants.Z_SYNC_FLUSH };
    if (i > 0) options.dictionary = bytes.subarray(from - windowBytes, from);
    const out = new Uint8Array(deflateRawSync(bytes.subarray(from, to), options));
    parentPort.postMessage({ index: i, out }, [out.buffer]);
  }
});
`;

/** The worker `prepareDeflateAhead` started, until `startDeflateAhead` gives it its bytes. */
let preparedWorker: WorkerThread | undefined;

function deflateAheadWorker(): WorkerThread {
  // Loaded on first use: imported with the module, it cost every command ~2 ms of start-up.
  const { Worker } = process.getBuiltinModule('node:worker_threads') as { Worker: typeof WorkerThread };
  const worker = new Worker(DEFLATE_AHEAD_WORKER, { eval: true });
  // It never keeps the process alive: a convert that failed exits at once.
  worker.unref();
  return worker;
}

/**
 * Starts the worker thread of the next `startDeflateAhead` now, so that its start-up (a Node
 * thread: ~30 ms of CPU, 100 ms and more on a loaded machine) overlaps what the caller waits for
 * first. Returns what stops that worker when no `startDeflateAhead` came to use it (harmless
 * after one did). (The pprof read no longer needs it: it starts `startDeflateAheadOfArriving`
 * while its input still inflates.)
 */
export function prepareDeflateAhead(): () => void {
  try {
    preparedWorker ??= deflateAheadWorker();
  } catch {
    return () => undefined; // no worker threads here: startDeflateAhead will say so too
  }
  const worker = preparedWorker;
  return () => {
    if (preparedWorker !== worker) return;
    preparedWorker = undefined;
    worker.terminate().catch(() => undefined);
  };
}

/** `claims` values: a block nobody deflates yet, or one the main thread deflates (the worker's own is 1). */
const FREE = 0;
const MAIN_THREADS = 2;

/**
 * The deflating of `startDeflateAhead` and `startDeflateAheadOfArriving`: the blocks `gzipStream`
 * would cut the expected bytes into (`deflateBlockBytes(total)`), each deflated with the options
 * `gzipStream` would give it, in order, by one worker thread, from the first block on while the
 * bytes still arrive. A worker, not the thread pool: a caller decoding on the main thread does
 * not turn the event loop, so jobs chained on the pool would stop after the first; and one
 * thread, not the pool's four, leaves the main thread a core of its own. A block `gzipStream`
 * asks for before the worker came to it is claimed and deflated on the pool instead.
 */
class DeflateAheadWorker implements ArrivingDeflateAhead {
  /** The expected byte count, once the bytes have ended (`gzipStream` takes nothing before). */
  total: number | undefined;
  blocksTaken = 0;
  private cancelled = false;
  /** The bytes (on a `SharedArrayBuffer`), `total` of them once ended. */
  private expected: Uint8Array;
  private blockBytes = 0;
  /** Shared with the worker: who deflates each block, then the cancelled flag (see `DEFLATE_AHEAD_WORKER`). */
  private readonly claims: Int32Array;
  /** Shared with the worker: how far the bytes have arrived (`LENGTH`, `BLOCK_BYTES`, `ENDED`, `GENERATION`). */
  private readonly progress: Int32Array;
  private workerEnded = false;
  private readonly worker: WorkerThread;
  /** The worker's outputs, by block, until taken. */
  private readonly delivered = new Map<number, Buffer>();
  /** Blocks taken while the worker deflates them. */
  private readonly waiting = new Map<number, (out: Buffer | Promise<Buffer>) => void>();

  /** `buffer`: where the bytes are or will be written (shared), its length their most. */
  constructor(buffer: Uint8Array, readonly level: number) {
    this.expected = buffer;
    // One claim per block of the smallest size, then the cancelled flag.
    this.claims = new Int32Array(new SharedArrayBuffer(4 * (Math.ceil(buffer.length / MIN_DEFLATE_BLOCK_BYTES) + 1)));
    this.progress = new Int32Array(new SharedArrayBuffer(4 * 4));
    const worker = preparedWorker ?? deflateAheadWorker();
    preparedWorker = undefined;
    this.worker = worker;
    // Shared, not copied: the bytes, the claims and the progress are the same memory in both threads.
    worker.postMessage({ bytes: buffer, claims: this.claims, progress: this.progress, windowBytes: DEFLATE_WINDOW_BYTES, level, chunkSize: gzipBound(DEFLATE_BLOCK_BYTES) });
    worker.on('message', ({ index, out }: { index: number; out: Uint8Array }) => {
      const buffer = Buffer.from(out.buffer, out.byteOffset, out.byteLength);
      const waiter = this.waiting.get(index);
      this.waiting.delete(index);
      if (this.waiting.size === 0) worker.unref();
      if (waiter) waiter(buffer);
      else if (!this.cancelled) this.delivered.set(index, buffer);
    });
    // A worker that failed leaves the blocks it claimed to the pool: nobody waits forever.
    const ended = () => {
      this.workerEnded = true;
      for (const [index, waiter] of this.waiting) waiter(this.deflateOnPool(index));
      this.waiting.clear();
    };
    worker.on('error', ended);
    worker.on('exit', ended);
    // After the listeners: a 'message' listener refs the worker's port again, and a worker kept
    // deflating a write that never comes (a failed convert) would hold the process up to the end.
    worker.unref();
  }

  arrived(length: number): void {
    // Never back: the worker may already have deflated up to the length said before.
    if (this.total !== undefined || length > this.expected.length || length < Atomics.load(this.progress, LENGTH)) return;
    Atomics.store(this.progress, LENGTH, length);
    // From this length on, every total cuts blocks of this size: the worker can start.
    if (this.blockBytes === 0 && deflateBlockBytes(length) === DEFLATE_BLOCK_BYTES) {
      this.blockBytes = DEFLATE_BLOCK_BYTES;
      Atomics.store(this.progress, BLOCK_BYTES, this.blockBytes);
    }
    this.wakeWorker();
  }

  end(total: number): void {
    if (this.total !== undefined) return;
    // Short of what arrived (a caller's bug): a block the worker deflated as followed by more
    // bytes would match the shorter last block byte for byte and end the stream wrongly.
    if (total > this.expected.length || total < Atomics.load(this.progress, LENGTH)) {
      this.cancel();
      return;
    }
    this.total = total;
    this.expected = this.expected.subarray(0, total);
    this.blockBytes = deflateBlockBytes(total);
    Atomics.store(this.progress, LENGTH, total);
    Atomics.store(this.progress, BLOCK_BYTES, this.blockBytes);
    Atomics.store(this.progress, ENDED, 1);
    this.wakeWorker();
  }

  private wakeWorker(): void {
    Atomics.add(this.progress, GENERATION, 1);
    Atomics.notify(this.progress, GENERATION);
  }

  private deflateOnPool(index: number): Promise<Buffer> {
    const expected = this.expected;
    const from = index * this.blockBytes;
    const to = Math.min(from + this.blockBytes, expected.length);
    return deflateRawAsync(expected.subarray(from, to), blockOptions(this.level, to - from, to === expected.length, index > 0 ? expected.subarray(from - this.blockBytes, from) : undefined));
  }

  /** True when `block` is block `index` of the expected bytes, byte for byte (once they have ended). */
  matches(index: number, block: Uint8Array): boolean {
    const expected = this.expected;
    const from = index * this.blockBytes;
    if (this.cancelled || this.total === undefined || from + block.length > expected.length || (block.length === 0 && from >= expected.length)) return false;
    return Buffer.from(block.buffer, block.byteOffset, block.length).equals(Buffer.from(expected.buffer, expected.byteOffset + from, block.length));
  }

  /**
   * Block `index`'s output, handed over once: the worker's (awaited when it is on it), or
   * deflated on the pool now when the worker has not come to it; `undefined` after `cancel`.
   */
  take(index: number): Promise<Buffer> | undefined {
    if (this.cancelled) return undefined;
    this.blocksTaken++;
    if (Atomics.compareExchange(this.claims, index, FREE, MAIN_THREADS) === FREE) return this.deflateOnPool(index);
    const out = this.delivered.get(index);
    this.delivered.delete(index);
    if (out) return Promise.resolve(out);
    if (this.workerEnded) return this.deflateOnPool(index);
    // Awaited: the process must not exit before the worker delivers it (unref'd again on arrival).
    this.worker.ref();
    return new Promise<Buffer>((resolve) => this.waiting.set(index, resolve));
  }

  /** Stops the worker after the block it is on (a block taken while it deflates it still comes). */
  cancel(): void {
    this.cancelled = true;
    this.delivered.clear();
    Atomics.store(this.claims, this.claims.length - 1, 1);
    this.wakeWorker();
  }
}

/**
 * Starts deflating `expected`, bytes a caller is likely to hand to `gzipStream` later at `level`
 * (convert reading a pprof it writes back as pprof: the canonical encoding of a profile Go or
 * profkit wrote is the very bytes read), in a worker thread, while the caller works on the main
 * thread. `gzipStream` given the result (and the same `level` and `total`) takes a block's early
 * output only when the block and the block before it (its dictionary) are the expected bytes: the
 * compressed stream is then the one it would have made itself. Bytes on a `SharedArrayBuffer`
 * are read where they are (others are copied once); they must not change until the
 * `gzipStream` ends or `cancel()` is called.
 */
export function startDeflateAhead(expected: Uint8Array, level: number): DeflateAhead | undefined {
  let shared = expected;
  if (!(expected.buffer instanceof SharedArrayBuffer)) {
    shared = new Uint8Array(new SharedArrayBuffer(expected.length));
    shared.set(expected);
  }
  const ahead = startDeflateAheadOfArriving(shared, level);
  ahead?.end(expected.length);
  return ahead;
}

/**
 * `startDeflateAhead` of bytes that are still arriving (a read that inflates its input): the
 * caller writes them into `buffer` (on a `SharedArrayBuffer`, as long as they can get) from its
 * start, says how many exist after each write (`arrived`) and how many there are in all at the
 * end (`end`; more than `buffer` holds, or fewer than arrived, cancels). The worker deflates a
 * block as soon as it and the block size (which depends on the total: known from
 * `2 * MIN_BLOCKS_PER_STREAM` half-size blocks on) are, so most of the deflating is done while
 * the caller is still reading. Bytes written must not change afterwards; `gzipStream` takes
 * nothing before `end`.
 */
export function startDeflateAheadOfArriving(buffer: Uint8Array, level: number): ArrivingDeflateAhead | undefined {
  if (!(buffer.buffer instanceof SharedArrayBuffer)) return undefined;
  try {
    return new DeflateAheadWorker(buffer, level);
  } catch {
    return undefined; // no worker threads here (a restricted runtime): the write deflates as before
  }
}

/**
 * gzips a stream of chunks into a stream of compressed pieces: neither the input nor the output
 * is ever whole in memory (what writing a file needs), and the deflating runs on several cores.
 *
 * pigz's scheme: the input is cut into blocks (`deflateBlockBytes`), each deflated on its own
 * (on libuv's thread pool, several at a time, while the next blocks are produced) with the
 * 32 KiB before it as its preset dictionary, so matches reach back across block boundaries as in
 * one stream. Every block but the last ends with a sync flush (byte-aligned, not final) and the
 * last with the final block, so the concatenation is one ordinary deflate stream in one gzip
 * member; the CRC-32 and size of the trailer are computed here. The output is within a few bytes
 * per block of a single zlib stream's (same level, same matching), inflates with any gzip reader,
 * and depends only on the bytes, the level and `total` (never on chunking or thread timing).
 * At most `DEFLATE_BLOCKS_IN_FLIGHT` blocks are deflating at once: the producer is not asked for
 * more until the consumer has taken the oldest block's output (backpressure).
 *
 * `total`, when the caller knows the exact byte count of `chunks` (an encoder that planned its
 * output), tells which block is the last as soon as it exists, so each block starts deflating at
 * once instead of after the next one is produced, and picks smaller blocks for small inputs
 * (`deflateBlockBytes`). A wrong `total` is a `PROFKIT_E_USAGE` error (never a corrupt stream).
 *
 * A chunk must not change once handed over: blocks within one chunk are views of it, deflated
 * on the thread pool later (its CRC-32 is taken at once), so a reused buffer would corrupt them.
 *
 * A consumer that stops early (`return()`, `break`) leaves the blocks in flight to finish on the
 * thread pool; their results, errors included, are dropped.
 */
export async function* gzipStream(chunks: Iterable<Uint8Array>, level: number, total?: number, ahead?: DeflateAhead): AsyncGenerator<Uint8Array> {
  const usable = ahead instanceof DeflateAheadWorker && ahead.level === level && ahead.total !== undefined && ahead.total === total;
  // Another level or length (a profile changed before its write): none of it will be taken, so its
  // worker stops now rather than deflating on beside this stream's own deflating.
  if (ahead && !usable) ahead.cancel();
  try {
    yield* gzipBlocks(chunks, level, total, usable ? ahead : undefined);
  } finally {
    ahead?.cancel();
  }
}

async function* gzipBlocks(chunks: Iterable<Uint8Array>, level: number, total: number | undefined, ahead: DeflateAheadWorker | undefined): AsyncGenerator<Uint8Array> {
  const blockBytes = deflateBlockBytes(total);
  const inFlight: { job: Promise<Buffer>; input: Uint8Array }[] = [];
  const buffers = new BlockBuffers(blockBytes);
  // The block started last: the next one is primed with its tail.
  let previous: Uint8Array | undefined;
  let index = 0;
  // Whether the block before this one was the expected bytes of `ahead` (for the first: nothing before).
  let previousExpected = true;
  const start = (input: Uint8Array, last: boolean) => {
    const expected = ahead?.matches(index, input) === true;
    // Deflated ahead from the same bytes with the same dictionary (the block before) and options.
    let job = expected && previousExpected ? ahead!.take(index) : undefined;
    // Guessed wrong: what is left of the guess is not deflated in vain.
    if (ahead && !expected) ahead.cancel();
    job ??= deflateRawAsync(input, blockOptions(level, input.length, last, previous));
    // Awaited in order below; a rejection met after the consumer stopped early is not "unhandled".
    job.catch(() => undefined);
    inFlight.push({ job, input });
    previous = input;
    previousExpected = expected;
    index++;
  };
  // The oldest job's output; its input buffer is free again (the block after it, primed with
  // its tail, was started before: at least 2 are in flight when this runs in the loop).
  const oldest = async (): Promise<Uint8Array> => {
    const { job, input } = inFlight.shift()!;
    const out = await job;
    buffers.release(input);
    return bytesOf(out);
  };
  let crc = 0;
  let size = 0;
  yield gzipHeader(level);
  // Without a total, one block of look-ahead: whether a block is the last is known once the next exists.
  let held: Uint8Array | undefined;
  for (const block of blocksOf(chunks, blockBytes, buffers)) {
    if (total !== undefined && size >= total) throw wrongTotal(`more than the announced ${total} bytes`, size);
    crc = crc32(block, crc);
    size += block.length;
    const ready = total !== undefined ? block : held;
    held = block;
    if (!ready) continue;
    if (inFlight.length >= DEFLATE_BLOCKS_IN_FLIGHT) yield await oldest();
    start(ready, total !== undefined && size >= total);
  }
  if (total !== undefined && size !== total) throw wrongTotal(`${size} bytes, not the announced ${total}`, size);
  // The last block when it was held back, or an empty final block for an empty input.
  if (total === undefined || total === 0) start(total === undefined && held ? held : new Uint8Array(0), true);
  while (inFlight.length > 0) yield await oldest();
  const trailer = new Uint8Array(8);
  const view = new DataView(trailer.buffer);
  view.setUint32(0, crc >>> 0, true);
  view.setUint32(4, size >>> 0, true); // ISIZE: the size modulo 2^32
  yield trailer;
}

/** A `total` of `gzipStream` that is not the byte count of its chunks (a caller's bug, typed all the same). */
function wrongTotal(message: string, offset: number): ProfkitError {
  return new ProfkitError(ErrorCodes.USAGE, `gzipStream: ${message}`, { offset, rule: 'total is the exact byte count of the chunks' });
}

/**
 * gzips a stream of chunks of known total size (as `gzipBytes` would gzip their concatenation,
 * and byte for byte the same up to `MIN_DEFLATE_BLOCK_BYTES`, one block) without the whole input ever being in
 * memory: `gzipStream`'s blocks, deflated on several cores, land in one buffer of the bound size
 * (only its written pages are resident), so no concatenation copy is made. A total past 4 GiB is
 * gzipped as long as its output fits one buffer (`maxBytes`, at most `MAX_GZIP_BUFFER_BYTES`);
 * more is a `PROFKIT_E_LIMIT` error (never a RangeError).
 */
export async function gzipChunks(total: number, chunks: Iterable<Uint8Array>, level: number, maxBytes = MAX_GZIP_BUFFER_BYTES): Promise<Uint8Array> {
  const max = Math.min(maxBytes, MAX_GZIP_BUFFER_BYTES);
  // Each block may add a sync flush marker and a block header beyond the one-stream bound.
  const bound = Math.min(gzipBound(total) + 16 * (Math.ceil(total / deflateBlockBytes(total)) + 1), max);
  const buffer = Buffer.allocUnsafe(bound); // a small one is a slice of Node's shared pool
  let out = new Uint8Array(buffer.buffer, buffer.byteOffset, bound);
  let at = 0;
  for await (const piece of gzipStream(chunks, level, total)) {
    if (at + piece.length > out.length) {
      // Only past `max` (below it the bound is zlib's worst case plus slack); correct output all the same.
      if (at + piece.length > max) throw gzipOutputLimitError(total, max);
      const grown = new Uint8Array(Math.min(Math.max(out.length * 2, at + piece.length), max));
      grown.set(out.subarray(0, at));
      out = grown;
    }
    out.set(piece, at);
    at += piece.length;
  }
  return out.subarray(0, at);
}
