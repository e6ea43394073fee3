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

import type { Profile } from '@profkit/core';
import { rStacks, sumsByGroup } from './r-stacks.js';

export interface SummaryEntry {
  self: bigint;
  total: bigint;
  /** Bytes (`memory/bytes` sample type) of the samples the entry occurs in. */
  memory: bigint;
}

export interface RprofSummary {
  byFunction: Map<string, SummaryEntry>;
  byLine: Map<string, SummaryEntry>;
  /** Total count of the samples summarized. */
  samples: bigint;
}

/** Adds `count` and `mem` to each distinct entry of `entries` (innermost first: the first is self). */
function addStack(m: Map<string, SummaryEntry>, entries: string[], count: bigint, mem: bigint): void {
  const seen = new Set<string>();
  entries.forEach((key, k) => {
    if (seen.has(key)) return;
    seen.add(key);
    let e = m.get(key);
    if (!e) m.set(key, (e = { self: 0n, total: 0n, memory: 0n }));
    e.total += count;
    e.memory += mem;
    if (k === 0) e.self += count;
  });
}

export function summarizeRprof(p: Profile): RprofSummary {
  const { type, unit } = p.sample_types;
  const ci = type.findIndex((t, i) => t === 'samples' && unit[i] === 'count');
  const mi = type.findIndex((t, i) => t === 'memory' && unit[i] === 'bytes');
  const stacks = rStacks(p);
  const counts = sumsByGroup(ci >= 0 ? p.samples['.values'][ci]! : undefined, stacks);
  const mems = mi >= 0 ? sumsByGroup(p.samples['.values'][mi]!, stacks) : undefined;
  const byFunction = new Map<string, SummaryEntry>();
  const byLine = new Map<string, SummaryEntry>();
  let samples = 0n;
  // Groups in the order of their first sample: the tables get their keys in sample order.
  for (const g of stacks.order) {
    const names = stacks.entries(g, 'hide');
    if (names.length === 0) continue;
    const count = counts[g]!;
    const mem = mems ? mems[g]! : 0n;
    samples += count;
    addStack(byFunction, names, count, mem);
    addStack(byLine, stacks.entries(g, 'show'), count, mem);
  }
  return { byFunction, byLine, samples };
}
