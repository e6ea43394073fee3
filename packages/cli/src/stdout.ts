/**
 * The one standard output every command writes to (`ctx.stdout`, `ctx.out.line`, help, --json
 * documents). A write that fails — a full disk (ENOSPC), an I/O error (EIO), a reader that closed
 * the pipe (EPIPE) — must never crash the process with a stack trace, nor be lost while profkit
 * exits 0: each write waits for its callback, the first failure is kept as a `PROFKIT_E_IO`
 * error, every later `write()` throws it (so a command stops producing output nobody receives),
 * and `flush()`, awaited by `main` before it returns an exit code, throws it too.
 */

import { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { ErrorCodes, isProfkitError, stdoutError, writeToStdout, type ProfkitError } from '@profkit/core/node';

export class CommandStdout extends Writable {
  /** The first failed write, as the error the command ends with. */
  failure: ProfkitError | undefined;

  /**
   * @param target where the bytes go: a stream given to `main` (tests, embedding), or the
   *   process's stdout through core's `writeToStdout` (which handles short writes on files).
   * @param onFailure called once with the first failure (`main` aborts the command's signal).
   */
  constructor(
    private readonly target: NodeJS.WritableStream | undefined,
    private readonly onFailure: (e: ProfkitError) => void = () => undefined,
  ) {
    super();
    // Failures are reported by write() and flush(); the 'error' event must not crash the process.
    this.on('error', () => undefined);
  }

  /** Whether the target is a terminal (commands may format differently for one). */
  get isTTY(): boolean {
    return ((this.target ?? process.stdout) as NodeJS.WriteStream).isTTY === true;
  }

  /** The terminal's width, when the target is one. */
  get columns(): number | undefined {
    return ((this.target ?? process.stdout) as NodeJS.WriteStream).columns;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    const written = this.target ? writeTo(this.target, chunk) : writeToStdout(chunk);
    written.then(
      () => callback(),
      (e: unknown) => {
        if (!this.failure) {
          this.failure = stdoutError(e);
          this.onFailure(this.failure);
        }
        callback(this.failure);
      },
    );
  }

  override write(chunk: unknown, encoding?: unknown, callback?: unknown): boolean {
    if (this.failure) throw this.failure;
    return (super.write as (...args: unknown[]) => boolean)(chunk, encoding, callback);
  }

  /** Waits until everything written so far has reached the OS; throws the first failure. */
  async flush(): Promise<void> {
    if (!this.failure && !this.writableEnded) {
      this.end();
      await finished(this).catch(() => undefined);
    }
    if (this.failure) throw this.failure;
  }
}

function writeTo(stream: NodeJS.WritableStream, chunk: Buffer): Promise<void> {
  return new Promise((ok, fail) => {
    stream.write(chunk, (err) => (err ? fail(err) : ok()));
  });
}

/**
 * Whether `e` says that the reader of stdout went away (`profkit top x | head -1`). Like other
 * Unix tools, profkit then stops quietly: no message, exit 0. (C tools die of SIGPIPE, which the
 * shell shows as 141; Node ignores SIGPIPE, and the reader chose to stop reading.)
 */
export function isStdoutClosed(e: unknown): boolean {
  return isProfkitError(e) && e.code === ErrorCodes.IO && e.detail.file === '-' && e.detail.errno === 'EPIPE';
}
