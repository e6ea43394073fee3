/**
 * The stack table and the views computed from it (`callGraph`, `flameTree`, `toFolded`), checked
 * against straightforward per-sample computations of the same definitions (pprof's: flat on the
 * leaf, cum and calls counted once per sample) on random profiles with recursion, inline frames,
 * zero and negative values and unknown location ids.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { seededRandom } from '@profkit/test-utils';
import { ProfileBuilder, ProfileIndex, callGraph, flameTree, locationFrames, renderFlameGraph, toFolded, treeReport, type Profile } from '../src/node/index.js';
import { PrefixTreeBuilder, RowSums, buildStackTable, childLists, subtreeTotals } from '../src/ops/stack-table.js';
import { boundedFlameTree } from '../src/flame/index.js';

/** A random profile: few functions (so stacks recurse and share prefixes), inline lines, odd values. */
function randomProfile(seed: number, bigValues = false, { samples = 300, functions = 6, locations = 10, maxDepth = 7 } = {}): Profile {
  const r = seededRandom(seed);
  const int = (n: number) => Math.floor(r() * n);
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
  const fns = Array.from({ length: functions }, (_, i) => b.internFunction({ name: `f${i}`, filename: `file${i % 3}.go` }));
  const locs = Array.from({ length: locations }, () =>
    b.internLocation({
      functionId: fns[int(fns.length)]!,
      line: 1 + int(3),
      inlinedInto: r() < 0.4 ? [{ functionId: fns[int(fns.length)]!, line: 1 + int(3) }] : [],
    }),
  );
  for (let i = 0; i < samples; i++) {
    const depth = int(maxDepth);
    const stack = Array.from({ length: depth }, () => locs[int(locs.length)]!);
    const value = bigValues ? (1n << 61n) + BigInt(int(1000)) : BigInt(int(5) - 1); // -1..3, zeros too
    b.addSample(stack, [value]);
  }
  const p = b.build();
  // An unknown location id in some stacks: skipped by every view.
  if (p.samples.locations.location_id.length > 3) p.samples.locations.location_id[3] = 9999;
  return p;
}

/** Sample i's frames (names), outermost first, unknown location ids skipped. */
function sampleFrames(p: Profile, index: ProfileIndex, i: number): string[] {
  const { offsets, location_id } = p.samples.locations;
  const out: string[] = [];
  for (let k = offsets[i + 1]! - 1; k >= offsets[i]!; k--) {
    const row = index.locations.get(location_id[k]!);
    if (row >= 0) out.push(...locationFrames(p, index, row).map((f) => f.name).reverse());
  }
  return out;
}

/** pprof's graph by function, untrimmed, computed sample by sample. */
function referenceGraph(p: Profile) {
  const index = new ProfileIndex(p);
  const col = p.samples['.values'][0]!;
  const flat = new Map<string, bigint>();
  const cum = new Map<string, bigint>();
  const calls = new Map<string, bigint>();
  const add = (m: Map<string, bigint>, k: string, v: bigint) => m.set(k, (m.get(k) ?? 0n) + v);
  for (let i = 0; i < col.length; i++) {
    const v = col[i]!;
    if (v === 0n) continue;
    const frames = sampleFrames(p, index, i);
    if (frames.length === 0) continue;
    for (const f of new Set(frames)) add(cum, f, v);
    add(flat, frames[frames.length - 1]!, v);
    const seen = new Set<string>();
    for (let k = 1; k < frames.length; k++) {
      const key = `${frames[k - 1]} -> ${frames[k]}`;
      if (frames[k - 1] !== frames[k] && !seen.has(key)) {
        seen.add(key);
        add(calls, key, v);
      }
    }
  }
  return { flat, cum, calls };
}

