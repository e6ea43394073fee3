/**
 * The R summaries computed per distinct stack (`summarizeRprof` and `rAccounting` on core's
 * stack table) against a plain per-sample computation of summaryRprof's rules, on random
 * profiles: Rprof files with GC samples, memory columns, srcrefs, recursion and memory-only
 * lines, and built profiles with inline frames, zero values and no count column.
 */

import { describe, expect, it } from 'vitest';
import { ProfileBuilder, ProfileIndex, findSampleType, resolveStack, topReport, type Profile } from '@profkit/core/node';
import { seededRandom } from '@profkit/test-utils';
import { GC_FRAME, NO_LOCATION, rAccounting, readRprofBytes, summarizeRprof, type SummaryEntry } from '../src/index.js';

type Table = Iterable<[string, SummaryEntry]> & { get(key: string): SummaryEntry | undefined };

/** A summary's tables as entry lists (in their order), each entry also looked up by its key. */
function tables(s: { byFunction: Table; byLine: Table; samples: bigint }) {
  const list = (t: Table) => [...t].map(([k, e]) => [k, e, t.get(k)]);
  return { byFunction: list(s.byFunction), byLine: list(s.byLine), samples: s.samples };
}

/** summaryRprof's rules sample by sample: the reference the per-stack computation must equal. */
function summarizePerSample(p: Profile): { byFunction: Map<string, SummaryEntry>; byLine: Map<string, SummaryEntry>; samples: bigint } {
  const { type, unit } = p.sample_types;
  const ci = type.findIndex((t, i) => t === 'samples' && unit[i] === 'count');
  const mi = type.findIndex((t, i) => t === 'memory' && unit[i] === 'bytes');
  const gc = p['.extensions'].rprof?.samples?.gc as ArrayLike<number> | undefined;
  const index = new ProfileIndex(p);
  const byFunction = new Map<string, SummaryEntry>();
  const byLine = new Map<string, SummaryEntry>();
  const add = (m: Map<string, SummaryEntry>, keys: string[], count: bigint, mem: bigint) => {
    new Set(keys).forEach((key) => {
      const e = m.get(key) ?? { self: 0n, total: 0n, memory: 0n };
      m.set(key, e);
      e.total += count;
      e.memory += mem;
      if (key === keys[0]) e.self += count;
    });
  };
  let samples = 0n;
  for (let i = 0; i < p.samples.value.length; i++) {
    const frames = resolveStack(p, i, index);
    const names = [...(gc && Number(gc[i]) !== 0 ? [GC_FRAME] : []), ...frames.map((f) => f.name)];
    if (names.length === 0) continue;
    const count = ci >= 0 ? p.samples['.values'][ci]![i]! : 1n;
    const mem = mi >= 0 ? p.samples['.values'][mi]![i]! : 0n;
    samples += count;
    add(byFunction, names, count, mem);
    const lines = frames.filter((f) => f.line > 0).map((f) => `${f.filename.slice(f.filename.lastIndexOf('/') + 1)}#${f.line}`);
    add(byLine, lines.length > 0 ? lines : [NO_LOCATION], count, mem);
  }
  return { byFunction, byLine, samples };
}

/** A random Rprof file: memory, GC and line profiling; recursion, srcrefs, GC and memory-only samples. */
function randomRprof(seed: number): Uint8Array {
  const r = seededRandom(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)]!;
  const names = ['f', 'g', 'h', 'lapply', 'FUN', '<Anonymous>', 'x[["a"]]', 'pkg::fit', 'größe€'];
  const files = 1 + Math.floor(r() * 3);
  const out = ['memory profiling: GC profiling: line profiling: sample.interval=20000'];
  for (let f = 1; f <= files; f++) out.push(`#File ${f}: ${pick(['R/a.R', '/abs/b c.R', 'c.R'])}${f}`);
  // A few stacks that samples repeat (as real profiles do), and fresh ones.
  const stacks: string[] = [];
  for (let k = 0; k < 1 + Math.floor(r() * 12); k++) {
    const frames: string[] = [];
    for (let d = 0; d < Math.floor(r() * 7); d++) frames.push(`${r() < 0.4 ? `${1 + Math.floor(r() * files)}#${1 + Math.floor(r() * 9)} ` : ''}"${pick(names)}"`);
    stacks.push(frames.join(' '));
  }
  for (let i = 0; i < 200; i++) {
    const mem = `:${Math.floor(r() * 5000)}:${Math.floor(r() * 300)}:${Math.floor(r() * 9000)}:${Math.floor(r() * 20)}:`;
    const trace = [...(r() < 0.15 ? ['"<GC>"'] : []), pick(stacks)].filter((t) => t !== '').join(' ');
    out.push(`${mem}${trace}${trace !== '' && r() < 0.5 ? ' ' : ''}`);
  }
  return new TextEncoder().encode(out.join('\n') + '\n');
}

