/**
 * pprof's filters applied to a stack table instead of to the samples: `-focus`, `-ignore`,
 * `-hide`, `-show`, `-show_from`, `-prune_from` depend on a sample's stack only, and
 * `-tagfocus`/`-tagignore` on its labels only, so the reports decide once per distinct stack what
 * a filter makes of it, and keep or drop a sample by a lookup. No filtered profile is built: the
 * report walks a new stack table whose frames are the same location rows, with the lines the
 * filters leave them (`StackFilterPlan.locs`).
 *
 * The results are those of `applyReportFilters` (pprof's order: FilterSamplesByName, ShowFrom,
 * FilterSamplesByTag, PruneFrom); the interop tests compare both with `go tool pprof`.
 */

import type { Profile } from '../model.js';
import type { ProfileIndex } from '../views.js';
import { classifyLocations, sampleTagFilter } from './filter.js';
import { readLocations, type OpLocation } from './internal.js';
import { pruneFromLocations } from './prune.js';
import { given, givenNameFilters, showFromLocations, type ReportFilterOptions } from './report-filters.js';
import { PrefixTreeBuilder, RowSums, sumsExactInDoubles, type StackTable, type StackValues } from './stack-table.js';

/** Whether `options` hold a filter that `planStackFilters` applies per stack. */
export function hasStackFilters(options: ReportFilterOptions): boolean {
  const { focus, ignore, hide, show, showFrom, pruneFrom, tagFocus, tagIgnore } = options;
  return [focus, ignore, hide, show, showFrom, pruneFrom, tagFocus, tagIgnore].some(given);
}

export interface StackFilterPlan {
  /** Every location row with the lines the filters leave it (-hide, -show, -show_from, -prune_from). */
  locs: OpLocation[];
  /**
   * The filtered stack table of `stacks` (a table of this profile): each sample's stack as the
   * filters leave it (dropped samples get -1), rows numbered in sample order like
   * `buildStackTable`'s, and per row the sums of each of `columns` over its samples.
   */
  apply(stacks: StackTable, columns: readonly BigInt64Array[]): { stacks: StackTable; sums: StackValues[] };
}

const NONE = -2;

/**
 * A prefix tree derived from `parent` row by row (rows in caller-first order): `step(row, mapped
 * prefix)` gives the row of the new tree (or -1 for "no frame", NONE for "sample dropped").
 */
function derive(n: number, prefixOf: (s: number) => number, step: (s: number, parentRow: number) => number): Int32Array {
  const out = new Int32Array(n);
  for (let s = 0; s < n; s++) {
    const pre = prefixOf(s);
    out[s] = step(s, pre < 0 ? -1 : out[pre]!);
  }
  return out;
}

