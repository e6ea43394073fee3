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
 * Builds the stack table of sample type `sampleTypeIndex` from the samples whose value passes
 * `keep` (default: nonzero). Location ids that name no location are skipped, as the views do.
 */
export function buildStackTable(p: Profile, index: ProfileIndex, sampleTypeIndex: number, keep: (v: bigint) => boolean = (v) => v !== 0n): StackTable {
  const col = p.samples['.values'][sampleTypeIndex]!;
  const { offsets, location_id } = p.samples.locations;
  const nSamples = col.length;
  let sumAbs = 0n;
  for (let i = 0; i < nSamples; i++) {
    const v = col[i]!;
    if (keep(v)) sumAbs += v < 0n ? -v : v;
  }
  const exact = sumAbs <= EXACT_LIMIT;
  let prefix = new Int32Array(1024);
  let frame = new Int32Array(1024);
  let selfNumber = exact ? new Float64Array(1024) : undefined;
  const selfBig: bigint[] = [];
  let length = 0;
  // Open-addressing hash table of (prefix, frame) -> stack; -1 = empty.
  let mask = (1 << 12) - 1;
  let slots = new Int32Array(mask + 1).fill(-1);
  const hash = (pre: number, fr: number): number => {
    let h = Math.imul(pre, 0x9e3779b1) ^ fr;
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    return (h ^ (h >>> 16)) & mask;
  };
  const rehash = () => {
    mask = mask * 2 + 1;
    slots = new Int32Array(mask + 1).fill(-1);
    for (let s = 0; s < length; s++) {
      let h = hash(prefix[s]!, frame[s]!);
      while (slots[h] !== -1) h = (h + 1) & mask;
      slots[h] = s;
    }
  };
  const sampleStack = new Int32Array(nSamples).fill(-1);
  for (let i = 0; i < nSamples; i++) {
    const v = col[i]!;
    if (!keep(v)) continue;
    let s = -1;
    for (let k = offsets[i + 1]! - 1; k >= offsets[i]!; k--) {
      const r = index.locations.get(location_id[k]!);
      if (r < 0) continue;
      let h = hash(s, r);
      let hit = slots[h]!;
      while (hit !== -1 && (prefix[hit] !== s || frame[hit] !== r)) {
        h = (h + 1) & mask;
        hit = slots[h]!;
      }
      if (hit === -1) {
        hit = length++;
        prefix = grown(prefix, length);
        frame = grown(frame, length);
        prefix[hit] = s;
        frame[hit] = r;
        if (selfNumber) selfNumber = grown(selfNumber, length);
        else selfBig.push(0n);
        slots[h] = hit;
        if (length * 2 > mask) rehash();
      }
      s = hit;
    }
    if (s < 0) continue;
    sampleStack[i] = s;
    if (selfNumber) selfNumber[s]! += Number(v);
    else selfBig[s]! += v;
  }
  return {
    length,
    prefix: prefix.slice(0, length),
    frame: frame.slice(0, length),
    self: selfNumber ? selfNumber.slice(0, length) : selfBig,
    sampleStack,
  };
}

/** Per-stack totals: each stack's self value plus its callees' totals (the samples through it). */
export function subtreeTotals(t: StackTable): StackValues {
  const { prefix, self } = t;
  if (self instanceof Float64Array) {
    const total = self.slice();
    for (let s = t.length - 1; s >= 0; s--) if (prefix[s]! >= 0) total[prefix[s]!]! += total[s]!;
    return total;
  }
  const total = self.slice();
  for (let s = t.length - 1; s >= 0; s--) if (prefix[s]! >= 0) total[prefix[s]!]! += total[s]!;
  return total;
}

/**
 * Visits the stacks depth first (callers before callees, callees in row order, i.e. in the
 * order samples first reached them): `enter(s)` on the way down, `exit(s)` once every callee of
 * `s` was exited. Iterative: stacks thousands of frames deep are fine.
 */
export function walkDepthFirst(t: StackTable, enter: (s: number) => void, exit: (s: number) => void): void {
  const n = t.length;
  const { prefix } = t;
  // Children lists (first child, next sibling), built backwards so that they run in row order.
  const firstChild = new Int32Array(n + 1).fill(-1);
  const nextSibling = new Int32Array(n).fill(-1);
  for (let s = n - 1; s >= 0; s--) {
    const parent = prefix[s]! + 1; // slot 0 holds the roots
    nextSibling[s] = firstChild[parent]!;
    firstChild[parent] = s;
  }
  const path = new Int32Array(n);
  let depth = 0;
  let next = firstChild[0]!;
  for (;;) {
    if (next >= 0) {
      enter(next);
      path[depth++] = next;
      next = firstChild[next + 1]!;
      continue;
    }
    if (depth === 0) return;
    const done = path[--depth]!;
    exit(done);
    next = nextSibling[done]!;
  }
}
