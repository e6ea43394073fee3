/**
 * The pprof adapter's codec (loaded lazily by the adapter): reading gzip or raw profile.proto,
 * writing the canonical encoding, gzipped with Go's header bytes by default.
 */

import {
  ErrorCodes,
  ProfkitError,
  type ReadLimits,
  isGzip,
  type AdapterCodec,
  type DeflateAhead,
  type Limits,
  type Profile,
  type ReadInput,
  type ReadOptions,
  type ReadResult,
  type Warning,
  type WriteOptions,
  type WriteResult,
  GZIP_IMPLEMENTATION,
  startDeflateAhead,
  startDeflateAheadOfArriving,
  type ArrivingDeflateAhead,
} from '@profkit/core';
import { ProfileDecoder, decodeProfile, decodeProfileStream, type DecodeOptions, type DecodeResult } from './decode.js';
import { encodeProfile, encodeProfileChunks } from './encode.js';
import { gunzipExact, gzipChunks, gzipOneBuffer, gzipStream } from './gzip.js';

export { decodeProfile, decodeProfileStream, ProfileDecoder, GoErrors, EMPTY_NAME, type DecodeOptions, type DecodeResult } from './decode.js';
export { encodeProfile, encodeProfileChunks, type EncodeOptions } from './encode.js';
export { gunzipExact, gzipAnnouncedSize } from './gzip.js';

export interface ParseOptions {
  file?: string;
  limits?: Limits & ReadLimits;
}

/**
 * Parses pprof bytes, gzip-compressed (all members, as Go reads them) or raw.
 * Throws `ProfkitError` on bad input.
 */
export function parsePprof(bytes: Uint8Array, options: ParseOptions = {}): DecodeResult {
  // Inflated into one buffer sized from the gzip trailer (no concatenation copy).
  const raw = isGzip(bytes) ? gunzipExact(bytes, options.limits ?? {}, options.file) : bytes;
  return decodeProfile(raw, { file: options.file, limits: options.limits });
}

export interface SerializeOptions {
  /** gzip the output (default true). */
  compress?: boolean;
  /** zlib level 1..9 (default 6, Go's `gzip.DefaultCompression`). */
  level?: number;
  file?: string;
}

/**
 * gzip with the header google/pprof's `Profile.Write` produces (`1f 8b 08 00 00000000 00 ff`:
 * no name, mtime 0, OS = 255). The deflate stream itself is zlib's, not Go's, so compressed
 * bytes differ from Go's while the gunzipped payload is byte-identical.
 */
export function gzipLikeGo(raw: Uint8Array, level = 6): Uint8Array {
  const z = gzipOneBuffer(raw, level);
  return goGzipHeader(new Uint8Array(z.buffer, z.byteOffset, z.byteLength), level);
}

/** Sets the gzip header bytes google/pprof's writer produces (mtime 0, XFL, OS = 255). */
function goGzipHeader(out: Uint8Array, level: number): Uint8Array {
  out[4] = 0;
  out[5] = 0;
  out[6] = 0;
  out[7] = 0;
  out[8] = level === 9 ? 2 : level === 1 ? 4 : 0; // XFL as Go's compress/gzip sets it
  out[9] = 0xff;
  return out;
}

/** Serializes a profile: canonical profile.proto bytes, gzipped unless `compress: false`. */
export function serializePprof(p: Profile, options: SerializeOptions = {}): Uint8Array {
  if (options.compress === false) return encodeProfile(p, { file: options.file });
  // The raw encoding is only referenced here: it is garbage once gzipped.
  return gzipLikeGo(encodeProfile(p, { file: options.file }), options.level ?? 6);
}

/** Warnings for what profile.proto cannot carry. */
export function lossWarnings(p: Profile): Warning[] {
  const out: Warning[] = [];
  const ext = Object.keys(p['.extensions']);
  if (ext.length > 0) {
    out.push({
      code: 'PROFKIT_W_PPROF_EXTENSIONS_DROPPED',
      message: `format extensions (${ext.join(', ')}) have no place in profile.proto and were not written`,
    });
  }
  return out;
}

async function read(input: ReadInput, options: ReadOptions): Promise<ReadResult> {
  const stream = options.options?.stream ?? true;
  if (typeof stream !== 'boolean') {
    throw new ProfkitError(ErrorCodes.USAGE, `pprof: read option stream must be true or false, got ${String(stream)}`, { option: 'stream' });
  }
  aggregateOf(options); // a bad value is a usage error before anything is read
  try {
    let result: DecodeResult;
    if (stream) {
      result = await readStreamed(input, options);
    } else {
      let bytes = await input.bytes();
      // Inputs handed over un-inflated (e.g. readProfileBytes of a .pb.gz) are inflated here.
      if (isGzip(bytes)) bytes = gunzipExact(bytes, options.limits ?? {}, input.fileName);
      result = decodeProfile(bytes, decodeOptionsOf(input, options));
    }
    const { profile, warnings } = result;
    return { profile, warnings, format: 'pprof' };
  } catch (e) {
    if (e instanceof ProfkitError && e.detail.file === undefined) throw e.withDetail({ file: input.fileName });
    throw e;
  }
}

