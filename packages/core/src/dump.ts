/**
 * `formatPprofDump`: google/pprof's `Profile.String()` debug dump, byte for byte — the golden
 * format of google/pprof's `profile/testdata/*.string` files.
 */

import type { Profile } from './model.js';
import { compareGoStrings } from './ops/internal.js';
import { ProfileIndex } from './views.js';
import type { ReportTextBudget } from './report-text.js';

const pad = (s: string, w: number) => s.padStart(w, ' ');

/** Go's `%#x` of an unsigned value. */
function hex(v: bigint): string {
  return '0x' + v.toString(16);
}

function fracDigits(n: bigint, digits: number): string {
  // n < 10^digits; trailing zeros removed, '' when 0.
  if (n === 0n) return '';
  return n.toString().padStart(digits, '0').replace(/0+$/, '');
}

/** Go's `time.Duration.String()`. */
export function goDurationString(d: bigint): string {
  if (d === 0n) return '0s';
  const neg = d < 0n;
  let u = neg ? -d : d;
  let out: string;
  if (u < 1_000_000_000n) {
    let unit: string;
    let digits: number;
    if (u < 1_000n) {
      unit = 'ns';
      digits = 0;
    } else if (u < 1_000_000n) {
      unit = '\u00b5s';
      digits = 3;
    } else {
      unit = 'ms';
      digits = 6;
    }
    const scale = 10n ** BigInt(digits);
    const frac = fracDigits(u % scale, digits);
    out = (u / scale).toString() + (frac ? '.' + frac : '') + unit;
  } else {
    const frac = fracDigits(u % 1_000_000_000n, 9);
    u /= 1_000_000_000n;
    out = (u % 60n).toString() + (frac ? '.' + frac : '') + 's';
    u /= 60n;
    if (u > 0n) {
      out = (u % 60n).toString() + 'm' + out;
      u /= 60n;
      if (u > 0n) out = u.toString() + 'h' + out;
    }
  }
  return neg ? '-' + out : out;
}

/** Go's `time.Unix(0, ns).String()` in UTC: `2006-01-02 15:04:05.999999999 +0000 UTC`. */
export function goTimeStringUTC(ns: bigint): string {
  let sec = ns / 1_000_000_000n;
  let nanos = ns % 1_000_000_000n;
  if (nanos < 0n) {
    nanos += 1_000_000_000n;
    sec -= 1n;
  }
  const d = new Date(Number(sec) * 1000);
  const y = d.getUTCFullYear();
  const year = y < 0 ? '-' + String(-y).padStart(4, '0') : String(y).padStart(4, '0');
  const two = (n: number) => String(n).padStart(2, '0');
  const frac = fracDigits(nanos, 9);
  return (
    `${year}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}` +
    (frac ? '.' + frac : '') +
    ' +0000 UTC'
  );
}

function sampleLabelLines(p: Profile, i: number, budget: ReportTextBudget | undefined): string[] {
  const offsets = p.samples['.label_offsets'];
  if (!offsets) return [];
  const t = p['.labels'];
  // The string values are printed whole: many labels can share one long value.
  let printed = 0;
  for (let j = offsets[i]!; j < offsets[i + 1]!; j++) printed += t.str[j]!.length;
  budget?.reserve(printed);
  const str = new Map<string, string[]>();
  const num = new Map<string, { v: bigint[]; u: string[]; anyUnit: boolean }>();
  for (let j = offsets[i]!; j < offsets[i + 1]!; j++) {
    const key = t.key[j]!;
    if (t.is_num[j]) {
      let e = num.get(key);
      if (!e) num.set(key, (e = { v: [], u: [], anyUnit: false }));
      e.v.push(t.num[j]!);
      e.u.push(t.num_unit[j]!);
      if (t.num_unit[j] !== '') e.anyUnit = true;
    } else {
      const e = str.get(key);
      if (e) e.push(t.str[j]!);
      else str.set(key, [t.str[j]!]);
    }
  }
  const header = ' '.repeat(16);
  const out: string[] = [];
  if (str.size > 0) {
    const ls = [...str.entries()].map(([k, v]) => `${k}:[${v.join(' ')}]`).sort(compareGoStrings);
    out.push(header + ls.join(' '));
  }
  if (num.size > 0) {
    const ls = [...num.entries()]
      .map(([k, e]) => (e.anyUnit ? `${k}:[${e.v.map((v, x) => `${v} ${e.u[x]}`).join(' ')}]` : `${k}:[${e.v.join(' ')}]`))
      .sort(compareGoStrings);
    out.push(header + ls.join(' '));
  }
  return out;
}

export interface PprofDumpOptions {
  /**
   * Print `file:line:column` as current google/pprof does (default), or `file:line` as pprof
   * before `Line.Column` existed does (for example the pprof vendored in Go 1.19's `go tool pprof`).
   */
  columns?: boolean;
  /**
   * Print function names equal to this placeholder as empty (the model has no empty names: readers
   * such as the pprof adapter's read "" as `<?>`, as R's profile package does).
   */
  emptyNamePlaceholder?: string;
  /** Counts the text of a report made from the dump (`rawReport`): checked before a long line is made. */
  budget?: ReportTextBudget;
}

