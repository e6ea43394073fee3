/**
 * File input and output shared by the CLI and adapters: bounded reads (files or stdin), gzip
 * detection and bounded inflation, and atomic writes (temp file + fsync + rename) that never
 * overwrite an input and never leave half a file behind.
 */

import { constants as fsConstants, createReadStream, fstatSync, promises as fsp, realpathSync, statSync, writeSync, type Stats } from 'node:fs';
import { isatty } from 'node:tty';
import { basename, dirname, join, resolve } from 'node:path';
import { constants as zc, createGunzip, gunzipSync } from 'node:zlib';
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

export function isGzip(bytes: Uint8Array): boolean {
  return bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
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
 * Inflates a whole gzip buffer (all members, as Go's reader does), refusing output above
 * `maxDecompressedBytes` so that a gzip bomb costs a bounded amount of memory.
 *
 * node:zlib collects output in `chunkSize` pieces and concatenates them at the end, so the
 * output would briefly exist twice; when the trailer announces the size, one chunk just above it
 * holds the whole output and no copy is made (a wrong announcement only costs more chunks).
 */
export function gunzipBounded(bytes: Uint8Array, limits: Limits = {}, file?: string): Uint8Array {
  const max = Math.min(limits.maxDecompressedBytes ?? DEFAULT_LIMITS.maxDecompressedBytes, 2 ** 32);
  const announced = gzipAnnouncedSize(bytes);
  const chunkSize = announced !== undefined && announced < max ? announced + 1 : undefined;
  try {
    const out = gunzipSync(bytes, { maxOutputLength: max, ...(chunkSize !== undefined ? { chunkSize: Math.max(64, chunkSize) } : {}) });
    return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'ERR_BUFFER_TOO_LARGE' || /Cannot create a Buffer larger|maxOutputLength/.test(String(err.message))) {
      throw new ProfkitError(ErrorCodes.LIMIT, `decompressed input exceeds ${max} bytes (raise it with the option limits.maxDecompressedBytes)`, {
        file,
        option: 'maxDecompressedBytes',
        rule: 'decompressed size limit',
      });
    }
    throw new ProfkitError(ErrorCodes.DECOMPRESS, `decompressing gzip data failed: ${err.message}`, { file, rule: 'gzip stream' }, { cause: e });
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
    if (out.byteLength >= max || take === bytes.length) {
      return new Uint8Array(out.buffer, out.byteOffset, Math.min(out.byteLength, max));
    }
  }
}

/** Reads a whole file (or stdin for `-`), bounded by `maxInputBytes`. */
export async function readInput(path: string, limits: Limits = {}): Promise<Uint8Array> {
  const max = limits.maxInputBytes ?? DEFAULT_LIMITS.maxInputBytes;
  if (path === '-') return readStream(process.stdin, limits.maxInputBytes ?? DEFAULT_STREAM_INPUT_BYTES, '-');
  let size: number;
  try {
    const st = statSync(path);
    if (st.isDirectory()) throw new ProfkitError(ErrorCodes.IO, `${path} is a directory`, { file: path });
    size = st.size;
  } catch (e) {
    if (e instanceof ProfkitError) throw e;
    throw ioError(e, path, 'reading');
  }
  if (size > max) {
    throw new ProfkitError(ErrorCodes.LIMIT, `input is ${size} bytes, above the limit of ${max} (raise it with the option limits.maxInputBytes)`, { file: path, option: 'maxInputBytes' });
  }
  if (size === 0) {
    // Could be a FIFO or /proc file: stream it instead of trusting size.
    return readStream(createReadStream(path), limits.maxInputBytes ?? DEFAULT_STREAM_INPUT_BYTES, path);
  }
  try {
    const buf = await fsp.readFile(path);
    return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  } catch (e) {
    throw ioError(e, path, 'reading');
  }
}

async function readStream(stream: NodeJS.ReadableStream, max: number, file: string): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > max) throw new ProfkitError(ErrorCodes.LIMIT, `input exceeds the limit of ${max} bytes (raise it with the option limits.maxInputBytes)`, { file, option: 'maxInputBytes' });
      chunks.push(chunk);
    }
  } catch (e) {
    if (e instanceof ProfkitError) throw e;
    throw ioError(e, file, 'reading');
  }
  const b = Buffer.concat(chunks, total);
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/**
 * `maxInputBytes` of an input whose size is not known before reading it (stdin, a FIFO,
 * `/dev/fd/N`): 512 MiB rather than the 4 GiB of a file, because nothing but this limit ends an
 * endless stream that a whole-buffer reader keeps in memory (twice, while it is joined).
 */
