/**
 * The stack table: the distinct stacks of one sample type as a prefix tree in struct-of-arrays
 * form (the Firefox Profiler's `stackTable`). Stack `s` is the row (`prefix[s]`, `frame[s]`):
 * its caller stack (-1 for a root frame) and its leaf frame (a location row). Rows are created
 * in sample order, root first, so `prefix[s] < s` always holds: a pass in row order visits
 * callers before callees, a pass in reverse order children before parents. `self[s]` sums the
 * values of the samples whose stack is exactly `s`.
 *
 * Every view that walks stacks (`callGraph` and the `top`/`tree`/`peek` reports, `flameTree`,
 * `toFolded`) walks this table instead of the samples: its size follows the number of distinct
 * (caller path, frame) pairs, not the number of samples, and the views' several passes (pprof's
 * node trimming rebuilds the graph up to three times) re-read a few typed arrays instead of the
 * sample columns. It is an index over the samples (see docs/data-model.md), built per sample
 * type because samples whose value is zero (or, for flame graphs, negative) are left out.
 *
 * Values stay exact: sums are kept in doubles when the sum of |value| over the samples fits in
 * 2^53 (then every partial sum does), and in bigints otherwise.
 */

import type { Profile } from '../model.js';
import type { ProfileIndex } from '../views.js';

/** Per-stack sums: doubles when every sum is exact in them, bigints otherwise. */
export type StackValues = Float64Array | bigint[];

export interface StackTable {
  /** Number of stacks. */
  length: number;
  /** Caller stack of each stack, -1 for a root frame; always less than the stack's own index. */
  prefix: Int32Array;
  /** Leaf frame of each stack: a location row index. */
  frame: Int32Array;
  /** Sum of the values of the samples whose stack is exactly this one. */
  self: StackValues;
  /** The stack of each sample, -1 for samples left out (value filtered, or no known frame). */
  sampleStack: Int32Array;
}

const EXACT_LIMIT = 2n ** 53n;

/** Grows a typed array to at least `n` elements, keeping its contents. */
function grown<T extends Int32Array | Float64Array>(a: T, n: number): T {
  if (n <= a.length) return a;
  let cap = a.length * 2;
  while (cap < n) cap *= 2;
  const next = new (a.constructor as new (n: number) => T)(cap);
  next.set(a);
  return next;
}

/**
 * Interns (prefix, frame) pairs of non-negative frames: the rows of a prefix tree, numbered in
 * first-use order (so a row's prefix always has a smaller number). Typed arrays only, no object
 * per row. A row's callees are found in its list of children while it has few (most rows have
 * one or none: a new row then costs no hash probe, which is what makes profiles whose stacks
 * share little cheap), and through a hash table of (prefix, frame) once it has many.
 */
export class PrefixTreeBuilder {
  length = 0;
  /** Row r's prefix at 2r and frame at 2r+1. */
  private pairs = new Int32Array(2048);
  /** First child of row r at r+1 (slot 0: the roots), -1 = none; children are prepended. */
  private firstChild = new Int32Array(1025).fill(-1);
  private nextSibling = new Int32Array(1024);
  /** Number of children of row r at r+1. */
  private childCount = new Int32Array(1025);
  /** Rows with more children than this look them up in `slots`. */
  private static readonly LIST_LIMIT = 8;
  private mask = (1 << 10) - 1;
  /** Row per hash slot, -1 = empty: the children of rows with many children. */
  private slots = new Int32Array(this.mask + 1).fill(-1);
  private hashed = 0;

  /** The slot holding row (prefix, frame), or the empty slot where it goes. */
  private slotOf(prefix: number, frame: number): number {
    let h = Math.imul(prefix, 0x9e3779b1) ^ frame;
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    h = (h ^ (h >>> 16)) & this.mask;
    const { slots, pairs } = this;
    for (;;) {
      const row = slots[h]!;
      if (row === -1 || (pairs[2 * row + 1] === frame && pairs[2 * row] === prefix)) return h;
      h = (h + 1) & this.mask;
    }
  }

