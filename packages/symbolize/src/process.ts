/**
 * A long-running child process spoken to line by line (llvm-symbolizer, addr2line): requests are
 * written to its stdin, replies read from its stdout as lines. Requests are pipelined (a whole
 * batch is written while replies are read), each wait has an inactivity timeout, stderr is kept
 * (bounded) for messages, and `close()` always ends the process.
 */

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { ErrorCodes, ProfkitError } from '@profkit/core/node';

/** Longest reply line accepted (bounded memory on a misbehaving tool). */
const MAX_LINE = 16 << 20;
const MAX_STDERR = 8192;

/**
 * The longest delay Node's `setTimeout` honours (2^31 - 1 ms, about 24.8 days): a longer one fires
 * after 1 ms with a TimeoutOverflowWarning, so a huge `timeoutMs` (or Infinity, meaning "never")
 * would time out at once. Every timer of this package waits `timerDelayMs(timeoutMs)`.
 */
export const MAX_TIMER_DELAY_MS = 0x7fff_ffff;

/** `timeoutMs` as a delay `setTimeout` keeps: capped at `MAX_TIMER_DELAY_MS`. */
export function timerDelayMs(timeoutMs: number): number {
  return Math.min(timeoutMs, MAX_TIMER_DELAY_MS);
}

export interface LineProcessOptions {
  /** Milliseconds without any output while a reply is awaited before the process is killed. */
  timeoutMs: number;
  signal?: AbortSignal;
}

export class LineProcess {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly lines: string[] = [];
  private head = 0;
  private partial = '';
  private stderr = '';
  private exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private failure: ProfkitError | undefined;
  private wake: (() => void) | undefined;
  private readonly description: string;
  private readonly onAbort = () => this.fail(new ProfkitError(ErrorCodes.TIMEOUT, `${this.description}: aborted`, { rule: 'aborted by signal' }));

