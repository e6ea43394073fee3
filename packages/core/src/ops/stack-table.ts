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
  /**
   * The callees of every stack as the builder linked them (see `childLists` for the layout; here
   * in no particular order). Absent: `stackChildren` derives them from `prefix`.
   */
  children?: ChildLists;
}

/** Callee lists of a prefix tree: `firstChild[s + 1]` (slot 0 lists the roots), `nextSibling[s]`, -1 ending a list. */
export interface ChildLists {
  firstChild: Int32Array;
  nextSibling: Int32Array;
}

/** The callees of every stack of `t`: the builder's lists when it kept them, else derived from `prefix`. */
export function stackChildren(t: StackTable): ChildLists {
  return t.children ?? childLists(t.prefix);
}

const EXACT_LIMIT = 2n ** 53n;

/**
 * Grows a typed array to at least `n` elements, keeping its contents: doubling, but never past
 * `limit` (a known bound on the final length, e.g. the number of frames for the stacks of a
 * table), so that a table of millions of rows does not end up in twice the memory it needs.
 */
export function grown<T extends Int32Array | Uint8Array | Float64Array>(a: T, n: number, limit = Infinity): T {
  if (n <= a.length) return a;
  let cap = Math.max(a.length * 2, 16);
  while (cap < n) cap *= 2;
  cap = Math.max(n, Math.min(cap, limit));
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
 *
 * `maxRows`, when known (the number of frames of the samples), bounds the growth of the columns:
 * when stacks share little the table has nearly one row per frame, and doubling past that bound
 * would cost up to twice the memory. The child lists are handed over by `finish` (the views walk
 * them), so the table costs about 25 bytes a row in all.
 */
export class PrefixTreeBuilder {
  length = 0;
  private prefixes!: Int32Array;
  private frames!: Int32Array;
  /** First child of row r at r+1 (slot 0: the roots), -1 = none; children are prepended. */
  private firstChild!: Int32Array;
  private nextSibling!: Int32Array;
  /** Number of children of row r at r+1, counted up to 255 (only "more than LIST_LIMIT" matters). */
  private childCount!: Uint8Array;
  /** Rows with more children than this look them up in `slots`. */
  private static readonly LIST_LIMIT = 8;
  private mask = (1 << 10) - 1;
  /** Row per hash slot, -1 = empty: the children of rows with many children. */
  private slots = new Int32Array(this.mask + 1).fill(-1);
  private hashed = 0;

  constructor(private readonly maxRows = Infinity) {
    // All rows up front when the bound allows (see `initialRows`); a few when the system refuses
    // that much address space, then doubled as they fill.
    for (let cap = initialRows(maxRows); ; cap = SMALL_START) {
      try {
        this.prefixes = new Int32Array(cap);
        this.frames = new Int32Array(cap);
        this.nextSibling = new Int32Array(cap);
        // Not filled with -1 up front: each slot is set when its row is created (see `intern`),
        // so the pages of rows never created are never touched.
        this.firstChild = new Int32Array(cap + 1);
        this.childCount = new Uint8Array(cap + 1);
        break;
      } catch (e) {
        if (!(e instanceof RangeError) || cap <= SMALL_START) throw e;
      }
    }
    this.firstChild[0] = -1;
  }

  /** The slot holding row (prefix, frame), or the empty slot where it goes. */
  private slotOf(prefix: number, frame: number): number {
    let h = Math.imul(prefix, 0x9e3779b1) ^ frame;
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    h = (h ^ (h >>> 16)) & this.mask;
    const { slots, prefixes, frames } = this;
    for (;;) {
      const row = slots[h]!;
      if (row === -1 || (frames[row] === frame && prefixes[row] === prefix)) return h;
      h = (h + 1) & this.mask;
    }
  }

  private hashRow(row: number): void {
    this.slots[this.slotOf(this.prefixes[row]!, this.frames[row]!)] = row;
    if (++this.hashed * 2 > this.mask) {
      const old = this.slots;
      this.mask = this.mask * 2 + 1;
      this.slots = new Int32Array(this.mask + 1).fill(-1);
      for (let i = 0; i < old.length; i++) {
        const r = old[i]!;
        if (r !== -1) this.slots[this.slotOf(this.prefixes[r]!, this.frames[r]!)] = r;
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
      for (let c = this.firstChild[parent]!; c !== -1; c = this.nextSibling[c]!) if (this.frames[c] === frame) return c;
    }
    const row = this.length++;
    if (row === this.prefixes.length) this.grow(row + 1);
    this.prefixes[row] = prefix;
    this.frames[row] = frame;
    this.nextSibling[row] = this.firstChild[parent]!;
    this.firstChild[parent] = row;
    this.firstChild[row + 1] = -1;
    const count = this.childCount[parent]!;
    if (count < 255) this.childCount[parent] = count + 1;
    if (wide) this.hashRow(row);
    else if (count + 1 > PrefixTreeBuilder.LIST_LIMIT) for (let c = row; c !== -1; c = this.nextSibling[c]!) this.hashRow(c);
    return row;
  }

  private grow(rows: number): void {
    const limit = this.maxRows;
    this.prefixes = grown(this.prefixes, rows, limit);
    this.frames = grown(this.frames, rows, limit);
    this.nextSibling = grown(this.nextSibling, rows, limit);
    const slots = this.prefixes.length + 1;
    this.childCount = grown(this.childCount, slots, slots);
    this.firstChild = grown(this.firstChild, slots, slots);
  }

  /** The prefix and frame columns, and the child lists (views of the builder's arrays: use it no further). */
  finish(): { prefix: Int32Array; frame: Int32Array; children: ChildLists } {
    const n = this.length;
    return {
      prefix: exactLength(this.prefixes, n),
      frame: exactLength(this.frames, n),
      children: { firstChild: exactLength(this.firstChild, n + 1), nextSibling: exactLength(this.nextSibling, n) },
    };
  }
}

/**
 * Rows to allocate a column for up front, given the bound `maxRows` on the final count: all of
 * them when the bound is known and moderate. Zero-filled buffers this large are mapped from
 * zero pages, so rows never used cost address space but no resident memory, and a table of
 * millions of rows (stacks that share little) is never copied from a doubled column to the
 * next while the old one awaits collection (that copy cost up to 40% of the table at its peak).
 * Unknown or huge bounds start small and double.
 */
function initialRows(maxRows: number): number {
  return Math.max(1, maxRows <= UPFRONT_ROWS_LIMIT ? maxRows : SMALL_START);
}

const SMALL_START = 1024;

/** A zeroed column of `rows` rows, or of a few when the system refuses that much address space (it then doubles as it fills). */
function zeroedColumn(rows: number): Float64Array {
  try {
    return new Float64Array(rows);
  } catch (e) {
    if (!(e instanceof RangeError) || rows <= SMALL_START) throw e;
    return new Float64Array(SMALL_START);
  }
}

/** Columns of up to 2^27 rows (1 GiB of address space for a Float64Array) are allocated at their bound. */
const UPFRONT_ROWS_LIMIT = 2 ** 27;

/** `a` cut to `n` elements: a view when little would be wasted, else a copy (the rest freed). */
function exactLength<T extends Int32Array | Float64Array>(a: T, n: number): T {
  return (a.length - n > n / 4 ? a.slice(0, n) : a.subarray(0, n)) as T;
}

/** A growable per-row sum: doubles (exact when `exact`) or bigints; `maxRows` as for `PrefixTreeBuilder`. */
export class RowSums {
  private numbers: Float64Array | undefined;
  private readonly bigints: bigint[] = [];
  constructor(exact: boolean, private readonly maxRows = Infinity) {
    if (exact) this.numbers = zeroedColumn(initialRows(maxRows));
  }
  add(row: number, v: bigint | number): void {
    if (this.numbers) {
      this.numbers = grown(this.numbers, row + 1, this.maxRows);
      this.numbers[row]! += Number(v);
    } else {
      while (this.bigints.length <= row) this.bigints.push(0n);
      this.bigints[row]! += BigInt(v);
    }
  }
  /** The sums of rows 0..length-1. */
  finish(length: number): StackValues {
    if (this.numbers) return exactLength(grown(this.numbers, length, length), length);
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
export function buildStackTable(
  p: Profile,
  index: ProfileIndex,
  sampleTypeIndex: number,
  keep: (v: bigint) => boolean = (v) => v !== 0n,
  /** Decides per sample instead of `keep` (e.g. pprof -mean keeps samples whose count is nonzero); `keep` still bounds the sums. */
  keepSample?: (i: number) => boolean,
): StackTable {
  const col = p.samples['.values'][sampleTypeIndex]!;
  const { offsets, location_id } = p.samples.locations;
  // At most one row per frame: the bound of the columns' growth.
  const tree = new PrefixTreeBuilder(location_id.length);
  const self = new RowSums(sumsExactInDoubles(col, keep), location_id.length);
  const sampleStack = new Int32Array(col.length).fill(-1);
  for (let i = 0; i < col.length; i++) {
    const v = col[i]!;
    if (keepSample ? !keepSample(i) : !keep(v)) continue;
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
  return subtreeSumsInPlace(prefix, self.slice());
}

/** `subtreeSums` written over `values` (a view that needs no self values after this saves a copy). */
export function subtreeSumsInPlace(prefix: Int32Array, values: StackValues): StackValues {
  // One loop for both representations: `+` is exact on either.
  const sums = values as unknown as number[];
  for (let s = prefix.length - 1; s >= 0; s--) if (prefix[s]! >= 0) sums[prefix[s]!]! += sums[s]!;
  return values;
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