export const DEFAULT_STREAM_INPUT_BYTES = 512 * 1024 ** 2;

/**
 * Raw bytes of a stream input kept in memory so that a reader can read it again (pprof reads
 * twice). A stream input is compressed or small in practice; past this the kept bytes are
 * dropped, so a single-pass reader streams an endless input in bounded memory, and a second pass
 * is a typed error that says to read from a file.
 */
export const STREAM_REPLAY_BYTES = 256 * 1024 ** 2;

/**
 * A non-seekable input (stdin, a FIFO, `/dev/fd/N`) read as it arrives, once: `head()` reads its
 * first bytes for format detection, `chunks()` yields its raw bytes from the start (what was read
 * before replayed from memory), and `maxInputBytes` fires as soon as the bytes read pass it, so a
 * streaming reader of an endless input stops at the limit instead of buffering it first.
 */
export class StreamInput {
  private readonly kept: Uint8Array[] = [];
  /** Raw bytes read so far. */
  private read = 0;
  /** True once bytes at the start of the stream are no longer kept (no new pass can start). */
  private dropped = false;
  private ended = false;
  private readonly source: AsyncIterator<Uint8Array>;
  readonly max: number;

  constructor(
    stream: AsyncIterable<Uint8Array>,
    readonly file: string,
    limits: Limits = {},
    private readonly replayBytes = STREAM_REPLAY_BYTES,
  ) {
    this.max = limits.maxInputBytes ?? DEFAULT_STREAM_INPUT_BYTES;
    this.source = stream[Symbol.asyncIterator]();
  }

  /** Opens stdin (`-`) or a FIFO/device path as a stream input. */
  static open(path: string, limits: Limits = {}): StreamInput {
    const stream = path === '-' ? process.stdin : createReadStream(path);
    return new StreamInput(stream as AsyncIterable<Uint8Array>, path, limits);
  }

  /** Reads one more chunk into memory; false at the end of the stream. */
  private async pull(): Promise<boolean> {
    if (this.ended) return false;
    let r: IteratorResult<Uint8Array>;
    try {
      r = await this.source.next();
    } catch (e) {
      throw ioError(e, this.file, 'reading');
    }
    if (r.done) {
      this.ended = true;
      return false;
    }
    const c = r.value;
    this.read += c.length;
    if (this.read > this.max) {
      throw new ProfkitError(ErrorCodes.LIMIT, `input exceeds the limit of ${this.max} bytes (raise it with the option limits.maxInputBytes)`, {
        file: this.file,
        option: 'maxInputBytes',
        offset: this.read - c.length,
        rule: 'input size limit',
      });
    }
    this.kept.push(new Uint8Array(c.buffer, c.byteOffset, c.byteLength));
    return true;
  }

  /** The first `n` bytes (fewer when the stream is shorter). */
  async head(n = 64 * 1024): Promise<Uint8Array> {
    if (this.dropped) throw this.onceError();
    while (this.read < n && (await this.pull()));
    const b = Buffer.concat(this.kept, Math.min(n, this.read));
    return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  }

  /**
   * The raw bytes from the start of the stream, in chunks. Several passes may run one after the
   * other; once more than `replayBytes` were read, the bytes already passed are dropped (the
   * current pass goes on) and a new pass is an error.
   */
  async *chunks(): AsyncGenerator<Uint8Array> {
    if (this.dropped) throw this.onceError();
    for (let i = 0; ; ) {
      if (i >= this.kept.length && !(await this.pull())) return;
      const c = this.kept[i]!;
      if (this.read > this.replayBytes) {
        // Past the replay budget: stop keeping what this pass has consumed.
        this.kept.splice(0, i + 1);
        this.dropped = true;
        i = 0;
      } else i++;
      yield c;
    }
  }

  /** The whole input, bounded by `maxInputBytes` while it is read. */
  async bytes(): Promise<Uint8Array> {
    if (this.dropped) throw this.onceError();
    while (await this.pull());
    const b = this.kept.length === 1 ? this.kept[0]! : Buffer.concat(this.kept, this.read);
    return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  }

  /** Stops reading: closes the source (a FIFO's writer then gets EPIPE instead of blocking) and drops what was kept. */
  async close(): Promise<void> {
    this.ended = true;
    this.kept.length = 0;
    try {
      await this.source.return?.();
    } catch {
      // Closing a stream that already failed has nothing left to report.
    }
  }

  private onceError(): ProfkitError {
    return new ProfkitError(
      ErrorCodes.UNSUPPORTED,
      `${this.file} is a stream of more than ${this.replayBytes} bytes, and this reader reads its input twice: read it from a file instead`,
      { file: this.file, rule: 'stream inputs are kept for a second pass up to 256 MiB' },
    );
  }
}