describe('stack table', () => {
  it('holds each distinct stack once, callers first, with the samples summed per stack', () => {
    const p = randomProfile(1);
    const index = new ProfileIndex(p);
    const t = buildStackTable(p, index, 0);
    const col = p.samples['.values'][0]!;
    for (let s = 0; s < t.length; s++) expect(t.prefix[s]!).toBeLessThan(s);
    const seen = new Set<string>();
    for (let s = 0; s < t.length; s++) {
      const key = `${t.prefix[s]}/${t.frame[s]}`;
      expect(seen.has(key)).toBe(false);
      seen.add(key);
    }
    const expectedSelf = new Map<number, bigint>();
    for (let i = 0; i < col.length; i++) {
      const s = t.sampleStack[i]!;
      const rows: number[] = [];
      for (let a = s; a >= 0; a = t.prefix[a]!) rows.push(t.frame[a]!);
      const { offsets, location_id } = p.samples.locations;
      const known: number[] = [];
      for (let k = offsets[i]!; k < offsets[i + 1]!; k++) if (index.locations.get(location_id[k]!) >= 0) known.push(index.locations.get(location_id[k]!));
      if (col[i] === 0n || known.length === 0) {
        expect(s).toBe(-1);
        continue;
      }
      expect(rows).toEqual(known);
      expectedSelf.set(s, (expectedSelf.get(s) ?? 0n) + col[i]!);
    }
    for (let s = 0; s < t.length; s++) expect(BigInt(t.self[s]!)).toBe(expectedSelf.get(s) ?? 0n);
    const totals = subtreeTotals(t);
    let roots = 0n;
    for (let s = 0; s < t.length; s++) if (t.prefix[s] === -1) roots += BigInt(totals[s]!);
    expect(roots).toBe([...expectedSelf.values()].reduce((x, y) => x + y, 0n));
  });

  it('sums in bigints when the values could exceed 2^53, exactly', () => {
    const p = randomProfile(2, true);
    const t = buildStackTable(p, new ProfileIndex(p), 0);
    expect(t.self).toBeInstanceOf(Array);
    const ref = referenceGraph(p);
    const g = callGraph(p, { nodeFraction: 0, edgeFraction: 0 });
    for (const n of g.nodes) {
      expect(n.flat).toBe(ref.flat.get(n.name) ?? 0n);
      expect(n.cum).toBe(ref.cum.get(n.name));
    }
    expect(g.nodes.some((n) => n.cum > 2n ** 63n)).toBe(true);
  });
});

