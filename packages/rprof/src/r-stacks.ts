/**
 * The distinct stacks of a profile as R's `summaryRprof` counts them, for the R summaries
 * (`summarizeRprof`) and R's accounting (`rAccounting`): core's stack table (one row per distinct
 * caller path and location, see docs/data-model.md) with R's `<GC>` flag beside it. A sample's
 * group is its stack table row and whether it is a GC sample; R's rules only look at that, so
 * the entries (function names, or `basename#line` keys) are worked out once per group instead of
 * once per sample, and values are summed per group. Memory follows the number of distinct
 * stacks, and the per-sample work is one table lookup per frame.
 */

import { ProfileIndex, buildStackTable, locationFrames, type Profile } from '@profkit/core';
import { ADAPTER_NAME } from './read.js';

/** `<GC>`: R's name of garbage collection, innermost in `summaryRprof`'s function tables. */
export const GC_FRAME = '<GC>';
/** What `summaryRprof(lines = "show")` counts a sample without source references as. */
export const NO_LOCATION = '<no location>';

/** R's entries per function (`summaryRprof(lines = "hide")`) or per source line (`lines = "show"`). */
export type RLinesView = 'hide' | 'show';

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
   * R's entries of a group's samples, innermost first: per function, `<GC>` first for GC samples
   * then the frames' names; per line, the frames' `basename#line` keys, or `<no location>` when
   * there are none (and the sample has a frame or GC). Empty: R leaves these samples out.
   */
  entries(group: number, view: RLinesView): string[];
}

function basename(path: string): string {
  const i = path.lastIndexOf('/');
  return i >= 0 ? path.slice(i + 1) : path;
}

/** The stack-table view of `p` in R's terms (see the file comment). */
export function rStacks(p: Profile, index: ProfileIndex = new ProfileIndex(p)): RStacks {
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

  // Each location's frames as R sees them, resolved once per location row.
  const namesOfRow = new Map<number, { names: string[]; lines: string[] }>();
  const rowEntries = (r: number) => {
    let e = namesOfRow.get(r);
    if (!e) {
      const frames = locationFrames(p, index, r);
      e = { names: frames.map((f) => f.name), lines: frames.filter((f) => f.line > 0).map((f) => `${basename(f.filename)}#${f.line}`) };
      namesOfRow.set(r, e);
    }
    return e;
  };
  const entries = (group: number, view: RLinesView): string[] => {
    const isGc = group >= stacks;
    const out: string[] = isGc && view === 'hide' ? [GC_FRAME] : [];
    let frames = 0;
    // Leaf first: the stack's own row, then its callers.
    for (let s = isGc ? group - stacks - 1 : group; s >= 0; s = table.prefix[s]!) {
      const e = rowEntries(table.frame[s]!);
      frames += e.names.length;
      for (const x of view === 'hide' ? e.names : e.lines) out.push(x);
    }
    if (view === 'show' && out.length === 0 && (frames > 0 || isGc)) out.push(NO_LOCATION);
    return out;
  };
  return { sampleGroup, order: Int32Array.from(order), groupCount, entries };
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
