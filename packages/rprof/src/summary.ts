/**
 * `summarizeRprof`: the numbers of R's `summaryRprof()` computed from a profile, in samples
 * rather than rounded seconds: self/total per function (`lines = "hide"`), per source line
 * (`lines = "show"`, keyed `basename#line`), and memory per function (`memory = "both"`, bytes).
 * Follows R's rules: `<GC>` counts as the innermost function of GC samples, a function counts
 * once per sample however often it recurs, samples without functions are left out, and a
 * sample without any srcref counts as `<no location>` in the line view.
 *
 * Computed per distinct stack (`rStacks`: core's stack table with R's GC flag), not per sample:
 * the entries of a stack are the same for all its samples, so each distinct stack adds its
 * summed count and memory to its entries once.
 */

import type { Profile, ReadLimits } from '@profkit/core';
import { rStacks, sumsByGroup, type REntries } from './r-stacks.js';

export interface SummaryEntry {
  self: bigint;
  total: bigint;
  /** Bytes (`memory/bytes` sample type) of the samples the entry occurs in. */
  memory: bigint;
}

/**
 * One of `summaryRprof`'s tables, read like a `Map` from its keys (a function name, or
 * `basename#line`) in the order of the first sample that has them. The keys are interned, not
 * stored joined (see `REntries`): a key is made when it is read.
 */
export class SummaryTable implements Iterable<[string, SummaryEntry]> {
  /** @internal */
  constructor(
    private readonly keyTable: REntries,
    private readonly ids: readonly number[],
    private readonly byId: readonly (SummaryEntry | undefined)[],
  ) {}

  get size(): number {
    return this.ids.length;
  }

  get(key: string): SummaryEntry | undefined {
    const id = this.keyTable.find(key);
    return id === undefined ? undefined : this.byId[id];
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  *entries(): IterableIterator<[string, SummaryEntry]> {
    for (const id of this.ids) yield [this.keyTable.key(id), this.byId[id]!];
  }

  *keys(): IterableIterator<string> {
    for (const id of this.ids) yield this.keyTable.key(id);
  }

  *values(): IterableIterator<SummaryEntry> {
    for (const id of this.ids) yield this.byId[id]!;
  }

  [Symbol.iterator](): IterableIterator<[string, SummaryEntry]> {
    return this.entries();
  }

  forEach(f: (entry: SummaryEntry, key: string, table: SummaryTable) => void): void {
    for (const [k, e] of this.entries()) f(e, k, this);
  }
}

export interface RprofSummary {
  byFunction: SummaryTable;
  byLine: SummaryTable;
  /** Total count of the samples summarized. */
  samples: bigint;
}

export interface SummarizeOptions {
  /** `maxTableEntries` bounds the entries (functions, source lines) of each table. */
  limits?: ReadLimits;
}

/** A table being summed: entries by id, in the order they are first added. */
class TableSums {
  readonly ids: number[] = [];
  readonly byId: (SummaryEntry | undefined)[] = [];
  /** The last stack each id was counted for: an entry counts once per stack. */
  private readonly lastStack: number[] = [];
  private stack = 0;

  /** Adds `count` and `mem` to each distinct entry of `entries` (innermost first: the first is self). */
  addStack(entries: number[], count: bigint, mem: bigint): void {
    const stack = ++this.stack;
    entries.forEach((id, k) => {
      if (this.lastStack[id] === stack) return;
      this.lastStack[id] = stack;
      let e = this.byId[id];
      if (!e) {
        this.byId[id] = e = { self: 0n, total: 0n, memory: 0n };
        this.ids.push(id);
      }
      e.total += count;
      e.memory += mem;
      if (k === 0) e.self += count;
    });
  }
}

export function summarizeRprof(p: Profile, options: SummarizeOptions = {}): RprofSummary {
  const { type, unit } = p.sample_types;
  const ci = type.findIndex((t, i) => t === 'samples' && unit[i] === 'count');
  const mi = type.findIndex((t, i) => t === 'memory' && unit[i] === 'bytes');
  const stacks = rStacks(p, undefined, options.limits);
  const counts = sumsByGroup(ci >= 0 ? p.samples['.values'][ci]! : undefined, stacks);
  const mems = mi >= 0 ? sumsByGroup(p.samples['.values'][mi]!, stacks) : undefined;
  const byFunction = new TableSums();
  const byLine = new TableSums();
  let samples = 0n;
  // Groups in the order of their first sample: the tables get their keys in sample order.
  for (const g of stacks.order) {
    const names = stacks.entries(g, 'hide');
    if (names.length === 0) continue;
    const count = counts[g]!;
    const mem = mems ? mems[g]! : 0n;
    samples += count;
    byFunction.addStack(names, count, mem);
    byLine.addStack(stacks.entries(g, 'show'), count, mem);
  }
  return {
    byFunction: new SummaryTable(stacks.keys.hide, byFunction.ids, byFunction.byId),
    byLine: new SummaryTable(stacks.keys.show, byLine.ids, byLine.byId),
    samples,
  };
}