  private hashRow(row: number): void {
    this.slots[this.slotOf(this.pairs[2 * row]!, this.pairs[2 * row + 1]!)] = row;
    if (++this.hashed * 2 > this.mask) {
      const old = this.slots;
      this.mask = this.mask * 2 + 1;
      this.slots = new Int32Array(this.mask + 1).fill(-1);
      for (let i = 0; i < old.length; i++) {
        const r = old[i]!;
        if (r !== -1) this.slots[this.slotOf(this.pairs[2 * r]!, this.pairs[2 * r + 1]!)] = r;
      }
    }
  }

  /** The row (prefix, frame), added when new. */
  intern(prefix: number, frame: number): number {
    const parent = prefix + 1;
    const wide = this.childCount[parent]! > PrefixTreeBuilder.LIST_LIMIT;
    if (wide) {
      const hit = this.slots[this.slotOf(prefix, frame)]!;
      if (hit !== -1) return hit;
    } else {
      for (let c = this.firstChild[parent]!; c !== -1; c = this.nextSibling[c]!) if (this.pairs[2 * c + 1] === frame) return c;
    }
    const row = this.length++;
    // Each column grows on its own (their lengths are not kept in step).
    this.pairs = grown(this.pairs, 2 * row + 2);
    this.nextSibling = grown(this.nextSibling, row + 1);
    this.childCount = grown(this.childCount, row + 2);
    if (row + 2 > this.firstChild.length) {
      const filled = this.firstChild.length;
      this.firstChild = grown(this.firstChild, row + 2);
      this.firstChild.fill(-1, filled);
    }
    this.pairs[2 * row] = prefix;
    this.pairs[2 * row + 1] = frame;
    this.nextSibling[row] = this.firstChild[parent]!;
    this.firstChild[parent] = row;
    const count = ++this.childCount[parent]!;
    if (wide) this.hashRow(row);
    else if (count > PrefixTreeBuilder.LIST_LIMIT) for (let c = row; c !== -1; c = this.nextSibling[c]!) this.hashRow(c);
    return row;
  }

  /** Exact-length prefix and frame columns. */
  finish(): { prefix: Int32Array; frame: Int32Array } {
    const prefix = new Int32Array(this.length);
    const frame = new Int32Array(this.length);
    for (let row = 0; row < this.length; row++) {
      prefix[row] = this.pairs[2 * row]!;
      frame[row] = this.pairs[2 * row + 1]!;
    }
    return { prefix, frame };
  }
}

/** A growable per-row sum: doubles (exact when `exact`) or bigints. */
export class RowSums {
  private numbers: Float64Array | undefined;
  private readonly bigints: bigint[] = [];
  constructor(exact: boolean) {
    if (exact) this.numbers = new Float64Array(1024);
  }
  add(row: number, v: bigint | number): void {
    if (this.numbers) {
      this.numbers = grown(this.numbers, row + 1);
      this.numbers[row]! += Number(v);
    } else {
      while (this.bigints.length <= row) this.bigints.push(0n);
      this.bigints[row]! += BigInt(v);
    }
  }
  /** The sums of rows 0..length-1. */
  finish(length: number): StackValues {
    if (this.numbers) return grown(this.numbers, length).slice(0, length);
    while (this.bigints.length < length) this.bigints.push(0n);
    return this.bigints.slice(0, length);
  }
}

/** Whether the sums of the values passing `keep` of `col` are exact in doubles (sum of |v| <= 2^53). */
export function sumsExactInDoubles(col: BigInt64Array, keep: (v: bigint) => boolean): boolean {
  let sumAbs = 0n;
  for (let i = 0; i < col.length; i++) {
    const v = col[i]!;
    if (keep(v)) sumAbs += v < 0n ? -v : v;
  }
  return sumAbs <= EXACT_LIMIT;
}