/** A random built profile: inline frames, shared stacks, zero and huge values, optionally no count column. */
function randomBuilt(seed: number): Profile {
  const r = seededRandom(seed);
  const withCount = r() < 0.7;
  const b = new ProfileBuilder({ sampleTypes: [...(withCount ? [{ type: 'samples', unit: 'count' }] : []), { type: 'memory', unit: 'bytes' }, { type: 'time', unit: 'nanoseconds' }] });
  const fns = ['a', 'b', 'c', 'd', 'a'].map((name, k) => b.internFunction({ name, filename: `/src/${k % 2 ? 'x' : 'y'}.R` }));
  const locs = Array.from({ length: 8 }, (_, k) =>
    b.internLocation({ functionId: fns[k % fns.length]!, line: k % 3, inlinedInto: k % 4 === 1 ? [{ functionId: fns[(k + 2) % fns.length]!, line: 7 }] : undefined }),
  );
  const stacks = Array.from({ length: 6 }, () => Array.from({ length: Math.floor(r() * 5) }, () => locs[Math.floor(r() * locs.length)]!));
  const huge = r() < 0.3 ? 2n ** 50n : 1n; // sums past 2^53: the bigint path
  for (let i = 0; i < 100; i++) {
    const values = [...(withCount ? [BigInt(Math.floor(r() * 3))] : []), BigInt(Math.floor(r() * 1000)) * huge, BigInt(Math.floor(r() * 1e6))];
    b.addSample(stacks[Math.floor(r() * stacks.length)]!, values);
  }
  return b.build();
}

/** `-top` of `q` as name -> [flat, cum]. */
function topOf(q: Profile): Map<string, [bigint, bigint]> {
  const rep = topReport(q, { sampleTypeIndex: findSampleType(q, 'samples'), nodeFraction: 0 });
  return new Map(rep.table.entries.map((e) => [e.name, [BigInt(e.flat), BigInt(e.cum)]]));
}

describe('R summaries per distinct stack = per sample, on random profiles', () => {
  it.each(Array.from({ length: 40 }, (_, k) => k + 1))('Rprof file, seed %i', (seed) => {
    const p = readRprofBytes(randomRprof(seed)).profile;
    const want = summarizePerSample(p);
    const got = summarizeRprof(p);
    // Entries in the same order too (the first sample that has them).
    expect(tables(got)).toEqual(tables(want));
    expect([...got.byFunction.keys()]).toEqual([...want.byFunction.keys()]);
    expect([...got.byLine.keys()]).toEqual([...want.byLine.keys()]);
    // R's accounting as a profile: one sample per counted sample, and its -top is the same table.
    const q = rAccounting(p);
    expect(q.samples.value.length).toBe(Number(want.samples));
    expect(topOf(q)).toEqual(new Map([...want.byFunction].map(([k, e]) => [k, [e.self, e.total]])));
    expect(topOf(rAccounting(p, 'show'))).toEqual(new Map([...want.byLine].map(([k, e]) => [k, [e.self, e.total]])));
  });

  it.each(Array.from({ length: 20 }, (_, k) => k + 100))('built profile (inline frames, zero values, sums past 2^53), seed %i', (seed) => {
    const p = randomBuilt(seed);
    expect(tables(summarizeRprof(p))).toEqual(tables(summarizePerSample(p)));
  });
});
