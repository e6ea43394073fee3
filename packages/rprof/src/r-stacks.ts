/**
 * The distinct stacks of a profile as R's `summaryRprof` counts them, for the R summaries
 * (`summarizeRprof`) and R's accounting (`rAccounting`): core's stack table (one row per distinct
 * caller path and location, see docs/data-model.md) with R's `<GC>` flag beside it. A sample's
 * group is its stack table row and whether it is a GC sample; R's rules only look at that, so
 * the entries (function names, or `basename#line` keys) are worked out once per group instead of
 * once per sample, and values are summed per group. Memory follows the number of distinct
 * stacks, and the per-sample work is one table lookup per frame.
 */

import { ProfileIndex, StringKeyedMap, buildStackTable, checkLimit, locationFrames, type Profile, type ReadLimits } from '@profkit/core';
import { ADAPTER_NAME } from './read.js';

/** `<GC>`: R's name of garbage collection, innermost in `summaryRprof`'s function tables. */
export const GC_FRAME = '<GC>';
/** What `summaryRprof(lines = "show")` counts a sample without source references as. */
export const NO_LOCATION = '<no location>';

/** R's entries per function (`summaryRprof(lines = "hide")`) or per source line (`lines = "show"`). */
export type RLinesView = 'hide' | 'show';

/**
 * R's entries of one view, interned as ids 0, 1, 2… in the order they are first asked for: per
 * function (`hide`) a name, per line (`show`) a file's base name and a line number, or
 * `<no location>`. A line's key `basename#line` is never kept as one joined string: a 1 MB file
 * name with 10,000 sampled lines would be 10 GB of keys (a Map flattens each joined key it
 * hashes), and a Map hashes strings longer than 16,383 units by their length alone (core's
 * `StringKeys`). Names and base names are keyed through `StringKeyedMap`. The number of entries
 * is bounded by `maxTableEntries` (a Map holds at most 2^24 entries; a profile can name more
 * functions or lines than that), checked as each one is added.
 */
export class REntries {
  /** `hide`: entry name -> id; `show`: file base name -> file number. */
  private readonly byName = new StringKeyedMap<number>();
  /** `show`: the base name of each file number. */
  private readonly bases: string[] = [];
  /** `show`: `fileNumber:line` -> id (short keys). */
  private readonly byLine = new Map<string, number>();
  /** `hide`: the name of each id. */
  private readonly names: string[] = [];
  /** `show`: the file number and line of each id; file -1 is `<no location>`. */
  private readonly fileOf: number[] = [];
  private readonly lineOf: number[] = [];
  private count = 0;

  constructor(
    readonly view: RLinesView,
    private readonly limits?: ReadLimits,
  ) {}

  /** Entries so far. */
  get size(): number {
    return this.count;
  }

  /** The id of the function named `name` (`hide`; `<GC>` too). */
  ofName(name: string): number {
    let id = this.byName.get(name);
    if (id === undefined) {
      id = this.add();
      this.byName.set(name, id);
      this.names.push(name);
    }
    return id;
  }

  /** The id of line `line` of the file `path` (`show`), keyed by the file's base name. */
  ofLine(path: string, line: number): number {
    // The frames of a file usually share one path string: `===` is then O(1), while keying the
    // base name hashes all of it (a 1 MB name read for each of 2,000 lines took 7 s).
    let file = path === this.lastPath ? this.lastFile : undefined;
    if (file === undefined) {
      const base = basename(path);
      file = this.byName.get(base);
      if (file === undefined) {
        file = this.bases.length;
        this.byName.set(base, file);
        this.bases.push(base);
      }
      this.lastPath = path;
      this.lastFile = file;
    }
    const k = `${file}:${line}`;
    let id = this.byLine.get(k);
    if (id === undefined) {
      id = this.add();
      this.byLine.set(k, id);
      this.fileOf.push(file);
      this.lineOf.push(line);
    }
    return id;
  }

  /** The id of `<no location>` (`show`). */
  noLocation(): number {
    if (this.noLocationId === undefined) {
      this.noLocationId = this.add();
      this.fileOf.push(-1);
      this.lineOf.push(0);
    }
    return this.noLocationId;
  }
  private noLocationId: number | undefined;
  private lastPath: string | undefined;
  private lastFile = 0;

  /** The entry's key as `summaryRprof` prints it: the name, `basename#line` or `<no location>`. */
  key(id: number): string {
    if (this.view === 'hide') return this.names[id]!;
    const file = this.fileOf[id]!;
    return file < 0 ? NO_LOCATION : `${this.bases[file]!}#${this.lineOf[id]!}`;
  }

  /** The id whose `key` is `key`, if there is one. */
  find(key: string): number | undefined {
    if (this.view === 'hide') return this.byName.get(key);
    if (key === NO_LOCATION) return this.noLocationId;
    // The line is the digits after the last '#' (a base name may contain '#', a line number not).
    const at = key.lastIndexOf('#');
    if (at < 0) return undefined;
    const file = this.byName.get(key.slice(0, at));
    const line = key.slice(at + 1);
    return file === undefined || String(Number(line)) !== line ? undefined : this.byLine.get(`${file}:${line}`);
  }

  private add(): number {
    checkLimit(this.limits, 'maxTableEntries', this.count + 1, `the ${this.view === 'hide' ? 'functions' : 'source lines'} of the R summary`, { rule: 'entries of a summary table' });
    return this.count++;
  }
}