/**
 * Builds the stack table of sample type `sampleTypeIndex` from the samples whose value passes
 * `keep` (default: nonzero). Location ids that name no location are skipped, as the views do.
 */
export function buildStackTable(p: Profile, index: ProfileIndex, sampleTypeIndex: number, keep: (v: bigint) => boolean = (v) => v !== 0n): StackTable {
  const col = p.samples['.values'][sampleTypeIndex]!;
  const { offsets, location_id } = p.samples.locations;
  const tree = new PrefixTreeBuilder();
  const self = new RowSums(sumsExactInDoubles(col, keep));
  const sampleStack = new Int32Array(col.length).fill(-1);
  for (let i = 0; i < col.length; i++) {
    const v = col[i]!;
    if (!keep(v)) continue;
    let s = -1;
    for (let k = offsets[i + 1]! - 1; k >= offsets[i]!; k--) {
      const r = index.locations.get(location_id[k]!);
      if (r >= 0) s = tree.intern(s, r);
    }
    if (s < 0) continue;
    sampleStack[i] = s;
    self.add(s, v);
  }
  return { length: tree.length, ...tree.finish(), self: self.finish(tree.length), sampleStack };
}

/** Per-stack totals: each stack's self value plus its callees' totals (the samples through it). */
export function subtreeTotals(t: StackTable): StackValues {
  return subtreeSums(t.prefix, t.self);
}

/** Sums of a prefix tree's rows over their subtrees (rows numbered callers first). */
export function subtreeSums(prefix: Int32Array, self: StackValues): StackValues {
  const total = self.slice();
  // One loop for both representations: `+` is exact on either.
  const sums = total as unknown as number[];
  for (let s = prefix.length - 1; s >= 0; s--) if (prefix[s]! >= 0) sums[prefix[s]!]! += sums[s]!;
  return total;
}

/**
 * The callees of every row of a prefix tree, in row order: `firstChild[s + 1]` (slot 0 lists
 * the roots) and `nextSibling[s]`, -1 ending a list.
 */
export function childLists(prefix: Int32Array): { firstChild: Int32Array; nextSibling: Int32Array } {
  const n = prefix.length;
  const firstChild = new Int32Array(n + 1).fill(-1);
  const nextSibling = new Int32Array(n).fill(-1);
  // Built backwards so that the lists run in row order.
  for (let s = n - 1; s >= 0; s--) {
    const parent = prefix[s]! + 1;
    nextSibling[s] = firstChild[parent]!;
    firstChild[parent] = s;
  }
  return { firstChild, nextSibling };
}

/**
 * The stacks in depth-first pre-order (callers before callees, callees in row order, i.e. in
 * the order samples first reached them), and for each stack the end of its subtree in that
 * order: stack `a` is on the caller path of stack `s` (or is `s`) exactly when
 * `position[a] <= position[s] < subtreeEnd[a]`. A view that walks `order` can thus tell whether
 * a node was already counted higher up the same path from the last place it counted it, with no
 * per-path state to undo. Iterative: stacks thousands of frames deep are fine.
 */
export function preorder(t: StackTable): { order: Int32Array; position: Int32Array; subtreeEnd: Int32Array } {
  const { firstChild, nextSibling } = childLists(t.prefix);
  const order = new Int32Array(t.length);
  const position = new Int32Array(t.length);
  const subtreeEnd = new Int32Array(t.length);
  const path = new Int32Array(t.length);
  let depth = 0;
  let k = 0;
  let next = firstChild[0]!;
  for (;;) {
    if (next >= 0) {
      position[next] = k;
      order[k++] = next;
      path[depth++] = next;
      next = firstChild[next + 1]!;
      continue;
    }
    if (depth === 0) return { order, position, subtreeEnd };
    const done = path[--depth]!;
    subtreeEnd[done] = k;
    next = nextSibling[done]!;
  }
}
