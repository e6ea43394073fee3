/**
 * Output helpers: versioned JSON documents, aligned human tables, warnings, the one-line error
 * format, and the TTY-only progress bar on stderr.
 */

import { ReportTextBudget, isProfkitError, type ProfkitError, type ReportLimits, type Warning } from '@profkit/core/node';

/** JSON with bigint as decimal strings and typed arrays as arrays. */
export function toJson(value: unknown, indent = 2): string {
  return JSON.stringify(value, (_k, v: unknown) => jsonValue(v), indent);
}

/** What `toJson` makes of a value (its replacer): bigint as a decimal string, a typed array as an array. */
function jsonValue(v: unknown): unknown {
  if (typeof v === 'bigint') return v.toString();
  if (ArrayBuffer.isView(v) && !(v instanceof DataView)) return Array.from(v as unknown as ArrayLike<number | bigint>, (x) => (typeof x === 'bigint' ? x.toString() : x));
  return v;
}

/** UTF-16 code units of JSON text collected before they are written as one piece. */
const JSON_PIECE_UNITS = 64 * 1024;

/**
 * Writes `toJson(value, indent)` piece by piece (each about JSON_PIECE_UNITS code units) instead
 * of making it one string: a document near the longest string JavaScript makes (2^29 - 24 units,
 * ~512 MiB; a `--json` report holds its whole text, which escaping makes longer) failed with a
 * bare RangeError. Each piece is counted against `maxReportBytes` before it is written (a typed
 * `PROFKIT_E_LIMIT` error naming the option), so the text written, and the pieces buffered on
 * their way out, stay under the limit. Follows `JSON.stringify`: `toJSON`, the replacer, own
 * enumerable keys in order, `undefined`/functions left out of objects and `null` in arrays.
 */
export function writeJson(value: unknown, write: (piece: string) => void, options: { indent?: number; limits?: ReportLimits; pieceUnits?: number } = {}): void {
  const indent = ' '.repeat(Math.max(0, Math.min(10, options.indent ?? 2)));
  const pieceUnits = options.pieceUnits ?? JSON_PIECE_UNITS;
  const budget = new ReportTextBudget('--json document', options.limits, false);
  let parts: string[] = [];
  let units = 0;
  const flush = () => {
    if (units === 0) return;
    const piece = parts.join('');
    parts = [];
    units = 0;
    write(budget.take(piece));
  };
  const emit = (text: string) => {
    parts.push(text);
    units += text.length;
    if (units >= pieceUnits) flush();
  };
  const emitString = (text: string) => {
    if (text.length <= pieceUnits) return emit(JSON.stringify(text));
    // A long string is escaped a slice at a time, never between the halves of a surrogate pair
    // (JSON.stringify escapes a lone surrogate, so a split pair would be written as two escapes).
    emit('"');
    for (let at = 0; at < text.length; ) {
      let end = Math.min(text.length, at + pieceUnits);
      // Only a high surrogate followed by a low one is a pair (a lone high one is escaped alone).
      const last = text.charCodeAt(end - 1);
      const next = text.charCodeAt(end);
      if (last >= 0xd800 && last <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) end++;
      emit(JSON.stringify(text.slice(at, end)).slice(1, -1));
      at = end;
    }
    emit('"');
  };
  // JSON.stringify's SerializeJSONProperty: toJSON, the replacer, unwrapped primitive objects;
  // undefined when the value has no JSON form (undefined, a function, a symbol).
  const prepare = (key: string, raw: unknown): unknown => {
    let v = raw;
    if ((typeof v === 'object' && v !== null) || typeof v === 'bigint') {
      const toJSON = (v as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') v = toJSON.call(v, key);
    }
    v = jsonValue(v);
    if (v instanceof Number) return Number(v);
    if (v instanceof String) return String(v);
    if (v instanceof Boolean) return v.valueOf();
    if (v instanceof BigInt) return v.valueOf(); // JSON.stringify then throws its TypeError, as toJson does
    return v === null || typeof v === 'boolean' || typeof v === 'number' || typeof v === 'string' || typeof v === 'object' ? v : undefined;
  };
  const emitValue = (v: unknown, depth: number): void => {
    if (typeof v === 'string') return emitString(v);
    if (v === null || typeof v !== 'object') return emit(JSON.stringify(v));
    const inner = indent === '' ? '' : '\n' + indent.repeat(depth + 1);
    const outer = indent === '' ? '' : '\n' + indent.repeat(depth);
    if (Array.isArray(v)) {
      if (v.length === 0) return emit('[]');
      for (let i = 0; i < v.length; i++) {
        emit((i === 0 ? '[' : ',') + inner);
        const item = prepare(String(i), v[i]);
        if (item === undefined) emit('null');
        else emitValue(item, depth + 1);
      }
      return emit(outer + ']');
    }
    let first = true;
    for (const k of Object.keys(v)) {
      const item = prepare(k, (v as Record<string, unknown>)[k]);
      if (item === undefined) continue;
      emit((first ? '{' : ',') + inner + JSON.stringify(k) + (indent === '' ? ':' : ': '));
      emitValue(item, depth + 1);
      first = false;
    }
    emit(first ? '{}' : outer + '}');
  };
  const top = prepare('', value);
  if (top === undefined) return;
  emitValue(top, 0);
  flush();
}

export interface Output {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  json: boolean;
  quiet: boolean;
  verbose: boolean;
  /** Writes a line to stdout. */
  line(text?: string): void;
  /**
   * Writes a JSON document `{ schema: "profkit.<name>/1", ...body }` to stdout, piece by piece,
   * stopping at `maxReportBytes` (`writeJson`).
   */
  document(name: string, body: Record<string, unknown>): void;
  /** Prints reader/writer warnings to stderr (unless --quiet). */
  warnings(ws: Warning[]): void;
  /** Prints a note to stderr (unless --quiet or --json). */
  note(text: string): void;
  progress(label: string, total?: number): { update(done: number, total?: number): void; done(): void };
}

export function createOutput(o: {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  json: boolean;
  quiet: boolean;
  verbose: boolean;
  /** The command line's limits (`maxReportBytes` bounds a JSON document), read when a document is written. */
  limits?: () => ReportLimits;
}): Output {
  const { limits: _limits, ...fields } = o;
  return {
    ...fields,
    line(text = '') {
      o.stdout.write(text + '\n');
    },
    document(name, body) {
      writeJson({ schema: `profkit.${name}/1`, ...body }, (piece) => o.stdout.write(piece), { limits: o.limits?.() });
      o.stdout.write('\n');
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
