/**
 * Shared machinery of the profile operations: a row-oriented view of locations that operations
 * may rewrite (`OpLocation`), and `Rebuilder`, which writes the result into a fresh profile
 * through `ProfileBuilder` (ids renumbered densely 1..n in first-use order, unreferenced rows
 * garbage-collected), carrying format extensions as documented in `docs/operations.md`.
 *
 * Not exported from the package entry: internal to `ops/`.
 */

import { ProfileBuilder, type LabelInput } from '../builder.js';
import { ErrorCodes, ProfkitError } from '../errors.js';
import { GrowableFloat64, GrowableUint32, takeRows } from '../columns.js';
import type { Column, FormatExtension, Profile, ProfileFacts, ValueType } from '../model.js';
import { ProfileIndex, labelsOf, sampleTypes, stackOf } from '../views.js';
import { StringKeys } from '../string-keys.js';
import { seededWord } from './stack-hash.js';

export const abs = (v: bigint): bigint => (v < 0n ? -v : v);

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

/**
 * `v` if it fits in int64, else a `PROFKIT_E_RANGE` error saying `what` overflowed. For values an
 * operation writes into a profile (sums of sample values, summed durations): the model's columns
 * and profile.proto hold int64, and Go's pprof silently wraps such sums (a heap profile's total
 * then shows as -8192PB). Reports sum in unbounded bigints instead and never need this.
 */
export function checkedInt64(v: bigint, what: string, rule = 'values written to a profile must fit in int64'): bigint {
  if (v >= INT64_MIN && v <= INT64_MAX) return v;
  throw new ProfkitError(ErrorCodes.RANGE, `${what} is ${v}, beyond int64 (${v > 0n ? INT64_MAX : INT64_MIN}): not written rather than wrapped`, { rule, value: String(v) });
}

/** The sample types as `type/unit`, for messages. */
export function sampleTypeNames(p: Profile): string[] {
  return p.sample_types.type.map((t, i) => `${t}/${p.sample_types.unit[i]}`);
}

const SURROGATE_OR_ABOVE = /[\uD800-\uFFFF]/;

/** Go string order (`<` on strings, `sort.Strings`): bytewise UTF-8, i.e. Unicode code point order. */
export function compareGoStrings(a: string, b: string): number {
  if (a === b) return 0;
  // UTF-16 order (native, fast on long equal prefixes) is code point order unless a surrogate
  // meets a unit above it (U+E000..U+FFFF): only strings holding such units are compared below.
  if (!SURROGATE_OR_ABOVE.test(a) || !SURROGATE_OR_ABOVE.test(b)) return a < b ? -1 : 1;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

/** Go `filepath.Clean` (slash-separated paths). */
export function cleanPath(p: string): string {
  if (p === '') return '.';
  const rooted = p.startsWith('/');
  const out: string[] = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else if (!rooted) out.push('..');
      continue;
    }
    out.push(part);
  }
  const res = (rooted ? '/' : '') + out.join('/');
  return res === '' ? '.' : res;
}

/** Go `filepath.Base`. */
export function baseName(p: string): string {
  if (p === '') return '.';
  const s = p.replace(/\/+$/, '');
  if (s === '') return '/';
  return s.slice(s.lastIndexOf('/') + 1);
}

/** One pprof `Line` of a location; `fn` is a row index of the source `functions` table. */
export interface OpLine {
  fn: number;
  line: number;
  column: number;
}

/** A location as operations see it: pprof's `Location`, lines innermost first. */
export interface OpLocation {
  address: bigint;
  /** Row index of the source `.mappings` table, -1 = none. */
  mapping: number;
  folded: boolean;
  lines: OpLine[];
}

/** Reads every location row of `p` as objects, for operations that rewrite them (lines whose function id is unknown are skipped). */
export function readLocations(p: Profile, index: ProfileIndex): OpLocation[] {
  const out: OpLocation[] = new Array(p.locations.location_id.length);
  const line: OpLine = { fn: -1, line: 0, column: 0 };
  for (let r = 0; r < out.length; r++) {
    const loc: OpLocation = { address: 0n, mapping: -1, folded: false, lines: [] };
    visitLocationLines(p, index, r, loc, line, (ln) => loc.lines.push({ fn: ln.fn, line: ln.line, column: ln.column }));
    out[r] = loc;
  }
  return out;
}