  constructor(
    readonly command: string,
    readonly args: string[],
    private readonly options: LineProcessOptions,
  ) {
    this.description = `${command} ${args.join(' ')}`;
    this.child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' } });
    this.child.stdout.setEncoding('utf8');
    this.child.stderr.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => this.onData(chunk));
    this.child.stderr.on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-MAX_STDERR);
    });
    this.child.on('error', (e: NodeJS.ErrnoException) =>
      this.fail(new ProfkitError('PROFKIT_E_SYMBOLIZE_TOOL', `cannot run ${command}: ${e.code === 'ENOENT' ? 'not found' : e.message}`, { tool: command, rule: 'tool must be runnable' })),
    );
    this.child.on('exit', (code, signal) => {
      this.exited = { code, signal };
      this.notify();
    });
    // A tool that exits early closes its stdin: ignore EPIPE here, the exit is reported instead.
    this.child.stdin.on('error', () => undefined);
    options.signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  private onData(chunk: string): void {
    const all = this.partial + chunk;
    let start = 0;
    let nl: number;
    while ((nl = all.indexOf('\n', start)) >= 0) {
      this.lines.push(all.slice(start, all.charCodeAt(nl - 1) === 13 && nl > start ? nl - 1 : nl));
      start = nl + 1;
    }
    let text = all.slice(start);
    if (text.length > MAX_LINE) {
      this.fail(new ProfkitError(ErrorCodes.LIMIT, `${this.command} wrote a line longer than ${MAX_LINE} bytes`, { tool: this.command, rule: 'reply line length' }));
      text = '';
    }
    this.partial = text;
    this.notify();
  }

  private notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  private fail(e: ProfkitError): void {
    if (!this.failure) this.failure = e;
    this.kill();
    this.notify();
  }

  /** Writes text to the process's stdin (respecting back-pressure). */
  async write(text: string): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.exited) throw this.exitError();
    if (!this.child.stdin.write(text)) {
      await new Promise<void>((ok) => {
        const done = () => {
          this.child.stdin.off('drain', done);
          this.child.off('exit', done);
          ok();
        };
        this.child.stdin.once('drain', done);
        this.child.once('exit', done);
      });
    }
  }

  private exitError(): ProfkitError {
    const how = this.exited?.signal ? `was killed by ${this.exited.signal}` : `exited with status ${this.exited?.code}`;
    const err = this.stderr.trim();
    return new ProfkitError('PROFKIT_E_SYMBOLIZE_TOOL', `${this.description} ${how}${err ? `: ${err.split('\n').slice(-3).join(' | ')}` : ''}`, {
      tool: this.command,
      rule: 'tool must keep running while answering',
    });
  }

  /** The next reply line; waits (with the inactivity timeout) until one arrives. */
  async readLine(): Promise<string> {
    for (;;) {
      if (this.head < this.lines.length) {
        const l = this.lines[this.head++]!;
        if (this.head > 4096 && this.head * 2 > this.lines.length) {
          this.lines.splice(0, this.head);
          this.head = 0;
        }
        return l;
      }
      if (this.failure) throw this.failure;
      if (this.exited) throw this.exitError();
      await new Promise<void>((ok) => {
        const timer = setTimeout(() => {
          this.fail(new ProfkitError(ErrorCodes.TIMEOUT, `${this.description} did not answer within ${this.options.timeoutMs} ms`, { tool: this.command, option: 'timeoutMs', rule: 'tool reply timeout' }));
        }, timerDelayMs(this.options.timeoutMs));
        this.wake = () => {
          clearTimeout(timer);
          ok();
        };
      });
    }
  }

  private kill(): void {
    if (!this.exited && this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }

  /** Closes stdin and waits (bounded) for the process to end; kills it if it does not. */
  async close(): Promise<void> {
    this.options.signal?.removeEventListener('abort', this.onAbort);
    if (this.exited || this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.stdin.end();
    await new Promise<void>((ok) => {
      const timer = setTimeout(() => {
        this.kill();
      }, 2000);
      this.child.once('exit', () => {
        clearTimeout(timer);
        ok();
      });
      if (this.exited) {
        clearTimeout(timer);
        ok();
      }
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }
}

/**
 * Runs a command to completion, streaming its stdout lines to `onLine`; bounded by a timeout.
 * Used for `nm` and `c++filt` (batch tools).
 */
export function runLines(command: string, args: string[], input: string | undefined, onLine: (line: string) => void, options: LineProcessOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' } });
    let partial = '';
    let stderr = '';
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (e?: ProfkitError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', abort);
      if (e) {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        reject(e);
      } else resolve();
    };
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => finish(new ProfkitError(ErrorCodes.TIMEOUT, `${command} ${args.join(' ')} produced no output for ${options.timeoutMs} ms`, { tool: command, option: 'timeoutMs', rule: 'tool timeout' })), timerDelayMs(options.timeoutMs));
    };
    const abort = () => finish(new ProfkitError(ErrorCodes.TIMEOUT, `${command}: aborted`, { rule: 'aborted by signal' }));
    options.signal?.addEventListener('abort', abort, { once: true });
    arm();
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      arm();
      const all = partial + chunk;
      let start = 0;
      let nl: number;
      while ((nl = all.indexOf('\n', start)) >= 0) {
        try {
          onLine(all.slice(start, all.charCodeAt(nl - 1) === 13 && nl > start ? nl - 1 : nl));
        } catch (e) {
          finish(e instanceof ProfkitError ? e : new ProfkitError('PROFKIT_E_SYMBOLIZE_TOOL', `${command}: ${(e as Error).message}`, { tool: command }));
          return;
        }
        start = nl + 1;
      }
      const text = all.slice(start);
      if (text.length > MAX_LINE) finish(new ProfkitError(ErrorCodes.LIMIT, `${command} wrote a line longer than ${MAX_LINE} bytes`, { tool: command, rule: 'line length' }));
      partial = text;
    });
    child.stderr.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-MAX_STDERR);
    });
    child.on('error', (e: NodeJS.ErrnoException) =>
      finish(new ProfkitError('PROFKIT_E_SYMBOLIZE_TOOL', `cannot run ${command}: ${e.code === 'ENOENT' ? 'not found' : e.message}`, { tool: command, rule: 'tool must be runnable' })),
    );
    child.on('close', (code, signal) => {
      if (partial) {
        try {
          onLine(partial);
        } catch {
          // ignore a malformed unterminated last line
        }
      }
      if (code === 0) finish();
      else
        finish(
          new ProfkitError('PROFKIT_E_SYMBOLIZE_TOOL', `${command} ${args.join(' ')} ${signal ? `was killed by ${signal}` : `exited with status ${code}`}${stderr.trim() ? `: ${stderr.trim().split('\n').slice(-3).join(' | ')}` : ''}`, {
            tool: command,
            rule: 'tool must succeed',
          }),
        );
    });
    child.stdin.on('error', () => undefined);
    if (input !== undefined) child.stdin.end(input);
    else child.stdin.end();
  });
}
