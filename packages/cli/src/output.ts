/**
 * Output helpers: versioned JSON documents, aligned human tables, warnings, the one-line error
 * format, and the TTY-only progress bar on stderr.
 */

import { isProfkitError, type ProfkitError, type Warning } from '@profkit/core/node';

/** JSON with bigint as decimal strings and typed arrays as arrays. */
export function toJson(value: unknown, indent = 2): string {
  return JSON.stringify(
    value,
    (_k, v: unknown) => {
      if (typeof v === 'bigint') return v.toString();
      if (ArrayBuffer.isView(v) && !(v instanceof DataView)) return Array.from(v as unknown as ArrayLike<number | bigint>, (x) => (typeof x === 'bigint' ? x.toString() : x));
      return v;
    },
    indent,
  );
}

export interface Output {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  json: boolean;
  quiet: boolean;
  verbose: boolean;
  /** Writes a line to stdout. */
  line(text?: string): void;
  /** Writes a JSON document `{ schema: "profkit.<name>/1", ...body }` to stdout. */
  document(name: string, body: Record<string, unknown>): void;
  /** Prints reader/writer warnings to stderr (unless --quiet). */
  warnings(ws: Warning[]): void;
  /** Prints a note to stderr (unless --quiet or --json). */
  note(text: string): void;
  progress(label: string, total?: number): { update(done: number, total?: number): void; done(): void };
}

export function createOutput(o: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream; json: boolean; quiet: boolean; verbose: boolean }): Output {
  return {
    ...o,
    line(text = '') {
      o.stdout.write(text + '\n');
    },
    document(name, body) {
      o.stdout.write(toJson({ schema: `profkit.${name}/1`, ...body }) + '\n');
    },
    warnings(ws) {
      if (o.quiet) return;
      for (const w of ws) {
        const file = w.detail?.file;
        const where = file !== undefined ? `${file}${w.detail?.line !== undefined ? `:${w.detail.line}` : w.detail?.offset !== undefined ? `@${w.detail.offset}` : ''}: ` : '';
        o.stderr.write(`profkit: warning: ${where}${w.message} [${w.code}]\n`);
      }
    },
    note(text) {
      if (!o.quiet && !o.json) o.stderr.write(`profkit: ${text}\n`);
    },
    progress(label, total) {
      const tty = (o.stderr as NodeJS.WriteStream).isTTY === true;
      if (!tty || o.quiet || o.json) return { update() {}, done() {} };
      return progressBar(o.stderr as NodeJS.WriteStream, label, total);
    },
  };
}

function humanBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}

/** A single-line progress bar redrawn at most 10 times a second. */
function progressBar(stream: NodeJS.WriteStream, label: string, initialTotal?: number) {
  let total = initialTotal;
  let last = 0;
  let drawn = false;
  const width = 24;
  const draw = (done: number) => {
    const cols = stream.columns ?? 80;
    let text: string;
    if (total && total > 0) {
      const frac = Math.min(1, done / total);
      const filled = Math.round(frac * width);
      text = `${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${(frac * 100).toFixed(0)}% ${humanBytes(done)}`;
    } else {
      text = `${label} ${humanBytes(done)}`;
    }
    stream.write('\r' + text.slice(0, cols - 1) + '\x1b[K');
    drawn = true;
  };
  return {
    update(done: number, t?: number) {
      if (t !== undefined) total = t;
      const now = Date.now();
      if (now - last < 100) return;
      last = now;
      draw(done);
    },
    done() {
      if (drawn) stream.write('\r\x1b[K');
    },
  };
}

/** Aligned columns for human output. */
export function table(rows: string[][], indent = ''): string[] {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return rows.map((r) => indent + r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd());
}

/** The one-line error: `profkit: <file>:<line>: <message> [PROFKIT_E_…]`, plus detail with --verbose. */
export function formatError(e: unknown, verbose: boolean): string {
  if (isProfkitError(e)) {
    const err = e as ProfkitError;
    let s = `profkit: ${err.describe()} [${err.code}]\n`;
    if (verbose) {
      for (const [k, v] of Object.entries(err.detail ?? {})) {
        if (v === undefined || k === 'file' || k === 'line' || k === 'offset') continue;
        const text = typeof v === 'string' ? v : toJson(v, 0);
        s += `  ${k}: ${text.length > 1000 ? `${text.slice(0, 1000)}… (${text.length} characters)` : text}\n`;
      }
      let cause = (err as Error).cause;
      while (cause) {
        s += `  caused by: ${cause instanceof Error ? (cause.stack ?? cause.message) : String(cause)}\n`;
        cause = cause instanceof Error ? cause.cause : undefined;
      }
      if (err.stack) s += `  stack: ${err.stack.split('\n').slice(1).join('\n  ').trim()}\n`;
    }
    return s;
  }
  const err = e instanceof Error ? e : new Error(String(e));
  let s = `profkit: internal error: ${err.message} (this is a bug; rerun with --verbose and report it) [PROFKIT_E_INTERNAL]\n`;
  if (verbose && err.stack) s += `  ${err.stack}\n`;
  return s;
}

/** A duration in nanoseconds for humans. */
export function formatNanos(ns: bigint): string {
  const n = Number(ns);
  if (n >= 1e9) return `${(n / 1e9).toFixed(3)} s`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(3)} ms`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(3)} µs`;
  return `${n} ns`;
}

/** Nanoseconds since the epoch as an ISO date (or undefined when out of range). */
export function isoFromNanos(ns: bigint): string | undefined {
  const ms = Number(ns / 1_000_000n);
  const d = new Date(ms);
  return Number.isFinite(d.getTime()) ? d.toISOString() : undefined;
}