/**
 * Location row `r` of `p` as `readLocations` reads it, with no object per line: `loc` gets the
 * row's address, mapping and folded flag (its `lines` are left alone), then `visit` sees each line
 * innermost first in the one object `line`, overwritten for the next (a location can hold
 * millions of inline lines: read as objects, 56 bytes each).
 */
export function visitLocationLines(p: Profile, index: ProfileIndex, r: number, loc: OpLocation, line: OpLine, visit: (line: OpLine) => void): void {
  const l = p.locations;
  const inl = p['.inline_lines'];
  const mid = l['.mapping_id'][r]!;
  loc.address = l['.address'][r]!;
  loc.mapping = mid === 0 ? -1 : index.mappings.get(mid);
  loc.folded = l['.is_folded'][r] === 1;
  const each = (fn: number, lineNumber: number, column: number) => {
    if (fn < 0) return;
    line.fn = fn;
    line.line = lineNumber;
    line.column = column;
    visit(line);
  };
  if (l.function_id[r] !== 0) each(index.functions.get(l.function_id[r]!), l.line[r]!, l['.column'][r]!);
  for (let j = l['.inline_offsets'][r]!; j < l['.inline_offsets'][r + 1]!; j++) each(index.functions.get(inl.function_id[j]!), inl.line[j]!, inl.column[j]!);
}

/** Sample `i`'s stack as location row indices (unknown ids skipped), innermost first. */
export function stackRows(p: Profile, index: ProfileIndex, i: number): number[] {
  const ids = stackOf(p, i);
  const out: number[] = [];
  for (let k = 0; k < ids.length; k++) {
    const r = index.locations.get(ids[k]!);
    if (r >= 0) out.push(r);
  }
  return out;
}

/** A sample's labels in builder input form. */
export function labelInputs(p: Profile, i: number): LabelInput[] {
  const offsets = p.samples['.label_offsets'];
  if (!offsets || offsets[i + 1] === offsets[i]) return [];
  return labelsOf(p, i).map((l) =>
    l.str !== undefined ? { key: l.key, str: l.str } : l.unit !== undefined ? { key: l.key, num: l.num!, unit: l.unit } : { key: l.key, num: l.num! },
  );
}

/**
 * pprof's sample-key view of labels: string labels grouped by key (values in order) and numeric
 * labels grouped by key (value and unit in order), keys sorted. Label order across keys does not
 * matter, order within a key does. Keys and string values stand in by their `strings` keys (one
 * instance for all samples compared): a label can name a long string that every sample shares,
 * and a key holding its text would cost its length once per sample (8,000 labels of one 100 KB
 * value, a 148 KB profile, made an 800 MB key: "Invalid string length").
 */