/** Plans the filters of `options` over `p` (see the module comment). */
export function planStackFilters(p: Profile, index: ProfileIndex, options: ReportFilterOptions): StackFilterPlan {
  const locs = readLocations(p, index);
  // The same location passes as the sample filters, in pprof's order (an empty pattern is unset there too).
  const classes = classifyLocations(p, locs, givenNameFilters(options));
  const showFromMatched = given(options.showFrom) ? showFromLocations(p, locs, options.showFrom!, options.compile) : undefined;
  const beneath = given(options.pruneFrom) ? pruneFromLocations(p, locs, options.pruneFrom!, options.compile) : undefined;
  const tagsPass = sampleTagFilter(p, options);

  const apply = (stacks: StackTable, columns: readonly BigInt64Array[]) => {
    const { prefix, frame, length } = stacks;
    // Per stack: whether a frame on it is ignored / focused (pprof looks at every frame of a sample).
    let droppedByName: Uint8Array | undefined;
    if (classes.byName) {
      droppedByName = new Uint8Array(length);
      const focused = new Uint8Array(length);
      for (let s = 0; s < length; s++) {
        const pre = prefix[s]!;
        const c = classes.focusOrIgnore[frame[s]!]!;
        const ignored = c === 2 || (pre >= 0 && droppedByName[pre] === 2);
        focused[s] = c === 1 || (pre >= 0 && focused[pre] === 1) ? 1 : 0;
        droppedByName[s] = ignored ? 2 : 0;
      }
      for (let s = 0; s < length; s++) droppedByName[s] = droppedByName[s] === 2 || !focused[s] ? 1 : 0;
    }
    // The filtered stacks, one derived tree per filter that changes stacks: rows of the tree
    // before it map to rows of the next one (-1: no frame left; NONE: the sample is dropped).
    let tree = { prefix, frame };
    let rowOf = (s: number) => s;
    const chain = (next: { builder: PrefixTreeBuilder; map: Int32Array }) => {
      const before = rowOf;
      const { prefix: np, frame: nf } = next.builder.finish();
      tree = { prefix: np, frame: nf };
      rowOf = (s) => {
        const r = before(s);
        return r < 0 ? r : next.map[r]!;
      };
    };
    if (classes.anyHidden) {
      const builder = new PrefixTreeBuilder(tree.frame.length);
      const { frame: fr } = tree;
      const map = derive(tree.prefix.length, (s) => tree.prefix[s]!, (s, up) => (classes.hidden[fr[s]!] ? up : builder.intern(up, fr[s]!)));
      chain({ builder, map });
    }
    if (showFromMatched) {
      // From the outermost (root-most) matching frame down; stacks without one are dropped.
      const builder = new PrefixTreeBuilder(tree.frame.length);
      const { frame: fr } = tree;
      const map = derive(tree.prefix.length, (s) => tree.prefix[s]!, (s, up) => (up >= 0 ? builder.intern(up, fr[s]!) : showFromMatched[fr[s]!] ? builder.intern(-1, fr[s]!) : NONE));
      chain({ builder, map });
    }
    if (beneath) {
      // The innermost matching frame becomes the leaf: a row maps to its nearest matching ancestor.
      const { frame: fr, prefix: pr } = tree;
      const nearest = new Int32Array(pr.length);
      for (let s = 0; s < pr.length; s++) nearest[s] = beneath[fr[s]!] ? s : pr[s]! >= 0 ? nearest[pr[s]!]! : -1;
      const before = rowOf;
      rowOf = (s) => {
        const r = before(s);
        return r < 0 || nearest[r]! < 0 ? r : nearest[r]!;
      };
    }
    // The final table, its rows interned in sample order (callers first), as buildStackTable does.
    const final = new PrefixTreeBuilder(tree.frame.length);
    const finalRow = new Int32Array(tree.frame.length).fill(-1);
    const path: number[] = [];
    const internPath = (r: number): number => {
      for (let x = r; x >= 0 && finalRow[x]! < 0; x = tree.prefix[x]!) path.push(x);
      while (path.length > 0) {
        const x = path.pop()!;
        const up = tree.prefix[x]!;
        finalRow[x] = final.intern(up < 0 ? -1 : finalRow[up]!, tree.frame[x]!);
      }
      return finalRow[r]!;
    };
    const sums = columns.map((c) => new RowSums(sumsExactInDoubles(c, () => true)));
    const sampleStack = new Int32Array(stacks.sampleStack.length).fill(-1);
    // Each stack's final row, decided once (-1: dropped); samples then need one lookup.
    const UNSET = -3;
    const finalOf = new Int32Array(length).fill(UNSET);
    for (let i = 0; i < sampleStack.length; i++) {
      const s = stacks.sampleStack[i]!;
      if (s < 0) continue;
      if (tagsPass && !tagsPass(i)) continue;
      let row = finalOf[s]!;
      if (row === UNSET) {
        const r = droppedByName && droppedByName[s] ? -1 : rowOf(s);
        row = finalOf[s] = r < 0 ? -1 : internPath(r);
      }
      if (row < 0) continue;
      sampleStack[i] = row;
      for (let c = 0; c < columns.length; c++) sums[c]!.add(row, columns[c]![i]!);
    }
    const { prefix: fp, frame: ff, children } = final.finish();
    const values = sums.map((s) => s.finish(final.length));
    return { stacks: { length: final.length, prefix: fp, frame: ff, children, self: values[0]!, sampleStack }, sums: values };
  };
  return { locs, apply };
}
