/** Small helpers shared by the text parsers: line splitting, Go number parsing, errors. */

import { ErrorCodes, ProfkitError, StringKeyedMap, type ErrorCode } from '@profkit/core';

/** Thrown by a parser that does not recognize its input (google/pprof's `errUnrecognized`). */
export class Unrecognized extends Error {
  constructor(readonly why: string) {
    super(why);
  }
}

/** Splits text into lines like Go's `bufio.ScanLines` (drops one trailing `\r`, no final empty line). */
export function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (l.endsWith('\r')) lines[i] = l.slice(0, -1);
  }
  return lines;
}

/** Go's `strings.TrimSpace` (ASCII and Unicode white space). */
export function trimSpace(s: string): string {
  return s.trim();
}

export function isSpaceOrComment(line: string): boolean {
  const t = line.trim();
  return t.length === 0 || t[0] === '#';
}

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;
const UINT64_MAX = (1n << 64n) - 1n;

/** Go `strconv.ParseInt(s, 10, 64)`; undefined on syntax error or overflow. */
export function parseInt10(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const v = BigInt(s);
  return v < INT64_MIN || v > INT64_MAX ? undefined : v;
}

/** Go `strconv.ParseInt(s, 0, 64)` (sign, then 0x / 0o / 0b / leading-0 octal / decimal). */
export function parseInt0(s: string): bigint | undefined {
  const m = /^([+-]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$/.exec(s);
  if (!m) return undefined;
  const body = m[2]!;
  let v: bigint;
  if (/^0[oO]/.test(body)) v = BigInt('0o' + body.slice(2));
  else if (/^0[0-7]+$/.test(body)) v = BigInt('0o' + body.slice(1));
  else v = BigInt(body.toLowerCase().startsWith('0b') ? '0b' + body.slice(2) : body);
  if (m[1] === '-') v = -v;
  return v < INT64_MIN || v > INT64_MAX ? undefined : v;
}

/** Go `strconv.ParseUint("0x...", 0, 64)` for strings matched by `0x[0-9a-f]+`. */
export function parseHexAddress(s: string): bigint | undefined {
  const v = BigInt(s);
  return v > UINT64_MAX ? undefined : v;
}

const hexNumberRE = /0x[0-9a-f]+/g;

/** google/pprof `parseHexAddresses`: every `0x…` token; too-large numbers are an error. */
export function parseHexAddresses(s: string, where: { line: number }): bigint[] {
  const out: bigint[] = [];
  for (const m of s.matchAll(hexNumberRE)) {
    const v = parseHexAddress(m[0]);
    if (v === undefined) {
      throw parseError(`failed to parse as hex 64-bit number: ${m[0]}`, { line: where.line, rule: 'addresses are 64-bit hex numbers' });
    }
    out.push(v);
  }
  return out;
}

/** The frames of a row, all decremented by one, interned through `table`. */
export function decrementedLocations(s: string, table: { getDecremented(tok: string, line?: number): import('./legacy-model.js').LLocation | undefined }, where: { line: number }): import('./legacy-model.js').LLocation[] {
  const out: import('./legacy-model.js').LLocation[] = [];
  for (const m of s.matchAll(hexNumberRE)) {
    const loc = table.getDecremented(m[0], where.line);
    if (!loc) {
      throw parseError(`failed to parse as hex 64-bit number: ${m[0]}`, { line: where.line, rule: 'addresses are 64-bit hex numbers' });
    }
    out.push(loc);
  }
  return out;
}

/** Distinct rows (stacks, value groups) a text parser remembers, bounding its caches. */
export const MAX_CACHED_ROWS = 65536;

/**
 * The stacks of a text profile's rows, interned by their address text: rows repeat stacks (a
 * heap profile has one row per allocation site and size), and a repeated stack then costs one
 * shared array rather than a new one (samples never change their `locs` in place).
 */
export class RowStacks {
  // Address texts of deep stacks are longer than V8 hashes (see core's StringKeyedMap).
  private readonly byText = new StringKeyedMap<import('./legacy-model.js').LLocation[]>();
  constructor(private readonly table: { getDecremented(tok: string, line?: number): import('./legacy-model.js').LLocation | undefined }) {}
  get(addresses: string, where: { line: number }): import('./legacy-model.js').LLocation[] {
    let locs = this.byText.get(addresses);
    if (locs === undefined) {
      locs = decrementedLocations(addresses, this.table, where);
      if (this.byText.size < MAX_CACHED_ROWS) this.byText.set(addresses, locs);
    }
    return locs;
  }
}

/** Refuses lines with a run of 64+ digits (no int64 or address has that many). Linear scan. */
export function hasLongDigitRun(line: string): boolean {
  let run = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (++run >= 64) return true;
    } else run = 0;
  }
  return false;
}

export function parseError(message: string, detail: { line?: number; offset?: number; rule: string; option?: string }, code: ErrorCode = ErrorCodes.PARSE): ProfkitError {
  return new ProfkitError(code, message, detail);
}

/** Go `int64(float64)` for the values legacy unsampling produces (truncation toward zero). */
export function truncToInt64(x: number): bigint {
  if (Number.isNaN(x)) return INT64_MIN;
  if (x >= 9.223372036854776e18) return INT64_MIN; // Go on amd64 yields the "indefinite" value
  if (x <= -9.223372036854776e18) return INT64_MIN;
  return BigInt(Math.trunc(x));
}