export function labelKey(labels: LabelInput[], strings: StringKeys): string {
  if (labels.length === 0) return '';
  const str = new Map<string, string[]>();
  const num = new Map<string, string[]>();
  for (const l of labels) {
    const key = strings.of(l.key);
    if ('str' in l) {
      const v = str.get(key);
      if (v) v.push(strings.of(l.str));
      else str.set(key, [strings.of(l.str)]);
    } else {
      const s = String(l.num) + '\u0001' + strings.of(l.unit ?? '');
      const v = num.get(key);
      if (v) v.push(s);
      else num.set(key, [s]);
    }
  }
  const sorted = (m: Map<string, string[]>) => [...m.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return JSON.stringify([sorted(str), sorted(num)]);
}

const UINT64 = 64;

/** pprof Merge's mapping identity: size rounded up to 4 KiB, file offset, build id else file. */
export function mappingIdentity(p: Profile, row: number): string {
  const m = p['.mappings'];
  const start = m.memory_start[row]!;
  const limit = m.memory_limit[row]!;
  let size = BigInt.asUintN(UINT64, limit - start);
  size = BigInt.asUintN(UINT64, size + 0xfffn);
  size -= size % 0x1000n;
  const id = m.build_id[row] !== '' ? 'b' + m.build_id[row] : m.filename[row] !== '' ? 'f' + m.filename[row] : '';
  return `${size}\u0000${m.file_offset[row]}\u0000${id}`;
}

interface SourceState {
  p: Profile;
  index: ProfileIndex;
  /** The locations as the operation rewrote them, or undefined: the profile's own, read from its columns. */
  locs: OpLocation[] | undefined;
  /** New function id per source function row (0 = not yet interned). */
  fnIds: Uint32Array;
  /** New mapping id per source mapping row (0 = not yet). */
  mapIds: Uint32Array;
  /** Address shift per source mapping row (pprof rebasing onto a matched mapping). */
  mapShift: bigint[];
  /** New location id per source location row (0 = not yet). */
  locIds: Uint32Array;
}

export interface RebuilderOptions {
  sampleTypes: ValueType[];
  facts: ProfileFacts;
  /**
   * Identify mappings the way pprof Merge does (size/offset/build id or file) and rebase the
   * addresses of matched mappings; otherwise mappings are kept apart unless fully identical.
   */
  mergeMappings: boolean;
  /** Function attribute rewrite (aggregation). */
  rewriteFunction?: (p: Profile, row: number) => { name: string; systemName: string; filename: string; startLine: number };
  /** Mapping has_* bits rewrite (aggregation): bits ANDed with these. */
  mappingBitsMask?: { hasFunctions: boolean; hasFilenames: boolean; hasLineNumbers: boolean; hasInlineFrames: boolean };
}

/**
 * Writes the result of an operation: functions, mappings and locations are interned on first
 * use from (possibly rewritten) source rows, samples are appended by the operation.
 */
export class Rebuilder {
  readonly b: ProfileBuilder;
  private readonly mapByIdentity = new Map<string, { id: number; start: bigint }>();
  private readonly sources: SourceState[] = [];
  /** For each output sample: [source number, source row], or undefined once samples were combined. */
  private origin: { src: number; row: number }[] | undefined = [];
  /** Number of mappings written so far. */
  mappingsAdded = 0;
  /**
   * The lines of the location being interned (new function ids, lines, columns), innermost first:
   * reused for every location, so that copying one allocates nothing per line.
   */
  private readonly lineFunctions = new GrowableUint32();
  private readonly lineNumbers = new GrowableFloat64();
  private readonly lineColumns = new GrowableFloat64();
  /** A source location row read by `visitLocationLines` (its `lines` unused), and its line. */
  private readonly scratchLocation: OpLocation = { address: 0n, mapping: -1, folded: false, lines: [] };
  private readonly scratchLine: OpLine = { fn: -1, line: 0, column: 0 };

  constructor(private readonly options: RebuilderOptions) {
    this.b = new ProfileBuilder({ sampleTypes: options.sampleTypes, facts: options.facts });
  }

  /**
   * Registers a source profile; returns its number. `locs` are its locations as the operation
   * rewrote them (`readLocations`, changed); without them the profile's own are copied from its
   * columns, with no object per location or line (9M inline lines read as objects took 500 MB).
   */
  addSource(p: Profile, index: ProfileIndex, locs?: OpLocation[]): number {
    this.sources.push({
      p,
      index,
      locs,
      fnIds: new Uint32Array(p.functions.function_id.length),
      mapIds: new Uint32Array(p['.mappings'].mapping_id.length),
      mapShift: new Array<bigint>(p['.mappings'].mapping_id.length).fill(0n),
      locIds: new Uint32Array(p.locations.location_id.length),
    });
    return this.sources.length - 1;
  }

  mapping(src: number, row: number): number {
    const s = this.sources[src]!;
    if (s.mapIds[row] !== 0) return s.mapIds[row]!;
    const m = s.p['.mappings'];
    if (this.options.mergeMappings) {
      const key = mappingIdentity(s.p, row);
      const hit = this.mapByIdentity.get(key);
      if (hit) {
        s.mapIds[row] = hit.id;
        s.mapShift[row] = hit.start - m.memory_start[row]!;
        return hit.id;
      }
    }
    const mask = this.options.mappingBitsMask;
    const id = this.b.internMapping({
      memoryStart: m.memory_start[row]!,
      memoryLimit: m.memory_limit[row]!,
      fileOffset: m.file_offset[row]!,
      filename: m.filename[row]!,
      buildId: m.build_id[row]!,
      hasFunctions: m.has_functions[row] === 1 && (mask?.hasFunctions ?? true),
      hasFilenames: m.has_filenames[row] === 1 && (mask?.hasFilenames ?? true),
      hasLineNumbers: m.has_line_numbers[row] === 1 && (mask?.hasLineNumbers ?? true),
      hasInlineFrames: m.has_inline_frames[row] === 1 && (mask?.hasInlineFrames ?? true),
    });
    if (this.options.mergeMappings) this.mapByIdentity.set(mappingIdentity(s.p, row), { id, start: m.memory_start[row]! });
    if (id > this.mappingsAdded) this.mappingsAdded = id;
    s.mapIds[row] = id;
    return id;
  }

  private fn(s: SourceState, row: number): number {
    if (s.fnIds[row] !== 0) return s.fnIds[row]!;
    const f = s.p.functions;
    const rw = this.options.rewriteFunction;
    const attrs = rw
      ? rw(s.p, row)
      : { name: f.name[row]!, systemName: f.system_name[row]!, filename: f.filename[row]!, startLine: f.start_line[row]! };
    const id = this.b.internFunction({ name: attrs.name, systemName: attrs.systemName, filename: attrs.filename, startLine: attrs.startLine });
    s.fnIds[row] = id;
    return id;
  }

  /** New id of source location row `row` of source `src` (interned on first use). */
  location(src: number, row: number): number {
    const s = this.sources[src]!;
    if (s.locIds[row] !== 0) return s.locIds[row]!;
    this.lineFunctions.length = 0;
    this.lineNumbers.length = 0;
    this.lineColumns.length = 0;
    let id: number;
    if (s.locs) {
      const loc = s.locs[row]!;
      for (const ln of loc.lines) this.addLine(s, ln.fn, ln.line, ln.column);
      id = this.internLines(src, loc.mapping, loc.address, loc.folded);
    } else {
      const loc = this.scratchLocation;
      visitLocationLines(s.p, s.index, row, loc, this.scratchLine, (ln) => this.addLine(s, ln.fn, ln.line, ln.column));
      id = this.internLines(src, loc.mapping, loc.address, loc.folded);
    }
    s.locIds[row] = id;
    return id;
  }

  /** Appends a line of source function row `fn` (none when negative: an unknown id) to the location being interned. */
  private addLine(s: SourceState, fn: number, line: number, column: number): void {
    if (fn < 0) return;
    this.lineFunctions.push(this.fn(s, fn));
    this.lineNumbers.push(line);
    this.lineColumns.push(column);
  }

  /** Interns the location of the lines added, at `address` in source mapping row `mapping` (-1 = none). */
  private internLines(src: number, mapping: number, address: bigint, folded: boolean): number {
    let mappingId = 0;
    if (mapping >= 0) {
      mappingId = this.mapping(src, mapping);
      const shift = this.sources[src]!.mapShift[mapping]!;
      if (shift !== 0n) address = BigInt.asUintN(UINT64, address + shift);
    }
    const n = this.lineFunctions.length;
    const functionId = this.lineFunctions.view();
    const line = this.lineNumbers.view();
    const column = this.lineColumns.view();
    return this.b.internLocationColumns(
      { functionId: n > 0 ? functionId[0]! : 0, line: n > 0 ? line[0]! : 0, column: n > 0 ? column[0]! : 0, address, mappingId, isFolded: folded },
      { length: Math.max(0, n - 1), functionId: functionId.subarray(1), line: line.subarray(1), column: column.subarray(1) },
    );
  }

  /**
   * New ids of sample `i`'s stack in source `src` (unknown location ids skipped), written to
   * `buf` from index 0; returns how many were written.
   */
  sampleStack(src: number, i: number, buf: number[]): number {
    const s = this.sources[src]!;
    const { offsets, location_id } = s.p.samples.locations;
    let n = 0;
    for (let k = offsets[i]!; k < offsets[i + 1]!; k++) {
      const r = s.index.locations.get(location_id[k]!);
      if (r >= 0) buf[n++] = this.location(src, r);
    }
    return n;
  }

  /** New ids of a stack of source location rows. */
  stack(src: number, rows: ArrayLike<number>): number[] {
    const out = new Array<number>(rows.length);
    for (let k = 0; k < rows.length; k++) out[k] = this.location(src, rows[k]!);
    return out;
  }

  /** Appends a sample that comes from exactly one source sample. */
  addSample(src: number, row: number, stack: number[], values: ArrayLike<bigint>, labels: LabelInput[]): void {
    this.b.addSample(stack, values, labels);
    this.origin?.push({ src, row });
  }

  /** Appends a sample that combines several source samples (per-sample extensions are then dropped). */
  addCombinedSample(stack: ArrayLike<number>, values: ArrayLike<bigint>, labels: LabelInput[], src: number, row: number, combined: boolean): void {
    this.b.addSample(stack, values, labels);
    if (combined) this.origin = undefined;
    else this.origin?.push({ src, row });
  }

  /**
   * Finishes the profile. Format extensions come from source 0: facts and tables are kept; its
   * per-sample columns are carried (subset/reordered) when every output sample comes from
   * exactly one sample of source 0, and dropped otherwise.
   */
  build(): Profile {
    const out = this.b.build();
    const first = this.sources[0];
    const exts: Record<string, FormatExtension> = {};
    if (first) {
      const origin = this.origin && this.origin.every((o) => o.src === 0) ? this.origin.map((o) => o.row) : undefined;
      for (const [name, ext] of Object.entries(first.p['.extensions'])) {
        const e: FormatExtension = {};
        if (ext.facts) e.facts = structuredClone(ext.facts);
        if (ext.tables) {
          e.tables = {};
          for (const [t, cols] of Object.entries(ext.tables)) {
            e.tables[t] = {};
            for (const [c, col] of Object.entries(cols)) e.tables[t]![c] = col.slice() as Column;
          }
        }
        if (ext.samples && origin) {
          e.samples = {};
          for (const [c, col] of Object.entries(ext.samples)) e.samples[c] = takeRows(col, origin);
        }
        exts[name] = e;
      }
    }
    out['.extensions'] = exts;
    return out;
  }
}

/** A hash of `str`, each character mixed with `seed` first (see `seededWord`). */
function stringHash(str: string, seed: number): number {
  let h = seed;
  for (let i = 0; i < str.length; i++) h = Math.imul(h ^ seededWord(str.charCodeAt(i), seed), 0x01000193);
  return h;
}

/**
 * Combines samples with the same (new) stack and labels, summing their values, in order of
 * first occurrence (pprof's sample key: stack + labels grouped per key). Stacks are hashed,
 * not turned into strings, so millions of deep samples stay cheap.
 */
export class SampleCombiner {
  private readonly buckets = new Map<number, number | number[]>();
  /**
   * Drawn per combiner, and mixed into every word hashed: the labels and stacks come from the
   * input, and under the fixed FNV hash label values were easy to make collide (32,768 samples of
   * one stack whose labels all hashed alike: 10.8 s to load as pprof does, quadratic).
   */
  private readonly seed = (Math.random() * 0x1_0000_0000) | 0;
  private readonly offsets: number[] = [0];
  private readonly ids = new GrowableUint32(4096);
  private readonly values: bigint[][];
  private readonly labels: LabelInput[][] = [];
  private readonly labelKeys: string[] = [];
  /** Short keys of the label keys and values (see `labelKey`). */
  private readonly labelStrings = new StringKeys();
  private readonly src: number[] = [];
  private readonly row: number[] = [];
  private readonly combined: boolean[] = [];

  /** `typeNames[t]` (`type/unit`) names sample type t in the error about a sum beyond int64. */
  constructor(
    private readonly nTypes: number,
    private readonly typeNames: readonly string[] = [],
  ) {
    this.values = Array.from({ length: nTypes }, () => []);
  }

  private same(k: number, stack: ArrayLike<number>, len: number, lkey: string): boolean {
    const b = this.offsets[k]!;
    if (this.offsets[k + 1]! - b !== len || this.labelKeys[k] !== lkey) return false;
    for (let j = 0; j < len; j++) if (this.ids.get(b + j) !== stack[j]) return false;
    return true;
  }

  /** Adds (or sums into an equal earlier) sample; `value(t)` gives its value of type t. */
  add(stack: ArrayLike<number>, len: number, value: (t: number) => bigint, labels: LabelInput[], src: number, row: number): void {
    const lkey = labelKey(labels, this.labelStrings);
    let h = lkey === '' ? this.seed ^ 0x12345 : stringHash(lkey, this.seed);
    for (let j = 0; j < len; j++) h = Math.imul(h ^ seededWord(stack[j]!, this.seed), 0x01000193);
    h = Math.imul(h ^ len, 0x85ebca6b);
    const hit = this.buckets.get(h);
    const candidates = hit === undefined ? [] : typeof hit === 'number' ? [hit] : hit;
    for (const k of candidates) {
      if (this.same(k, stack, len, lkey)) {
        // Summed exactly, checked once whole (`flush`): a check of each partial sum would depend
        // on the samples' order, and a reader that merged some of them first (pprof's aggregate)
        // would change whether a load fails.
        for (let t = 0; t < this.nTypes; t++) this.values[t]![k] = this.values[t]![k]! + value(t);
        this.combined[k] = true;
        return;
      }
    }
    const k = this.labels.length;
    if (hit === undefined) this.buckets.set(h, k);
    else if (typeof hit === 'number') this.buckets.set(h, [hit, k]);
    else hit.push(k);
    for (let j = 0; j < len; j++) this.ids.push(stack[j]!);
    this.offsets.push(this.ids.length);
    for (let t = 0; t < this.nTypes; t++) this.values[t]!.push(value(t));
    this.labels.push(labels);
    this.labelKeys.push(lkey);
    this.src.push(src);
    this.row.push(row);
    this.combined.push(false);
  }

  /** Writes the combined samples to `rb`; returns whether some sample's values are all zero. */
  flush(rb: Rebuilder): boolean {
    let anyZero = false;
    const ids = this.ids.view();
    const vals = new Array<bigint>(this.nTypes);
    for (let k = 0; k < this.labels.length; k++) {
      let zero = true;
      for (let t = 0; t < this.nTypes; t++) {
        vals[t] = this.combined[k] ? checkedInt64(this.values[t]![k]!, `the sum of the ${this.typeNames[t] ?? `sample type ${t}`} values of identical samples`) : this.values[t]![k]!;
        if (vals[t] !== 0n) zero = false;
      }
      if (zero) anyZero = true;
      rb.addCombinedSample(ids.subarray(this.offsets[k]!, this.offsets[k + 1]!), vals, this.labels[k]!, this.src[k]!, this.row[k]!, this.combined[k]!);
    }
    return anyZero;
  }
}

/** Facts copied for a new profile (comments array copied). */
export function copyFacts(f: ProfileFacts): ProfileFacts {
  return {
    ...f,
    period_type: f.period_type ? { ...f.period_type } : undefined,
    comments: f.comments.slice(),
  };
}

/**
 * Rebuilds `p` with the given rewritten locations (undefined: its own, copied from its columns),
 * keeping every sample row for which `stackFor` returns a stack (samples stay 1:1, so per-sample
 * extension columns are carried).
 */
export function rebuildSamplewise(
  p: Profile,
  index: ProfileIndex,
  locs: OpLocation[] | undefined,
  stackFor: (i: number, rows: number[]) => number[] | undefined,
  options: Partial<RebuilderOptions> & { labelsFor?: (i: number) => LabelInput[] } = {},
): Profile {
  const { labelsFor, ...rest } = options;
  const rb = new Rebuilder({ sampleTypes: sampleTypes(p), facts: copyFacts(p['.profile']), mergeMappings: false, ...rest });
  rb.addSource(p, index, locs);
  // The first mapping is the main binary: it stays first (and stays), as in pprof.
  if (p['.mappings'].mapping_id.length > 0) rb.mapping(0, 0);
  const n = p.samples.value.length;
  const cols = p.samples['.values'];
  const vals = new Array<bigint>(cols.length);
  for (let i = 0; i < n; i++) {
    const rows = stackFor(i, stackRows(p, index, i));
    if (!rows) continue;
    for (let t = 0; t < cols.length; t++) vals[t] = cols[t]![i]!;
    rb.addSample(0, i, rb.stack(0, rows), vals, labelsFor ? labelsFor(i) : labelInputs(p, i));
  }
  return rb.build();
}
