/**
 * Input shared by the registry and adapters, on every platform: limits, gzip detection and
 * bounded inflation (through the gzip seam, `gzip.ts`), stream inputs read once as they arrive,
 * and I/O errors. Files, stdin and atomic writes are Node's: `node/io.ts` (`@profkit/core/node`).
 */

import { ErrorCodes, ProfkitError } from './errors.js';
import { concatBytes, type Limits } from './gzip-shared.js';

export { DEFAULT_LIMITS, concatBytes, gzipAnnouncedSize, type Limits } from './gzip-shared.js';
export { gunzipBounded, gunzipHead } from './gzip.js';

export function isGzip(bytes: Uint8Array): boolean {
  return bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
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
    return concatBytes(this.kept, Math.min(n, this.read));
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
    return concatBytes(this.kept, this.read);
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

/**
 * The error of a Node-only feature (a file, a server, a socket) called where Node is not (a
 * browser bundle resolves such modules to stubs through the packages' `imports` maps).
 */
export function nodeOnlyError(feature: string): ProfkitError {
  return new ProfkitError(ErrorCodes.UNSUPPORTED, `${feature} needs Node: it uses files, sockets or servers (see the package's /node entry)`, { rule: 'Node-only feature' });
}

/** What a failed system call leaves on its error (Node's `ErrnoException`, by shape). */
export interface SystemError {
  code?: string;
  message: string;
}

/** A failed read or write as a `PROFKIT_E_IO` error naming the errno (`detail.errno`). */
export function ioError(e: unknown, file: string, doing: string): ProfkitError {
  const err = e as SystemError;
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

export function errnoText(err: SystemError): string {
  return (err.code !== undefined ? ERRNO_TEXT[err.code] : undefined) ?? err.message;
}