/** Reads the first `n` bytes of a file (for sniffing without loading a large file). */
export async function readHead(path: string, n = 64 * 1024): Promise<Uint8Array> {
  let fh: fsp.FileHandle | undefined;
  try {
    fh = await fsp.open(path, 'r');
    const buf = Buffer.alloc(n);
    const { bytesRead } = await fh.read(buf, 0, n, 0);
    return new Uint8Array(buf.buffer, buf.byteOffset, bytesRead);
  } catch (e) {
    throw ioError(e, path, 'reading');
  } finally {
    await fh?.close();
  }
}

/** A streaming reader of a file's bytes, gunzipped on the fly when it is gzip. */
export async function* readChunks(path: string, options: { chunkSize?: number; gunzip?: boolean } = {}): AsyncGenerator<Uint8Array> {
  const head = path === '-' ? undefined : await readHead(path, 2);
  const source: NodeJS.ReadableStream = path === '-' ? process.stdin : createReadStream(path, { highWaterMark: options.chunkSize ?? 1 << 20 });
    // 64 KiB of output per piece (zlib's default is 16 KiB): 4 times fewer pieces, event-loop turns
  // and thread-pool round trips for the same bytes; peak memory measured the same.
  const stream = options.gunzip !== false && head && isGzip(head) ? source.pipe(createGunzip({ chunkSize: 1 << 16 })) : source;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) yield new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code?.startsWith('Z_')) {
      throw new ProfkitError(ErrorCodes.DECOMPRESS, `decompressing ${path} failed: ${(e as Error).message}`, { file: path });
    }
    throw ioError(e, path, 'reading');
  }
}

export function ioError(e: unknown, file: string, doing: string): ProfkitError {
  const err = e as NodeJS.ErrnoException;
  return new ProfkitError(ErrorCodes.IO, `${doing} ${file} failed: ${errnoText(err)}`, { file, errno: err.code }, { cause: e });
}

/** What a failed system call's errno means, in words (Node's message otherwise). */
const ERRNO_TEXT: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EISDIR: 'is a directory',
  ENOSPC: 'no space left on device (ENOSPC)',
  EDQUOT: 'disk quota exceeded (EDQUOT)',
  EFBIG: 'file too large (EFBIG)',
  EIO: 'input/output error (EIO)',
  EROFS: 'read-only file system (EROFS)',
  EPIPE: 'the reader closed the pipe (EPIPE)',
};

function errnoText(err: NodeJS.ErrnoException): string {
  return (err.code !== undefined ? ERRNO_TEXT[err.code] : undefined) ?? err.message;
}

function sameFile(a: string, b: string): boolean {
  try {
    const ra = realpathSync(a);
    const rb = realpathSync(b);
    if (ra === rb) return true;
    const sa = statSync(ra);
    const sb = statSync(rb);
    return sa.ino === sb.ino && sa.dev === sb.dev;
  } catch {
    return resolve(a) === resolve(b);
  }
}

export interface AtomicWriteOptions {
  /** Files that must not be overwritten (the inputs of the operation). */
  inputs?: string[];
  /** File mode of a new file, before the umask (default 0o644). An existing file keeps its own mode. */
  mode?: number;
  /**
   * Aborts the write (SIGINT/SIGTERM in the CLI): checked between chunks and before the rename,
   * so an aborted write removes its temporary file, leaves the target as it was and rejects with
   * the signal's reason.
   */
  signal?: AbortSignal;
}

/** Pieces in which a whole buffer is written, so that an abort is noticed during a large write. */
const WRITE_PIECE = 4 << 20;

/** Hops followed through symbolic links before giving up (Linux's own limit is 40). */
const MAX_SYMLINK_HOPS = 40;

/**
 * What `writeFileAtomic` does with `path`: replace a regular file (or create a new one) through a
 * temporary file and a rename, or write straight into a FIFO or character device, which a
 * rename would replace by a regular file. A symbolic link is followed to the file it names (as
 * `sed -i --follow-symlinks` and editors do): the link stays and its target is replaced
 * atomically. Directories, sockets and block devices are refused.
 */
type WriteTarget =
  | { kind: 'file'; path: string; existing?: { mode: number; uid: number; gid: number } }
  | { kind: 'stream'; path: string };