/**
 * Whether the read merges equal samples (`DecodeOptions.aggregate`): the read option `aggregate`
 * when given, else `'if-repeating'` when the caller only sums values over samples
 * (`ReadOptions.samplesSummed`: the report views), whose output is the same either way.
 */
function aggregateOf(options: ReadOptions): NonNullable<DecodeOptions['aggregate']> {
  const aggregate = options.options?.aggregate;
  // Asked for by the caller's use only: merged where samples repeat (no cost where they do not).
  if (aggregate === undefined) return options.samplesSummed === true ? 'if-repeating' : false;
  if (typeof aggregate !== 'boolean') {
    throw new ProfkitError(ErrorCodes.USAGE, `pprof: read option aggregate must be true or false, got ${String(aggregate)}`, { option: 'aggregate' });
  }
  return aggregate;
}

/** What the decoder is told of a read: the file name for its errors, the limits, `aggregate`. */
function decodeOptionsOf(input: ReadInput, options: ReadOptions): DecodeOptions {
  return { file: input.fileName, limits: options.limits, aggregate: aggregateOf(options) };
}

/**
 * The gzip level a write with these options uses (`undefined`: no compression): the `level`
 * option (default 6), unless `compress` is false or, without `compress`, the file name ends in
 * `.pb`. Bad options are usage errors.
 */
function writeLevel(fileName: string | undefined, o: Record<string, unknown>): number | undefined {
  if (o.compress !== undefined && typeof o.compress !== 'boolean') {
    throw new ProfkitError(ErrorCodes.USAGE, `pprof: option compress must be true or false, got ${String(o.compress)}`, { option: 'compress' });
  }
  if (o.level !== undefined && (typeof o.level !== 'number' || !Number.isInteger(o.level) || o.level < 1 || o.level > 9)) {
    throw new ProfkitError(ErrorCodes.USAGE, `pprof: option level must be an integer 1..9, got ${String(o.level)}`, { option: 'level' });
  }
  const rawByName = fileName !== undefined && /\.pb$/i.test(fileName);
  const compress = o.compress === undefined ? !rawByName : (o.compress as boolean);
  return compress ? ((o.level as number | undefined) ?? 6) : undefined;
}

async function write(profile: Profile, options: WriteOptions): Promise<WriteResult> {
  const level = writeLevel(options.fileName, options.options ?? {});
  // Deflating started by the read this profile's samples come from (a planned write), if any.
  const ahead = deflatedAhead.get(profile.samples);
  deflatedAhead.delete(profile.samples);
  let data: Uint8Array | AsyncIterable<Uint8Array>;
  if (level === undefined) {
    ahead?.cancel();
    data = options.streaming ? asAsync(encodeProfileChunks(profile, { file: options.fileName }).chunks) : encodeProfile(profile, { file: options.fileName });
  } else if (options.streaming) {
    // Writing a file: encoding, deflating and writing go 1 MiB at a time, so neither the
    // encoding nor the gzip output is ever whole in memory.
    const { total, chunks } = encodeProfileChunks(profile, { file: options.fileName });
    data = gzipStream(chunks, level, (first) => goGzipHeader(first, level), total, ahead);
  } else {
    ahead?.cancel();
    // Streamed: 1 MiB of encoding at a time goes to zlib (deflating on the thread pool while the
    // next MiB is encoded), so the uncompressed encoding is never whole in memory.
    const { total, chunks } = encodeProfileChunks(profile, { file: options.fileName });
    data = goGzipHeader(await gzipChunks(total, chunks, level), level);
  }
  return { data, warnings: lossWarnings(profile) };
}

/**
 * Deflating started while reading (`startDeflateAhead`), for the write a caller planned
 * (`ReadOptions.plannedWrite`), by the sample table of the profile read: a profile derived from
 * it (`{ ...profile, ... }`, as convert's `--add-comment` and `--buildid` make) shares that table,
 * so its write finds and ends the deflating too. The write's `gzipStream` uses only the blocks
 * its encoding has byte for byte: a profile encoding to other bytes gets the same output as
 * without it (and it costs a second core's deflating time).
 */
const deflatedAhead = new WeakMap<Profile['samples'], DeflateAhead>();

/**
 * The gzip level to deflate the bytes read at ahead of the planned write: that of a pprof write
 * (the canonical encoding of a profile Go or profkit wrote is the very bytes read), else none.
 */
