/**
 * File input and output on Node: bounded reads of files or stdin, stream inputs of FIFOs and
 * devices, and atomic writes (temp file + fsync + rename) that never overwrite an input and never
 * leave half a file behind. Part of `@profkit/core/node`; the platform-neutral part is `../io.ts`.
 */

import { constants as fsConstants, createReadStream, fstatSync, promises as fsp, realpathSync, statSync, writeSync, type Stats } from 'node:fs';
import { isatty } from 'node:tty';
import { basename, dirname, join, resolve } from 'node:path';
import { ErrorCodes, ProfkitError } from '../errors.js';
import { gunzipChunks } from '../gzip.js';
import { DEFAULT_LIMITS, DEFAULT_STREAM_INPUT_BYTES, StreamInput, errnoText, ioError, isGzip, type Limits } from '../io.js';

/** Opens stdin (`-`) or a FIFO/device path as a stream input (read once, as it arrives). */
export function openStreamInput(path: string, limits: Limits = {}): StreamInput {
  const stream = path === '-' ? process.stdin : createReadStream(path);
  return new StreamInput(stream as AsyncIterable<Uint8Array>, path, limits);
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

/**
 * A streaming reader of a file's bytes (stdin for `-`), gunzipped on the fly (through the gzip seam)
 * when it is gzip. `gzip`: whether the file is gzip, when the caller knows (it read the head to
 * detect the format): then the file is not opened once more for its first two bytes.
 */
export async function* readChunks(path: string, options: { chunkSize?: number; gunzip?: boolean; gzip?: boolean } = {}): AsyncGenerator<Uint8Array> {
  const gzip = options.gzip ?? (path === '-' ? false : isGzip(await readHead(path, 2)));
  const source: NodeJS.ReadableStream = path === '-' ? process.stdin : createReadStream(path, { highWaterMark: options.chunkSize ?? 1 << 20 });
  const raw = streamChunks(source, path);
  yield* options.gunzip !== false && gzip ? gunzipChunks(raw, path) : raw;
}

/** A Node stream's chunks as `Uint8Array`s; a failed read is `PROFKIT_E_IO` (so inflating does not call it corrupt data). */
async function* streamChunks(stream: NodeJS.ReadableStream, path: string): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) yield new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  } catch (e) {
    throw ioError(e, path, 'reading');
  }
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
  return r instanceof ProfkitError ? r : new ProfkitError(ErrorCodes.ABORTED, 'the write was aborted');
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