/**
 * The google/pprof `Profile.String()` dump of `p`, byte for byte, with one documented
 * difference: `Time:` is printed in UTC (Go prints the local time zone; both agree when
 * `TZ=UTC`). Numeric labels print with units (`key:[5 bytes]`) when any value of the key has a
 * unit, as the Go model does after decoding.
 */
export function formatPprofDump(p: Profile, options: PprofDumpOptions = {}): string {
  return [...pprofDumpText(p, options)].join('');
}

/**
 * The text of `formatPprofDump` in pieces (one line each, ending in `\n`),
 * made as iterated: a report writes it as it is made, and counts it (`maxReportBytes`).
 */
export function* pprofDumpText(p: Profile, options: PprofDumpOptions = {}): Generator<string> {
  for (const line of pprofDumpLines(p, options)) yield line + '\n';
}

function* pprofDumpLines(p: Profile, options: PprofDumpOptions): Generator<string> {
  const columns = options.columns ?? true;
  const shown = (name: string) => (name === options.emptyNamePlaceholder ? '' : name);
  const f = p['.profile'];
  for (const c of f.comments) yield 'Comment: ' + c;
  if (f.doc_url !== '') yield 'Doc: ' + f.doc_url;
  if (f.period_type) yield `PeriodType: ${f.period_type.type} ${f.period_type.unit}`;
  yield `Period: ${f.period}`;
  if (f.time_nanos !== 0n) yield 'Time: ' + goTimeStringUTC(f.time_nanos);
  if (f.duration_nanos !== 0n) yield 'Duration: ' + [...goDurationString(f.duration_nanos)].slice(0, 4).join('');
  yield 'Samples:';
  let sh = '';
  for (let t = 0; t < p.sample_types.type.length; t++) {
    const type = p.sample_types.type[t]!;
    sh += `${type}/${p.sample_types.unit[t]}${type === f.default_sample_type ? '[dflt]' : ''} `;
  }
  yield sh.trim();
  const cols = p.samples['.values'];
  const { offsets, location_id } = p.samples.locations;
  const n = p.samples.value.length;
  for (let i = 0; i < n; i++) {
    let sv = '';
    for (const c of cols) sv += ' ' + pad(String(c[i]!), 10);
    sv += ': ';
    for (let k = offsets[i]!; k < offsets[i + 1]!; k++) sv += `${location_id[k]} `;
    yield sv;
    for (const l of sampleLabelLines(p, i, options.budget)) yield l;
  }
  yield 'Locations';
  const index = new ProfileIndex(p);
  const l = p.locations;
  const fn = p.functions;
  const inl = p['.inline_lines'];
  const lineText = (functionId: number, line: number, column: number): string => {
    const r = index.functions.get(functionId);
    if (r < 0) return '??';
    const name = shown(fn.name[r]!);
    const systemName = shown(fn.system_name[r]!);
    let s = `${name} ${fn.filename[r]}:${line}${columns ? `:${column}` : ''} s=${fn.start_line[r]}`;
    if (name !== systemName) s += `(${systemName})`;
    return s;
  };
  for (let r = 0; r < l.location_id.length; r++) {
    let locStr = `${pad(String(l.location_id[r]), 6)}: ${hex(l['.address'][r]!)} `;
    if (l['.mapping_id'][r] !== 0) locStr += `M=${l['.mapping_id'][r]} `;
    if (l['.is_folded'][r]) locStr += '[F] ';
    const from = l['.inline_offsets'][r]!;
    const to = l['.inline_offsets'][r + 1]!;
    if (l.function_id[r] === 0 && from === to) yield locStr;
    // One line at a time: a location can hold many inline lines of one long name.
    if (l.function_id[r] !== 0) {
      yield locStr + lineText(l.function_id[r]!, l.line[r]!, l['.column'][r]!);
      locStr = ' '.repeat(13);
    }
    for (let j = from; j < to; j++) {
      yield locStr + lineText(inl.function_id[j]!, inl.line[j]!, inl.column[j]!);
      locStr = ' '.repeat(13);
    }
  }
  yield 'Mappings';
  const m = p['.mappings'];
  for (let r = 0; r < m.mapping_id.length; r++) {
    const bits =
      (m.has_functions[r] ? '[FN]' : '') + (m.has_filenames[r] ? '[FL]' : '') + (m.has_line_numbers[r] ? '[LN]' : '') + (m.has_inline_frames[r] ? '[IN]' : '');
    yield `${m.mapping_id[r]}: ${hex(m.memory_start[r]!)}/${hex(m.memory_limit[r]!)}/${hex(m.file_offset[r]!)} ${m.filename[r]} ${m.build_id[r]} ${bits}`;
  }
}