function plannedWriteLevel(options: ReadOptions): number | undefined {
  const planned = options.plannedWrite;
  // Only node:zlib deflates ahead; elsewhere (pako) the read's bytes must not go to a
  // SharedArrayBuffer, which a browser may lack and whose views its TextDecoder refuses.
  if (planned?.adapter !== 'pprof' || planned.format !== 'pprof' || GZIP_IMPLEMENTATION !== 'node:zlib') return undefined;
  try {
    return writeLevel(planned.fileName, planned.options ?? {});
  } catch {
    return undefined; // the write itself says what is wrong with its options
  }
}

/**
 * Inflated bytes up to which a streamed read decodes one buffer: the chunks are copied into it as
 * they are read (the file is read and inflated once) and, when the input ends within this bound,
 * the buffer decoder finishes it, which is faster than the two-pass streamed decoder (a
 * 200,000-sample profile, 19 MB: ~5 % less CPU and ~5 MiB less peak RSS for the whole `convert`,
 * measured in 2 × 18 alternating runs). A longer input goes on as a stream read twice, so that
 * memory stays the profile plus this bound: the bytes collected are replayed as the first pass
 * and the second pass reads and inflates the input again. An input stored past this bound
 * (`ReadInput.storedBytes`) is streamed from the start.
 */
const WHOLE_DECODE_MAX_BYTES = 32 << 20;

/**
 * Inflated bytes from which a read deflates ahead of a planned write: below it the write's own
 * deflating takes a few milliseconds, less than a worker thread costs to start (a 2 KB convert
 * paid ~20 ms CPU and ~9 MB RSS for one).
 */
export const DEFLATE_AHEAD_MIN_BYTES = 1 << 20;

/** The largest one-buffer bound a read deflates ahead for (what the worker's Int32 progress counter holds). */
const MAX_DEFLATE_AHEAD_BYTES = 2 ** 31 - 1;

/**
 * The default read: one buffer for an input within `wholeDecodeMaxBytes`, else two streamed passes.
 *
 * The inflated chunks are copied into one buffer as they arrive (`ArrivingBytes`) and decoded
 * while the rest is read and inflated on the thread pool: pass 1 (`ProfileDecoder.index`) walks
 * the whole fields of each extension, and, for a planned pprof write, a worker thread deflates
 * the buffer's blocks as they are whole (`startDeflateAheadOfArriving`). The 200,000-sample
 * convert waited ~130 ms for its inflate with the main thread idle and the deflating not started.
 * Pass 1 keeps its error to the end (`finish`), so a read that fails (corrupt gzip, a limit, an
 * abort) fails as it did when nothing was decoded before the last byte.
 */
export async function readStreamed(input: ReadInput, options: ReadOptions, wholeDecodeMaxBytes = WHOLE_DECODE_MAX_BYTES): Promise<DecodeResult> {
  const decodeOptions = decodeOptionsOf(input, options);
  // The signal is checked between chunks (the decoders take none): an abort stops the read.
  const { signal } = options;
  async function* abortable(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
    for await (const chunk of chunks) {
      signal?.throwIfAborted();
      yield chunk;
    }
  }
  // Stored larger than the bound, an input inflates to more than it (all but always: gzip rarely
  // shrinks the data it holds): streamed from the start, as nothing decoded or deflated while
  // collecting it would be used.
  if (input.storedBytes !== undefined && input.storedBytes > wholeDecodeMaxBytes) return decodeProfileStream(() => abortable(input.chunks()), decodeOptions);
  const rest = abortable(input.chunks());
  // The worker's progress counter is an Int32Array (core's DeflateAheadWorker): lengths past
  // 2^31-1 would wrap, so a larger bound (never the default) deflates nothing ahead.
  const level = wholeDecodeMaxBytes <= MAX_DEFLATE_AHEAD_BYTES ? plannedWriteLevel(options) : undefined;
  // Shared when a worker thread may deflate ahead from it (only then: a browser may lack SharedArrayBuffer).
  const bytes = new ArrivingBytes(wholeDecodeMaxBytes, level !== undefined);
  const decoder = new ProfileDecoder(decodeOptions);
  let ahead: ArrivingDeflateAhead | undefined;
  // Started once at most: where no worker thread can start, the read does not try at every chunk.
  let aheadTried = false;
  let beyond: Uint8Array | undefined;
  try {
    for (let next = await rest.next(); !next.done; next = await rest.next()) {
      if (!bytes.append(next.value)) {
        beyond = next.value;
        break;
      }
      decoder.index(bytes.bytes);
      // Deflated ahead of the planned write once the input is long enough to be worth a thread.
      if (level !== undefined && !aheadTried && bytes.length >= DEFLATE_AHEAD_MIN_BYTES && bytes.buffer) {
        aheadTried = true;
        ahead = startDeflateAheadOfArriving(bytes.buffer, level);
      }
      ahead?.arrived(bytes.length);
    }
  } catch (e) {
    ahead?.cancel();
    // A failure of this loop's own (an allocation) leaves the input open: it is closed now, not
    // when the garbage collector finds it (an input that failed has closed itself already).
    await rest.return(undefined).catch(() => undefined);
    throw e;
  }
  if (beyond === undefined) {
    const whole = bytes.bytes;
    ahead?.end(whole.length);
    // An input that came in one chunk was not copied: its deflating starts now, from a copy.
    const aheadOfWrite = ahead ?? (level !== undefined && whole.length >= DEFLATE_AHEAD_MIN_BYTES ? startDeflateAhead(whole, level) : undefined);
    let result: DecodeResult;
    try {
      result = decoder.finish(whole);
    } catch (e) {
      aheadOfWrite?.cancel();
      throw e;
    }
    if (aheadOfWrite) deflatedAhead.set(result.profile.samples, aheadOfWrite);
    return result;
  }
  // Too long to be one buffer: read as a stream, and written without deflating ahead.
  ahead?.cancel();
  const head = bytes.chunks();
  async function* firstPass(): AsyncGenerator<Uint8Array> {
    try {
      // Pieces of one buffer, which lives until pass 1 has gone past them all.
      for (let i = 0; i < head.length; i++) {
        const chunk = head[i]!;
        head[i] = EMPTY;
        yield chunk;
      }
      yield beyond!;
      for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
    } finally {
      // A decoder that stops early (an error) closes the file here.
      await rest.return(undefined);
    }
  }
  let opened = 0;
  return decodeProfileStream(() => (opened++ === 0 ? firstPass() : abortable(input.chunks())), decodeOptions);
}