export interface RStacks {
  /**
   * The group of each sample: with `stacks` rows in the stack table, a sample of row `s` is in
   * group `s`, or `stacks + 1 + s` when it is a GC sample (`s` = -1: a GC sample without frames);
   * -1 for a sample with no known location that is not a GC sample.
   */
  sampleGroup: Int32Array;
  /** The groups that have samples, in the order of their first sample (so tables fill in sample order). */
  order: Int32Array;
  /** Number of group numbers (some may have no sample). */
  groupCount: number;
  /**
   * R's entries of a group's samples as ids of `keys[view]`, innermost first: per function,
   * `<GC>` first for GC samples then the frames' names; per line, the frames' `basename#line`
   * keys, or `<no location>` when there are none (and the sample has a frame or GC). Empty: R
   * leaves these samples out.
   */
  entries(group: number, view: RLinesView): number[];
  /** The entries of each view, as `entries` gives them out. */
  keys: Record<RLinesView, REntries>;
}

function basename(path: string): string {
  const i = path.lastIndexOf('/');
  return i >= 0 ? path.slice(i + 1) : path;
}

/**
 * The stack-table view of `p` in R's terms (see the file comment). `limits.maxTableEntries`
 * bounds the distinct entries of each view.
 */
export function rStacks(p: Profile, index: ProfileIndex = new ProfileIndex(p), limits?: ReadLimits): RStacks {
  const gc = p['.extensions'][ADAPTER_NAME]?.samples?.gc as ArrayLike<number> | undefined;
  // The table is built over every sample (R counts zero-valued samples' entries too); its sums
  // are not used, so any value column will do, and `value` exists even without sample types.
  const withColumn = p.samples['.values'].length > 0 ? p : { ...p, samples: { ...p.samples, '.values': [p.samples.value] } };
  const table = buildStackTable(withColumn, index, 0, () => true, () => true);
  const stacks = table.length;
  // Groups: row s without GC is s; with GC it is stacks + 1 + s, where s = -1 is a GC sample without frames.
  const groupCount = 2 * stacks + 1;
  const n = p.samples.value.length;
  // The table's own per-sample column becomes the group column (the table is not used otherwise).
  const sampleGroup = table.sampleStack;
  const seen = new Uint8Array(groupCount);
  const order: number[] = [];
  for (let i = 0; i < n; i++) {
    const s = table.sampleStack[i]!;
    const g = gc !== undefined && Number(gc[i]) !== 0 ? stacks + 1 + s : s;
    sampleGroup[i] = g;
    if (g >= 0 && !seen[g]) {
      seen[g] = 1;
      order.push(g);
    }
  }

  // Each location row's entries per view, resolved once per row and view.
  const keys = { hide: new REntries('hide', limits), show: new REntries('show', limits) };
  const entriesOfRow = { hide: new Map<number, { ids: number[]; frames: number }>(), show: new Map<number, { ids: number[]; frames: number }>() };
  const rowEntries = (r: number, view: RLinesView): { ids: number[]; frames: number } => {
    let e = entriesOfRow[view].get(r);
    if (!e) {
      const frames = locationFrames(p, index, r);
      const ids = view === 'hide' ? frames.map((f) => keys.hide.ofName(f.name)) : frames.filter((f) => f.line > 0).map((f) => keys.show.ofLine(f.filename, f.line));
      e = { ids, frames: frames.length };
      entriesOfRow[view].set(r, e);
    }
    return e;
  };
  const entries = (group: number, view: RLinesView): number[] => {
    const isGc = group >= stacks;
    const out: number[] = isGc && view === 'hide' ? [keys.hide.ofName(GC_FRAME)] : [];
    let frames = 0;
    // Leaf first: the stack's own row, then its callers.
    for (let s = isGc ? group - stacks - 1 : group; s >= 0; s = table.prefix[s]!) {
      const e = rowEntries(table.frame[s]!, view);
      frames += e.frames;
      for (const x of e.ids) out.push(x);
    }
    if (view === 'show' && out.length === 0 && (frames > 0 || isGc)) out.push(keys.show.noLocation());
    return out;
  };
  return { sampleGroup, order: Int32Array.from(order), groupCount, entries, keys };
}

const EXACT_LIMIT = 2 ** 53;

/** The sum of `col` over each group's samples (`col` absent: each sample counts 1), exact. */
export function sumsByGroup(col: BigInt64Array | undefined, stacks: RStacks): bigint[] {
  const { sampleGroup, groupCount } = stacks;
  const n = sampleGroup.length;
  let sumAbs = 0;
  if (col) for (let i = 0; i < n; i++) sumAbs += Math.abs(Number(col[i]!));
  // Doubles while every partial sum is exact in them (a little slack for the rounding of sumAbs itself).
  if (sumAbs < EXACT_LIMIT / 2) {
    const sums = new Float64Array(groupCount);
    for (let i = 0; i < n; i++) {
      const g = sampleGroup[i]!;
      if (g >= 0) sums[g]! += col ? Number(col[i]!) : 1;
    }
    return Array.from(sums, (v) => BigInt(v));
  }
  const sums = new Array<bigint>(groupCount).fill(0n);
  for (let i = 0; i < n; i++) {
    const g = sampleGroup[i]!;
    if (g >= 0) sums[g]! += col![i]!;
  }
  return sums;
}