async function resolveWriteTarget(path: string): Promise<WriteTarget> {
  let st: Stats | undefined;
  try {
    // stat follows links, including /proc's (`/dev/stdout` -> /proc/self/fd/1 -> a pipe), which
    // readlink cannot name.
    st = await fsp.stat(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw symlinkLoop(path);
    if (code !== 'ENOENT') throw ioError(e, path, 'writing');
  }
  if (st === undefined) return { kind: 'file', path: await danglingLinkTarget(path) };
  if (st.isFIFO() || st.isCharacterDevice()) return { kind: 'stream', path };
  if (st.isFile()) {
    // The rename must replace the file the links name, not the last link.
    let real: string;
    try {
      real = await fsp.realpath(path);
    } catch (e) {
      throw ioError(e, path, 'writing');
    }
    return { kind: 'file', path: real, existing: { mode: st.mode & 0o777, uid: st.uid, gid: st.gid } };
  }
  const what = st.isDirectory() ? 'a directory' : st.isSocket() ? 'a socket' : st.isBlockDevice() ? 'a block device' : 'not a regular file';
  throw new ProfkitError(ErrorCodes.IO, `writing ${path} failed: it is ${what} (profkit writes regular files, FIFOs, character devices and - for stdout)`, {
    file: path,
    rule: 'output is a file, a FIFO or a character device',
  });
}

/**
 * The file a path that does not resolve to anything names: itself, or, through symbolic links
 * that dangle, the missing file at their end (created, as an editor would).
 */
async function danglingLinkTarget(path: string): Promise<string> {
  let current = path;
  for (let hops = 0; hops <= MAX_SYMLINK_HOPS; hops++) {
    let link: string;
    try {
      link = await fsp.readlink(current);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // Not a link (EINVAL) or not there (ENOENT): this is the file to create.
      if (code === 'EINVAL' || code === 'ENOENT') return current;
      throw ioError(e, path, 'writing');
    }
    current = resolve(dirname(current), link);
  }
  throw symlinkLoop(path);
}

function symlinkLoop(path: string): ProfkitError {
  return new ProfkitError(ErrorCodes.IO, `writing ${path} failed: more than ${MAX_SYMLINK_HOPS} symbolic links to follow (a loop?)`, {
    file: path,
    rule: 'symbolic links are followed to a file',
  });
}

/** Writes all of `chunk` at the handle's position: `write(2)` may write less than asked (a full disk does). */
async function writeAll(fh: fsp.FileHandle, chunk: Uint8Array, signal?: AbortSignal): Promise<void> {
  for (let done = 0; done < chunk.length; ) {
    signal?.throwIfAborted();
    const { bytesWritten } = await fh.write(chunk, done, Math.min(chunk.length - done, WRITE_PIECE));
    done += bytesWritten;
  }
}

async function writeData(fh: fsp.FileHandle, data: Uint8Array | AsyncIterable<Uint8Array> | Iterable<Uint8Array>, signal?: AbortSignal): Promise<void> {
  if (data instanceof Uint8Array) await writeAll(fh, data, signal);
  else for await (const chunk of data as AsyncIterable<Uint8Array>) await writeAll(fh, chunk, signal);
  signal?.throwIfAborted();
}

/** The error of an aborted write: the signal's reason when it is a `ProfkitError`. */
function abortReason(signal: AbortSignal): ProfkitError {
  const r: unknown = signal.reason;
  return r instanceof ProfkitError ? r : new ProfkitError('PROFKIT_E_ABORTED', 'the write was aborted');
}

/**
 * Writes `data` to `path` atomically: into a temporary file in the same directory, fsync'ed,
 * then renamed over the target, then the directory fsync'ed. A crash leaves either the old file
 * or the new one; an abort (`options.signal`) or a failed source leaves the old one. Refuses to
 * overwrite any of `options.inputs`. `-` writes to stdout.
 *
 * An existing target keeps its permission bits (and, when the process may, its owner). A symbolic
 * link is followed: the file it names is replaced, the link stays. FIFOs and character devices
 * (`/dev/null`, a terminal) are written directly, without temporary file or rename, so they stay
 * what they are; directories, sockets and block devices are refused.
 */
export async function writeFileAtomic(
  path: string,
  data: Uint8Array | AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const { signal } = options;
  if (signal?.aborted) throw abortReason(signal);
  if (path === '-') {
    await writeStdout(data, signal);
    return;
  }
  for (const input of options.inputs ?? []) {
    if (input !== '-' && sameFile(input, path)) {
      throw new ProfkitError(ErrorCodes.CLOBBER, `refusing to overwrite the input file ${input}; write to another path`, { file: path });
    }
  }
  const target = await resolveWriteTarget(path);
  try {
    if (target.kind === 'stream') await writeStream(target.path, data, signal);
    else await replaceFile(target, data, options);
  } catch (e) {
    if (signal?.aborted) throw abortReason(signal);
    if (e instanceof ProfkitError) throw e;
    throw ioError(e, path, 'writing');
  }
}

/** Writes into a FIFO or character device in place (no temporary file: a rename would replace the node). */
async function writeStream(path: string, data: Uint8Array | AsyncIterable<Uint8Array> | Iterable<Uint8Array>, signal?: AbortSignal): Promise<void> {
  const fh = await fsp.open(path, fsConstants.O_WRONLY);
  try {
    await writeData(fh, data, signal);
  } finally {
    await fh.close().catch(() => undefined);
  }
}

async function replaceFile(
  target: Extract<WriteTarget, { kind: 'file' }>,
  data: Uint8Array | AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  options: AtomicWriteOptions,
): Promise<void> {
  const dir = dirname(resolve(target.path));
  const tmp = join(dir, `.profkit-tmp-${basename(target.path)}-${process.pid}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`);
  let fh: fsp.FileHandle | undefined;
  try {
    // The umask applies to a new file's mode; an existing file's mode is copied exactly.
    fh = await fsp.open(tmp, 'wx', options.mode ?? 0o644);
    if (target.existing) await keepOwnerAndMode(fh, target.existing);
    await writeData(fh, data, options.signal);
    await fh.sync();
    await fh.close();
    fh = undefined;
    // The last moment an abort can still leave the old file.
    options.signal?.throwIfAborted();
    await fsp.rename(tmp, target.path);
  } catch (e) {
    await fh?.close().catch(() => undefined);
    await fsp.rm(tmp, { force: true }).catch(() => undefined);
    throw e;
  }
  try {
    const dh = await fsp.open(dir, 'r');
    await dh.sync().catch(() => undefined);
    await dh.close();
  } catch {
    // Some file systems cannot open or sync directories; the rename itself already happened.
  }
}

/** Gives the temporary file the replaced file's mode, and its owner when that differs and the process may (root). */
async function keepOwnerAndMode(fh: fsp.FileHandle, existing: { mode: number; uid: number; gid: number }): Promise<void> {
  await fh.chmod(existing.mode);
  const st = await fh.stat();
  if (st.uid !== existing.uid || st.gid !== existing.gid) {
    // Only root may give a file away; anyone else gets a file of their own, as with `cp`.
    await fh.chown(existing.uid, existing.gid).catch(() => undefined);
  }
}

async function writeStdout(data: Uint8Array | AsyncIterable<Uint8Array> | Iterable<Uint8Array>, signal?: AbortSignal): Promise<void> {
  if (data instanceof Uint8Array) await writeToStdout(data);
  else
    for await (const chunk of data as AsyncIterable<Uint8Array>) {
      signal?.throwIfAborted();
      await writeToStdout(chunk);
    }
}

let stdoutIsFd: boolean | undefined;
let stdoutErrorsHandled = false;

/**
 * Writes all of `chunk` to the process's standard output, resolving once the operating system
 * has it, or rejecting with a `PROFKIT_E_IO` error (`detail.errno`: `ENOSPC`, `EPIPE`, `EIO`…).
 *
 * Node's `process.stdout` on a file or character device writes synchronously but ignores short
 * writes, so a full disk silently truncates the output; there the bytes go to fd 1 directly,
 * in a loop. On pipes, sockets and terminals `process.stdout` is used, with its callback; its
 * 'error' event, which would otherwise crash the process, is absorbed: the callback reports it.
 */
export function writeToStdout(chunk: Uint8Array | string): Promise<void> {
  const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
  if (stdoutIsFd === undefined) {
    try {
      const st = fstatSync(1);
      stdoutIsFd = st.isFile() || (st.isCharacterDevice() && !isatty(1));
    } catch {
      stdoutIsFd = false;
    }
  }
  if (stdoutIsFd) {
    try {
      for (let done = 0; done < bytes.length; ) done += writeSync(1, bytes, done, bytes.length - done);
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(stdoutError(e));
    }
  }
  if (!stdoutErrorsHandled) {
    stdoutErrorsHandled = true;
    process.stdout.on('error', () => undefined);
  }
  return new Promise<void>((ok, fail) => {
    process.stdout.write(bytes, (err) => (err ? fail(stdoutError(err)) : ok()));
  });
}

/** A failed write to standard output as a `PROFKIT_E_IO` error naming the errno. */
export function stdoutError(e: unknown): ProfkitError {
  if (e instanceof ProfkitError) return e;
  const err = e as NodeJS.ErrnoException;
  return new ProfkitError(ErrorCodes.IO, `writing to standard output failed: ${errnoText(err)}`, { file: '-', errno: err.code, rule: 'output must be written completely' }, { cause: e });
}