describe('views from the stack table', () => {
  // The last two grow the stack table past its first allocations (thousands of stacks, wide callers).
  const shapes = [{}, {}, {}, {}, { samples: 3000, functions: 40, locations: 300, maxDepth: 14 }, { samples: 4000, functions: 200, locations: 2000, maxDepth: 6 }];
  shapes.forEach((shape, k) => {
    const seed = 3 + k;
    it(`seed ${seed}: callGraph has the per-sample flat, cum (once per sample under recursion) and call weights`, () => {
      const p = randomProfile(seed, false, shape);
      const ref = referenceGraph(p);
      const g = callGraph(p, { nodeFraction: 0, edgeFraction: 0 });
      const live = [...ref.cum.keys()].filter((k) => ref.cum.get(k) !== 0n || (ref.flat.get(k) ?? 0n) !== 0n).sort();
      expect(g.nodes.map((n) => n.name).sort()).toEqual(live);
      for (const n of g.nodes) {
        expect([n.name, n.flat, n.cum]).toEqual([n.name, ref.flat.get(n.name) ?? 0n, ref.cum.get(n.name)]);
        for (const e of n.out) expect([n.name, e.weight]).toEqual([n.name, ref.calls.get(`${n.name} -> ${g.nodes[e.dst]!.name}`)]);
      }
      const edges = g.nodes.reduce((k, n) => k + n.out.length, 0);
      const refEdges = [...ref.calls.entries()].filter(([k]) => k.split(' -> ').every((name) => live.includes(name))).length;
      expect(edges).toBe(refEdges);
    });

    it(`seed ${seed}: flameTree and toFolded match the per-sample trees`, () => {
      const p = randomProfile(seed, false, shape);
      const index = new ProfileIndex(p);
      const col = p.samples['.values'][0]!;
      const folded = new Map<string, bigint>();
      type Ref = { value: bigint; self: bigint; children: Map<string, Ref> };
      const root: Ref = { value: 0n, self: 0n, children: new Map() };
      for (let i = 0; i < col.length; i++) {
        const v = col[i]!;
        const frames = sampleFrames(p, index, i);
        if (v !== 0n && frames.length > 0) folded.set(frames.join(';'), (folded.get(frames.join(';')) ?? 0n) + v);
        if (v <= 0n) continue;
        let n = root;
        n.value += v;
        for (const f of frames) {
          let c = n.children.get(f);
          if (!c) n.children.set(f, (c = { value: 0n, self: 0n, children: new Map() }));
          c.value += v;
          n = c;
        }
        n.self += v;
      }
      const expected = [...folded.keys()].filter((k) => folded.get(k) !== 0n).sort().map((k) => `${k} ${folded.get(k)}\n`).join('');
      expect(toFolded(p)).toBe(expected);
      const plain = (name: string, r: Ref): unknown => ({
        name,
        value: r.value,
        self: r.self,
        children: [...r.children.keys()].sort().map((k) => plain(k, r.children.get(k)!)),
      });
      expect(flameTree(p)).toEqual(plain('all', root));
    });
  });

  it('peek collects only the calls of the printed nodes, each as in the full graph', () => {
    const p = randomProfile(9, false, { samples: 2000, functions: 30, locations: 200, maxDepth: 10 });
    const full = callGraph(p, { nodeFraction: 0, edgeFraction: 0 });
    const calls = (g: typeof full, n: (typeof full.nodes)[number]) => ({
      in: n.in.map((e) => [g.nodes[e.src]!.name, e.weight, e.inline, e.residual]),
      out: n.out.map((e) => [g.nodes[e.dst]!.name, e.weight, e.inline, e.residual]),
    });
    const rep = treeReport(p, { symbol: /^f1\d?$/ });
    expect(rep.printed.length).toBeGreaterThan(1);
    for (const k of rep.printed) {
      const n = rep.graph.nodes[k]!;
      expect(calls(rep.graph, n)).toEqual(calls(full, full.nodes.find((m) => m.name === n.name)!));
    }
    const others = rep.graph.nodes.filter((_, k) => !rep.printed.includes(k));
    for (const n of others) for (const e of [...n.in, ...n.out]) expect(rep.printed).toContain(n.in.includes(e) ? e.src : e.dst);
  });

  it('leaves out the frames narrower than minWidth, counts them, and says so in the output', () => {
    const p = randomProfile(7);
    const full = boundedFlameTree(p, 0, 0);
    expect(full.elided).toBe(0);
    const count = (n: { children: unknown[] }): number => 1 + (n.children as { children: unknown[] }[]).reduce((k, c) => k + count(c), 0);
    expect(count(full.tree)).toBe(full.frames);
    const minWidth = 0.05;
    const bounded = boundedFlameTree(p, 0, minWidth);
    // Every shown frame is at least minWidth wide; every frame left out is narrower or under one.
    type N = typeof full.tree;
    const shown = (n: N, limit: number): number => 1 + n.children.filter((c) => Number(c.value) >= limit).reduce((k, c) => k + shown(c, limit), 0);
    const limit = minWidth * Number(full.tree.value);
    expect(count(bounded.tree)).toBe(shown(full.tree, limit));
    expect(bounded.elided).toBe(full.frames - count(bounded.tree));
    expect(bounded.elided).toBeGreaterThan(0);
    const html = renderFlameGraph(p, { minWidth });
    expect(html).toContain(`${bounded.elided} of ${full.frames} frames narrower than 5% of the total left out`);
    expect(renderFlameGraph(p, { minWidth: 0 })).not.toContain('left out');
  });
});

