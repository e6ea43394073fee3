/**
 * The lines of `perf script` text, one function per kind. perf prints (tools/perf/builtin-script.c
 * and util/evsel_fprintf.c):
 *
 *   comm pid/tid [cpu] secs.usecs: period event: [trailer]      an event (sample) line
 *   \t      addr sym+off (dso)                                  a call-chain frame, innermost first
 *   \t      addr sym+off (inlined)                              a frame inlined into the next one
 *     file.c:12 [(inlined)]                                     the frame's source line (-F +srcline)
 *   (blank line)                                                end of the sample
 *
 * Every field but the event is optional (`-F` chooses them); comm may contain spaces; one number
 * before the time is the tid (perf's default), `pid/tid` both. Lines are split into tokens rather
 * than matched by one regular expression: patterns over a whole line backtrack badly on long
 * runs of digits or spaces (see core's known-formats.ts).
 */

export interface EventLine {
  comm: string;
  pid?: number;
  tid?: number;
  cpu?: number;
  /** `secs.frac` as nanoseconds (perf prints microseconds, or nanoseconds with `--ns`). */
  timeNs?: bigint;
  period?: bigint;
  /** The event name without its final colon: `cycles`, `cpu-clock:u`, `sched:sched_switch`. */
  event: string;
  /** Text after the event (tracepoint fields, or `addr sym (dso)` when there is no call graph). */
  trailer: string;
  /** Set when the period or the seconds have more digits than int64 holds (they are then not converted). */
  oversized?: string;
}

export interface FrameLine {
  address: bigint;
  /** Symbol without its `+0x…` offset; `[unknown]` when perf could not name it. */
  symbol: string;
  /** The DSO between the last parentheses: a path, `[kernel.kallsyms]`, `[unknown]`; '' when absent. */
  dso: string;
  /** perf printed `(inlined)` instead of a DSO: the frame is inlined into the next one. */
  inlined: boolean;
}

export interface SrcLine {
  file: string;
  line: number;
}

const TIME = /^(\d+)\.(\d+):$/;
const DIGITS = /^\d+$/;
const PID_TID = /^(\d+)(?:\/(\d+))?$/;
const CPU = /^\[(\d+)\]$/;
const HEX = /^[0-9a-fA-F]+$/;
const SYMBOL_OFFSET = /\+0x[0-9a-fA-F]+$/;
/** Largest pid/tid/cpu accepted as a number (they are 32-bit in the kernel). */
const MAX_ID = 2 ** 32 - 1;
/** Digits of the largest int64 (9223372036854775807); longer numbers are refused before BigInt, which is slow on millions of digits. */
const INT64_DIGITS = 19;

/** Digits of a number without its leading zeros. */
function significantDigits(digits: string): number {
  let i = 0;
  while (i < digits.length - 1 && digits.charCodeAt(i) === 48 /* 0 */) i++;
  return digits.length - i;
}

function isSpace(c: number): boolean {
  return c === 32 || c === 9;
}

/** The tokens of a line and where each starts (to cut the comm and the trailer out of the text). */
function tokenize(line: string): { tokens: string[]; starts: number[] } {
  const tokens: string[] = [];
  const starts: number[] = [];
  let i = 0;
  const n = line.length;
  while (i < n) {
    while (i < n && isSpace(line.charCodeAt(i))) i++;
    if (i >= n) break;
    const s = i;
    while (i < n && !isSpace(line.charCodeAt(i))) i++;
    tokens.push(line.slice(s, i));
    starts.push(s);
  }
  return { tokens, starts };
}

function smallInt(text: string): number | undefined {
  const v = Number(text);
  return Number.isSafeInteger(v) && v <= MAX_ID ? v : undefined;
}

/** `secs.frac:` as nanoseconds (the fraction has 6 digits, 9 with `--ns`; more are cut). */
function timeNanos(secs: string, frac: string): bigint {
  return BigInt(secs) * 1_000_000_000n + BigInt((frac + '000000000').slice(0, 9));
}

/**
 * Parses an event line (not indented, not a `#` comment); undefined when the line is not one.
 * The time token anchors it when present; without a time (`-F comm,tid,event`), the first number
 * after the comm is the pid/tid, as FlameGraph's stackcollapse-perf.pl reads it.
 */
