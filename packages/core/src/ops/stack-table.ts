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
  /**
   * Sum of the values of the samples whose stack is exactly this one. On `buildStackTable`'s
   * tables, `prefix` and `self` are getters that make the column on first read (a spread
   * `{ ...table }` makes both; assigning throws): walks read `stackChildren` and `sparseSelf`.
   */
  self: StackValues;
  /** The stack of each sample, -1 for samples left out (value filtered, or no known frame). */
  sampleStack: Int32Array;
  /**
   * The callees of every stack as the builder linked them (see `childLists` for the layout; here
   * in no particular order). Absent: `stackChildren` derives them from `prefix`.
   */
  children?: ChildLists;
  /** The prefix column in compact form, as the builder made it (see `PrefixJumps`). Absent: derived when needed. */
  jumps?: PrefixJumps;
}

/**
 * Which stacks are the callee of the row before them (most: a sample's new tail is made of
 * consecutive rows), and the prefixes of the others ("jumps"), in row order: the prefix column in
 * a bit per row plus 8 bytes per jump (call-graph-walk.ts climbs paths with it).
 */
export interface PrefixJumps {
  /** Bit `s & 31` of word `s >>> 5`: the prefix of row `s` is `s - 1`. */
  previous: Uint32Array;
  /** The rows whose bit is clear, ascending, and their prefixes (-1 for a root). */
  rows: Int32Array;
  prefixes: Int32Array;
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
 *
 * Without child lists (`childLists` false, for views that climb paths instead: `finishCompact`),
 * a row's callees are the row after it when that row's prefix is the row before it (a bit of
 * `PrefixJumps.previous`), and the jumps, all in the hash table: about 5 bytes a row when stacks
 * share little (4 of the frame, a bit, the jumps' share), where the lists cost 13 at their peak.
 */
export class PrefixTreeBuilder {
  length = 0;
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
  /**
   * The prefix of the row in each slot. Rows keep no prefix column of their own (the jumps say
   * it, and `finish` derives the column only for callers that read it): 4 bytes a row less.
   */
  private slotPrefixes = new Int32Array(this.mask + 1);
  private hashed = 0;
  /**
   * Mixed into the slots' hash, drawn per builder: the rows' frames and numbers follow from the
   * input, and with a fixed hash a profile can be made whose rows all land in a few slots (each
   * new one then probes past all of them: 60,000 such rows took 5.6 s to intern, 120,000 33 s).
   * The rows do not depend on the slots.
   */
  private readonly seed = (Math.random() * 2 ** 32) | 0;
  /** `PrefixJumps` as rows are made: a bit per row, and the jumps' rows and prefixes. */
  private previous!: Uint32Array;
  private jumpRows = new Int32Array(64);
  private jumpPrefixes = new Int32Array(64);
  private jumps = 0;

  constructor(
    private readonly maxRows = Infinity,
    private readonly childLists = true,
  ) {
    // All rows up front when the bound allows (see `initialRows`); a few when the system refuses
    // that much address space, then doubled as they fill.
    for (let cap = initialRows(maxRows); ; cap = SMALL_START) {
      try {
        this.frames = new Int32Array(cap);
        const listed = childLists ? cap : 0;
        this.nextSibling = new Int32Array(listed);
        // Not filled with -1 up front: each slot is set when its row is created (see `intern`),
        // so the pages of rows never created are never touched.
        this.firstChild = new Int32Array(listed + 1);
        this.childCount = new Uint8Array(listed + 1);
        this.previous = new Uint32Array((cap + 31) >>> 5);
        break;
      } catch (e) {
        if (!(e instanceof RangeError) || cap <= SMALL_START) throw e;
      }
    }
    this.firstChild[0] = -1;
  }

  /** The slot holding row (prefix, frame), or the empty slot where it goes. */
  private slotOf(prefix: number, frame: number): number {
    let h = Math.imul(prefix ^ this.seed, 0x9e3779b1) ^ frame;
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    h = (h ^ (h >>> 16)) & this.mask;
    const { slots, slotPrefixes, frames } = this;
    for (;;) {
      const row = slots[h]!;
      if (row === -1 || (frames[row] === frame && slotPrefixes[h] === prefix)) return h;
      h = (h + 1) & this.mask;
    }
  }

  /** Adds `row`, a callee of `prefix`, to the hash table. */
  private hashRow(row: number, prefix: number): void {
    const h = this.slotOf(prefix, this.frames[row]!);
    this.slots[h] = row;
    this.slotPrefixes[h] = prefix;
    if (++this.hashed * 2 > this.mask) {
      const [oldRows, oldPrefixes] = [this.slots, this.slotPrefixes];
      this.mask = this.mask * 2 + 1;
      this.slots = new Int32Array(this.mask + 1).fill(-1);
      this.slotPrefixes = new Int32Array(this.mask + 1);
      for (let i = 0; i < oldRows.length; i++) {
        const r = oldRows[i]!;
        if (r === -1) continue;
        const to = this.slotOf(oldPrefixes[i]!, this.frames[r]!);
        this.slots[to] = r;
        this.slotPrefixes[to] = oldPrefixes[i]!;
      }
    }
  }

  /** The row (prefix, frame), added when new. */
  intern(prefix: number, frame: number): number {
    if (!this.childLists) return this.internWithoutLists(prefix, frame);
    const parent = prefix + 1;
    const wide = this.childCount[parent]! > PrefixTreeBuilder.LIST_LIMIT;
    // The newest row has no callees yet (they would be newer still): a stack's new tail, row
    // after row, needs no lookup.
    if (prefix !== this.length - 1) {
      if (wide) {
        const hit = this.slots[this.slotOf(prefix, frame)]!;
        if (hit !== -1) return hit;
      } else {
        for (let c = this.firstChild[parent]!; c !== -1; c = this.nextSibling[c]!) if (this.frames[c] === frame) return c;
      }
    }
    const row = this.length++;
    if (row === this.frames.length) this.grow(row + 1);
    this.frames[row] = frame;
    if (prefix === row - 1) this.previous[row >>> 5]! |= 1 << (row & 31);
    else this.addJump(row, prefix);
    this.nextSibling[row] = this.firstChild[parent]!;
    this.firstChild[parent] = row;
    this.firstChild[row + 1] = -1;
    const count = this.childCount[parent]!;
    if (count < 255) this.childCount[parent] = count + 1;
    if (wide) this.hashRow(row, prefix);
    else if (count + 1 > PrefixTreeBuilder.LIST_LIMIT) for (let c = row; c !== -1; c = this.nextSibling[c]!) this.hashRow(c, prefix);
    return row;
  }

  /** `intern` without child lists (see the class comment). */
  private internWithoutLists(prefix: number, frame: number): number {
    // The newest row has no callees yet, as in `intern`.
    if (prefix !== this.length - 1) {
      const next = prefix + 1;
      if ((this.previous[next >>> 5]! >>> (next & 31)) & 1 && this.frames[next] === frame) return next;
      const hit = this.slots[this.slotOf(prefix, frame)]!;
      if (hit !== -1) return hit;
    }
    const row = this.length++;
    if (row === this.frames.length) this.grow(row + 1);
    this.frames[row] = frame;
    if (prefix === row - 1) this.previous[row >>> 5]! |= 1 << (row & 31);
    else {
      this.addJump(row, prefix);
      this.hashRow(row, prefix);
    }
    return row;
  }

  private addJump(row: number, prefix: number): void {
    if (this.jumps === this.jumpRows.length) {
      this.jumpRows = grown(this.jumpRows, this.jumps + 1, this.maxRows);
      this.jumpPrefixes = grown(this.jumpPrefixes, this.jumps + 1, this.maxRows);
    }
    this.jumpRows[this.jumps] = row;
    this.jumpPrefixes[this.jumps++] = prefix;
  }

  private grow(rows: number): void {
    const limit = this.maxRows;
    this.frames = grown(this.frames, rows, limit);
    if (this.childLists) {
      this.nextSibling = grown(this.nextSibling, rows, limit);
      const slots = this.frames.length + 1;
      this.childCount = grown(this.childCount, slots, slots);
      this.firstChild = grown(this.firstChild, slots, slots);
    }
    const words = (this.frames.length + 31) >>> 5;
    if (words > this.previous.length) {
      const previous = new Uint32Array(words);
      previous.set(this.previous);
      this.previous = previous;
    }
  }

  /**
   * The frame column, the jumps and the child lists (views of the builder's arrays: use it no
   * further), and the prefix column, derived from the jumps when first read (`prefixFromJumps`).
   */
  finish(): { readonly prefix: Int32Array; frame: Int32Array; children: ChildLists; jumps: PrefixJumps } {
    if (!this.childLists) throw new Error('PrefixTreeBuilder: made without child lists (finishCompact)');
    const n = this.length;
    // (Assigned onto, not spread: a spread would read the lazy prefix column.)
    return Object.assign(this.finishCompact(), { children: { firstChild: exactLength(this.firstChild, n + 1), nextSibling: exactLength(this.nextSibling, n) } });
  }

  /**
   * The frame column and the jumps of a builder made without child lists, and the prefix column,
   * derived from the jumps when first read.
   */
  finishCompact(): { readonly prefix: Int32Array; frame: Int32Array; jumps: PrefixJumps } {
    const n = this.length;
    const jumps = this.jumpsMade();
    let prefix: Int32Array | undefined;
    return {
      get prefix() {
        return (prefix ??= prefixFromJumps(jumps, n));
      },
      frame: exactLength(this.frames, n),
      jumps,
    };
  }

  private jumpsMade(): PrefixJumps {
    const n = this.length;
    return { previous: this.previous.slice(0, (n + 31) >>> 5), rows: this.jumpRows.slice(0, this.jumps), prefixes: this.jumpPrefixes.slice(0, this.jumps) };
  }
}

/** The caller of each of the `n` rows of a prefix tree given by its jumps (-1 for the roots). */
export function prefixFromJumps(jumps: PrefixJumps, n: number): Int32Array {
  const prefix = new Int32Array(n);
  for (let s = 0; s < n; s++) prefix[s] = s - 1;
  jumps.rows.forEach((row, k) => (prefix[row] = jumps.prefixes[k]!));
  return prefix;
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
 * The self sums of a table as the rows that have samples of their own, and their sums: what the
 * call graph walk reads. On tables of stacks that share little, few rows have samples of their
 * own (about 4% on a profile of random stacks), so this costs ~1 bit a row where the dense
 * `self` column costs 8 bytes.
 */
export interface SparseSelf {
  /** Bit `s & 31` of word `s >>> 5` is set when row `s` has samples of its own. */
  bits: Uint32Array;
  /** Number of set bits in the words before each word. */
  rank: Int32Array;
  /** The sums of the rows whose bit is set, in row order: doubles when exact, bigints otherwise. */
  sums: StackValues;
}

/** The position in `sums` of row `s` of `self`, or -1 when the row has no samples of its own. */
export function sparseSlot(self: SparseSelf, s: number): number {
  const word = self.bits[s >>> 5]!;
  const bit = s & 31;
  if (((word >>> bit) & 1) === 0) return -1;
  return self.rank[s >>> 5]! + popcount(word & ((1 << bit) - 1));
}

/** The number of set bits of the 32-bit word `x` (the rank of a bit in the tables' bit columns). */
export function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

/** `bits` with its rank array, and the sums column its set bits need (zeroed). */
function sparseLayout(bits: Uint32Array, exact: boolean): SparseSelf {
  const rank = new Int32Array(bits.length);
  let count = 0;
  for (let w = 0; w < bits.length; w++) {
    rank[w] = count;
    count += popcount(bits[w]!);
  }
  return { bits, rank, sums: exact ? new Float64Array(count) : new Array<bigint>(count).fill(0n) };
}

/** Tables built by `buildStackTable` whose dense `self` column was never read: their sums. */
const sparseSelfOfTable = new WeakMap<StackTable, SparseSelf>();

/**
 * The self sums of `t` in sparse form: the builder's own for a table whose `self` column was never
 * read (reading it makes the dense column the only truth: it may be written to), else derived
 * from that column (rows whose sum is 0 count as having none: they add nothing).
 */
export function sparseSelf(t: StackTable): SparseSelf {
  const built = sparseSelfOfTable.get(t);
  if (built) return built;
  const { self, length } = t;
  const bits = new Uint32Array((length + 31) >>> 5);
  const isZero = self instanceof Float64Array ? (s: number) => self[s] === 0 : (s: number) => self[s] === 0n;
  for (let s = 0; s < length; s++) if (!isZero(s)) bits[s >>> 5]! |= 1 << (s & 31);
  const out = sparseLayout(bits, self instanceof Float64Array);
  const sums = out.sums as unknown as number[];
  for (let s = 0, k = 0; s < length; s++) if (!isZero(s)) sums[k++] = (self as unknown as number[])[s]!;
  return out;
}

/** The dense self column of `sparse` over `length` rows. */
function denseSelf(sparse: SparseSelf, length: number): StackValues {
  const exact = sparse.sums instanceof Float64Array;
  const self = exact ? new Float64Array(length) : new Array<bigint>(length).fill(0n);
  const sums = sparse.sums as unknown as number[];
  for (let w = 0, k = 0; w < sparse.bits.length; w++) {
    for (let word = sparse.bits[w]!; word !== 0; word &= word - 1) (self as unknown as number[])[w * 32 + (31 - Math.clz32(word & -word))] = sums[k++]!;
  }
  return self;
}

/**
 * Builds the stack table of sample type `sampleTypeIndex` from the samples whose value passes
 * `keep` (default: nonzero). Location ids that name no location are skipped, as the views do.
 *
 * The table's `prefix` and `self` columns are made when first read: the call graph (`top`,
 * `tree`, `peek`) reads neither (it walks the child lists and `sparseSelf`), and on profiles
 * whose stacks share little they are 12 of the table's 24 bytes a row.
 */
export function buildStackTable(
  p: Profile,
  index: ProfileIndex,
  sampleTypeIndex: number,
  keep: (v: bigint) => boolean = (v) => v !== 0n,
  /** Decides per sample instead of `keep` (e.g. pprof -mean keeps samples whose count is nonzero); `keep` still bounds the sums. */
  keepSample?: (i: number) => boolean,
  /** `childLists` false: a table without child lists (for views that climb paths, see `PrefixTreeBuilder`; `stackChildren` derives them). */
  { childLists = true }: { childLists?: boolean } = {},
): StackTable {
  const col = p.samples['.values'][sampleTypeIndex]!;
  const { offsets, location_id } = p.samples.locations;
  // At most one row per frame: the bound of the columns' growth.
  const tree = new PrefixTreeBuilder(location_id.length, childLists);
  const sampleStack = new Int32Array(col.length).fill(-1);
  const locationRows = index.locations;
  const denseRows = locationRows.denseRows;
  for (let i = 0; i < col.length; i++) {
    if (keepSample ? !keepSample(i) : !keep(col[i]!)) continue;
    let s = -1;
    for (let k = offsets[i + 1]! - 1; k >= offsets[i]!; k--) {
      const id = location_id[k]!;
      const r = denseRows ? (id < denseRows.length ? denseRows[id]! : -1) : locationRows.get(id);
      if (r >= 0) s = tree.intern(s, r);
    }
    sampleStack[i] = s;
  }
  // The sums, once the rows are known: a bit per row, a sum per row with samples of its own.
  const length = tree.length;
  const bits = new Uint32Array((length + 31) >>> 5);
  for (let i = 0; i < col.length; i++) {
    const s = sampleStack[i]!;
    if (s >= 0) bits[s >>> 5]! |= 1 << (s & 31);
  }
  const sparse = sparseLayout(bits, sumsExactInDoubles(col, keep));
  const { sums } = sparse;
  if (sums instanceof Float64Array) {
    for (let i = 0; i < col.length; i++) if (sampleStack[i]! >= 0) sums[sparseSlot(sparse, sampleStack[i]!)]! += Number(col[i]!);
  } else {
    for (let i = 0; i < col.length; i++) if (sampleStack[i]! >= 0) sums[sparseSlot(sparse, sampleStack[i]!)]! += col[i]!;
  }
  // (Not spread: that would read the lazy prefix column.)
  const built: { readonly prefix: Int32Array; frame: Int32Array; children?: ChildLists; jumps: PrefixJumps } = childLists ? tree.finish() : tree.finishCompact();
  let self: StackValues | undefined;
  const table: StackTable = {
    length,
    get prefix() {
      return built.prefix;
    },
    frame: built.frame,
    get self() {
      if (!self) {
        self = denseSelf(sparse, length);
        sparseSelfOfTable.delete(table);
      }
      return self;
    },
    sampleStack,
    ...(built.children ? { children: built.children } : {}),
    jumps: built.jumps,
  };
  sparseSelfOfTable.set(table, sparse);
  return table;
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