describe('stack table columns sized by the known bound', () => {
  afterEach(() => vi.unstubAllGlobals());

  /** Records the length of every Int32Array and Float64Array allocated while `run` runs. */
  function allocatedLengths(run: () => void): number[] {
    const lengths: number[] = [];
    const counting = (base: new (...args: unknown[]) => object) =>
      class extends base {
        constructor(...args: unknown[]) {
          super(...args);
          // Views (subarray, slice) come through here too, with a buffer first.
          if (typeof args[0] === 'number') lengths.push(args[0]);
        }
      };
    vi.stubGlobal('Int32Array', counting(Int32Array as new (...args: unknown[]) => object));
    vi.stubGlobal('Float64Array', counting(Float64Array as new (...args: unknown[]) => object));
    try {
      run();
    } finally {
      vi.unstubAllGlobals();
    }
    return lengths;
  }

  it('starts small and doubles when the system refuses the columns at the bound (RangeError)', () => {
    // A bound of 2^26 rows, as a large profile's frame count gives; the stubs refuse any typed
    // array over 100,000 elements the way V8 refuses address space it cannot get.
    const bound = 2 ** 26;
    const refusing = <T,>(base: T) =>
      class extends (base as new (...args: unknown[]) => object) {
        constructor(...args: unknown[]) {
          if (typeof args[0] === 'number' && args[0] > 100_000) throw new RangeError('Array buffer allocation failed');
          super(...args);
        }
      };
    const build = () => {
      const builder = new PrefixTreeBuilder(bound);
      const sums = new RowSums(true, bound);
      for (let k = 0, s = -1; k < 5000; k++) {
        s = builder.intern(k % 7 === 0 ? -1 : s, k % 1000);
        sums.add(s, k);
      }
      const { prefix, frame } = builder.finish();
      return { prefix: [...prefix], frame: [...frame], self: [...(sums.finish(prefix.length) as Float64Array)] };
    };
    const expected = build();
    vi.stubGlobal('Int32Array', refusing(Int32Array));
    vi.stubGlobal('Float64Array', refusing(Float64Array));
    vi.stubGlobal('Uint8Array', refusing(Uint8Array));
    let refused!: ReturnType<typeof build>;
    try {
      expect(() => new Int32Array(bound)).toThrow(RangeError);
      refused = build();
    } finally {
      vi.unstubAllGlobals();
    }
    expect(expected.prefix.length).toBeGreaterThan(1024);
    expect(refused).toEqual(expected);
  });

  it('allocates each column once at the bound (no doubled copies), and ends every child list', () => {
    // Stacks that share nothing below a few roots: about one row per frame, the bound.
    const bound = 6000;
    const random = seededRandom(17);
    let builder!: PrefixTreeBuilder;
    let sums!: RowSums;
    const lengths = allocatedLengths(() => {
      builder = new PrefixTreeBuilder(bound);
      sums = new RowSums(true, bound);
      let frames = 0;
      while (frames < bound) {
        let s = builder.intern(-1, Math.floor(random() * 4));
        frames++;
        for (let k = 0; k < 30 && frames < bound; k++, frames++) s = builder.intern(s, 4 + Math.floor(random() * 1000));
        sums.add(s, 1);
      }
    });
    // Before: 1024, 2048, 4096, then the bound, for every column (the old ones awaiting collection).
    expect(lengths.filter((n) => n > 1024 && n < bound)).toEqual([]);
    const { prefix, children } = builder.finish();
    expect(prefix.length).toBeGreaterThan(1024);
    expect(sums.finish(prefix.length).length).toBe(prefix.length);
    // The lists the builder linked (slots set as rows were created, not filled up front) hold
    // exactly the callees `prefix` says, each list ended by -1.
    const derived = childLists(prefix);
    const callees = (lists: { firstChild: Int32Array; nextSibling: Int32Array }, slot: number) => {
      const out: number[] = [];
      for (let c = lists.firstChild[slot]!; c !== -1; c = lists.nextSibling[c]!) out.push(c);
      return out.sort((a, b) => a - b);
    };
    for (let slot = 0; slot <= prefix.length; slot++) expect(callees(children, slot)).toEqual(callees(derived, slot));
  });
});