export function parseEventLine(line: string): EventLine | undefined {
  if (line.length === 0 || isSpace(line.charCodeAt(0))) return undefined;
  const { tokens, starts } = tokenize(line);
  let k = tokens.findIndex((t) => TIME.test(t));
  let at: number; // first token after the comm/pid/cpu/time fields
  let pidAt: number;
  let timeNs: bigint | undefined;
  let cpu: number | undefined;
  let oversized: string | undefined;
  if (k >= 0) {
    const m = TIME.exec(tokens[k]!)!;
    if (significantDigits(m[1]!) > INT64_DIGITS) oversized = `a time of ${m[1]!.length} digits`;
    else timeNs = timeNanos(m[1]!, m[2]!);
    at = k + 1;
    pidAt = k - 1;
    if (pidAt >= 0 && CPU.test(tokens[pidAt]!)) {
      cpu = smallInt(CPU.exec(tokens[pidAt]!)![1]!);
      pidAt--;
    }
    if (pidAt >= 0 && !PID_TID.test(tokens[pidAt]!)) pidAt = -1;
  } else {
    pidAt = tokens.findIndex((t, i) => i > 0 && PID_TID.test(t));
    if (pidAt < 0) return undefined;
    at = pidAt + 1;
    if (at < tokens.length && CPU.test(tokens[at]!)) {
      cpu = smallInt(CPU.exec(tokens[at]!)![1]!);
      at++;
    }
    k = at - 1;
  }
  let period: bigint | undefined;
  if (at < tokens.length && DIGITS.test(tokens[at]!)) {
    if (significantDigits(tokens[at]!) > INT64_DIGITS) oversized ??= `a period of ${tokens[at]!.length} digits`;
    else period = BigInt(tokens[at]!);
    at++;
  }
  const eventToken = tokens[at];
  if (eventToken === undefined || eventToken.length < 2 || !eventToken.endsWith(':')) return undefined;
  // The comm is the text before the pid (or before the first field, when there is no pid).
  const commEnd = pidAt >= 0 ? pidAt : Math.max(0, k - (cpu === undefined ? 0 : 1));
  if (commEnd === 0) return undefined;
  const comm = line.slice(0, starts[commEnd - 1]! + tokens[commEnd - 1]!.length);
  const out: EventLine = { comm, event: eventToken.slice(0, -1), trailer: at + 1 < tokens.length ? line.slice(starts[at + 1]!) : '' };
  if (pidAt >= 0) {
    const m = PID_TID.exec(tokens[pidAt]!)!;
    if (m[2] !== undefined) {
      out.pid = smallInt(m[1]!);
      out.tid = smallInt(m[2]);
    } else {
      out.tid = smallInt(m[1]!);
    }
  }
  if (cpu !== undefined) out.cpu = cpu;
  if (timeNs !== undefined) out.timeNs = timeNs;
  if (period !== undefined) out.period = period;
  if (oversized !== undefined) out.oversized = oversized;
  return out;
}

/**
 * Parses a frame `addr sym+off (dso)` (leading white space already allowed); undefined when the
 * text does not start with a hex address and a space. Symbols may contain parentheses
 * (`foo(int) const`), so the DSO is the text in the LAST ` (…)` of the line.
 */
export function parseFrame(text: string): FrameLine | undefined {
  const t = text.trim();
  let sp = 0;
  while (sp < t.length && !isSpace(t.charCodeAt(sp))) sp++;
  if (sp === 0 || sp >= t.length || sp > 16 || !HEX.test(t.slice(0, sp))) return undefined;
  const address = BigInt('0x' + t.slice(0, sp));
  const rest = t.slice(sp).trimStart();
  let symbolText = rest;
  let dso = '';
  const open = rest.endsWith(')') ? dsoOpen(rest) : -1;
  if (open >= 0) {
    symbolText = rest.slice(0, open).trimEnd();
    dso = rest.slice(open + 2, -1);
  } else if (rest.startsWith('(') && rest.endsWith(')')) {
    // `addr (dso)`: -F ip,dso without sym.
    symbolText = '';
    dso = rest.slice(1, -1);
  }
  const inlined = dso === 'inlined';
  const symbol = symbolText.replace(SYMBOL_OFFSET, '');
  return { address, symbol: symbol === '' ? '[unknown]' : symbol, dso: inlined ? '' : dso, inlined };
}

/**
 * Where the DSO's ` (` starts in text ending with `)`: the parenthesis matching the last one,
 * so that a DSO path with parentheses stays whole; -1 when there is none.
 */
function dsoOpen(text: string): number {
  let depth = 0;
  for (let i = text.length - 1; i > 0; i--) {
    const c = text.charCodeAt(i);
    if (c === 41 /* ) */) depth++;
    else if (c === 40 /* ( */ && --depth === 0) return isSpace(text.charCodeAt(i - 1)) ? i - 1 : text.lastIndexOf(' (');
  }
  return text.lastIndexOf(' (');
}

/**
 * Parses a `-F +srcline` line under a frame: `file.c:12`, `file.c:12 (inlined)`. perf prints
 * `??:0` or `:0` when it has no line, and `dso[offset]` when it has no debug information: those
 * give undefined (the frame keeps no file or line).
 */
export function parseSrcLine(text: string): SrcLine | undefined {
  let t = text.trim();
  if (t.endsWith(' (inlined)')) t = t.slice(0, -' (inlined)'.length).trimEnd();
  const colon = t.lastIndexOf(':');
  if (colon <= 0) return undefined;
  const file = t.slice(0, colon);
  const lineText = t.slice(colon + 1);
  if (!DIGITS.test(lineText) || file === '??') return undefined;
  const line = Number(lineText);
  if (!Number.isSafeInteger(line) || line <= 0 || line > MAX_ID) return undefined;
  return { file, line };
}
