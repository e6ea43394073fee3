/**
 * `summarizeRprof`: the numbers of R's `summaryRprof()` computed from a profile, in samples
 * rather than rounded seconds: self/total per function (`lines = "hide"`), per source line
 * (`lines = "show"`, keyed `basename#line`), and memory per function (`memory = "both"`, bytes).
 * Follows R's rules: `<GC>` counts as the innermost function of GC samples, a function counts
 * once per sample however often it recurs, samples without functions are left out, and a
 * sample without any srcref counts as `<no location>` in the line view.
 */

import { ProfileIndex, resolveStack, type Profile } from '@profkit/core';
import { ADAPTER_NAME } from './read.js';

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

function basename(path: string): string {
  const i = path.lastIndexOf('/');
  return i >= 0 ? path.slice(i + 1) : path;
}

function bump(m: Map<string, SummaryEntry>, key: string, self: boolean, count: bigint, mem: bigint): void {
  let e = m.get(key);
  if (!e) m.set(key, (e = { self: 0n, total: 0n, memory: 0n }));
  e.total += count;
  e.memory += mem;
  if (self) e.self += count;
}

export function summarizeRprof(p: Profile): RprofSummary {
  const { type, unit } = p.sample_types;
  const ci = type.findIndex((t, i) => t === 'samples' && unit[i] === 'count');
  const mi = type.findIndex((t, i) => t === 'memory' && unit[i] === 'bytes');
  const counts = ci >= 0 ? p.samples['.values'][ci]! : undefined;
  const mems = mi >= 0 ? p.samples['.values'][mi]! : undefined;
  const gc = p['.extensions'][ADAPTER_NAME]?.samples?.gc as ArrayLike<number> | undefined;
  const index = new ProfileIndex(p);
  const byFunction = new Map<string, SummaryEntry>();
  const byLine = new Map<string, SummaryEntry>();
  let samples = 0n;
  const n = p.samples.value.length;
  for (let i = 0; i < n; i++) {
    const count = counts ? counts[i]! : 1n;
    const mem = mems ? mems[i]! : 0n;
    const frames = resolveStack(p, i, index);
    const names: string[] = [];
    if (gc && Number(gc[i]) !== 0) names.push('<GC>');
    const lines: string[] = [];
    for (const f of frames) {
      names.push(f.name);
      if (f.line > 0) lines.push(`${basename(f.filename)}#${f.line}`);
    }
    if (names.length === 0) continue;
    samples += count;
    const seen = new Set<string>();
    names.forEach((nm, k) => {
      if (seen.has(nm)) return;
      seen.add(nm);
      bump(byFunction, nm, k === 0, count, mem);
    });
    if (lines.length === 0) lines.push('<no location>');
    const seenL = new Set<string>();
    lines.forEach((l, k) => {
      if (seenL.has(l)) return;
      seenL.add(l);
      bump(byLine, l, k === 0, count, mem);
    });
  }
  return { byFunction, byLine, samples };
}