const EMPTY = new Uint8Array(0);

/**
 * Chunks of an input joined as they arrive, up to `capacity` bytes: the first chunk as it is (an
 * input of one chunk is never copied), from the second on copied into one buffer of `capacity`
 * bytes, allocated once (zero-filled on demand by the system: only the pages written become
 * resident), so there is no join at the end and no growth copy.
 */
class ArrivingBytes {
  /** The joining buffer, once a second chunk came (a `SharedArrayBuffer` when `shared`). */
  buffer: Uint8Array | undefined;
  private first: Uint8Array | undefined;
  length = 0;

  constructor(
    private readonly capacity: number,
    private readonly shared: boolean,
  ) {}

  /** The bytes so far. */
  get bytes(): Uint8Array {
    return this.buffer ? this.buffer.subarray(0, this.length) : (this.first ?? EMPTY);
  }

  /** Adds `chunk`; false (nothing added) when it would take the bytes past `capacity`. */
  append(chunk: Uint8Array): boolean {
    if (this.length + chunk.length > this.capacity) return false;
    if (this.first === undefined && this.buffer === undefined) {
      this.first = chunk;
    } else {
      if (this.buffer === undefined) {
        this.buffer = new Uint8Array(this.shared ? new SharedArrayBuffer(this.capacity) : new ArrayBuffer(this.capacity));
        this.buffer.set(this.first!);
        this.first = undefined;
      }
      this.buffer.set(chunk, this.length);
    }
    this.length += chunk.length;
    return true;
  }

  /** The bytes so far as chunks of at most 256 KiB (for a decoder that reads them as a stream). */
  chunks(): Uint8Array[] {
    const all = this.bytes;
    const out: Uint8Array[] = [];
    for (let at = 0; at < all.length; at += REPLAY_CHUNK_BYTES) out.push(all.subarray(at, Math.min(all.length, at + REPLAY_CHUNK_BYTES)));
    return out;
  }
}

/** The piece size `ArrivingBytes.chunks` replays its bytes in (core's inflate chunk size). */
const REPLAY_CHUNK_BYTES = 256 << 10;

async function* asAsync(chunks: Iterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  yield* chunks;
}

export const codec: AdapterCodec = { read, write };
export default codec;

const KERNEL_MAPPING_PREFIX = '[kernel.kallsyms]';

/**
 * google/pprof's derived, never persisted "kernel relocation symbol" of a mapping: for a mapping
 * file name starting with `[kernel.kallsyms]` the rest of the name (e.g. `_text`, `_stext`),
 * otherwise `undefined`. Derive it from `profile['.mappings'].filename` when needed; it is not
 * stored in the model (nor written), as in google/pprof.
 */
export function kernelRelocationSymbol(mappingFilename: string): string | undefined {
  return mappingFilename.startsWith(KERNEL_MAPPING_PREFIX) ? mappingFilename.slice(KERNEL_MAPPING_PREFIX.length) : undefined;
}
