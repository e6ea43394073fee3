/**
 * The stack table and the views computed from it (`callGraph`, `flameTree`, `toFolded`), checked
 * against straightforward per-sample computations of the same definitions (pprof's: flat on the
 * leaf, cum and calls counted once per sample) on random profiles with recursion, inline frames,
 * zero and negative values and unknown location ids.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { seededRandom } from '@profkit/test-utils';
import { ProfileBuilder, ProfileIndex, callGraph, flameTree, locationFrames, renderFlameGraph, toFolded, treeReport, type Profile } from '../src/node/index.js';
import { PrefixTreeBuilder, RowSums, buildStackTable, childLists, stackChildren, subtreeTotals, type StackTable } from '../src/ops/stack-table.js';
import { buildNodes, flattenLocationNodes, graphInputOf, newNodeNames, nodeTable, reportStacks, trimmedCallGraph } from '../src/ops/report.js';
import { boundedFlameTree } from '../src/flame/index.js';
import { readLocations } from '../src/ops/internal.js';
import { CallTable } from '../src/ops/call-graph-walk.js';

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

/**
 * A profile of long random tails below a few shared prefixes (most stacks the only callee of the
 * one before: the runs the call graph walk takes as one level), with recursion inside the tails,
 * inline lines, samples ending where another sample's stack goes on (a run broken by samples of
 * its own) and samples of zero value.
 */
function runsProfile(seed: number, bigValues: boolean, samples = 60): Profile {
  const r = seededRandom(seed);
  const int = (n: number) => Math.floor(r() * n);
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
  const fns = Array.from({ length: 12 }, (_, i) => b.internFunction({ name: `g${i}`, filename: `run${i % 4}.go` }));
  const locs = Array.from({ length: 40 }, () =>
    b.internLocation({ functionId: fns[int(fns.length)]!, line: 1 + int(4), inlinedInto: r() < 0.5 ? [{ functionId: fns[int(fns.length)]!, line: 1 + int(4) }] : [] }),
  );
  const prefixes = Array.from({ length: 3 }, () => Array.from({ length: 2 + int(4) }, () => locs[int(locs.length)]!));
  const stacks: number[][] = [];
  for (let i = 0; i < samples; i++) {
    // Leaf first: a tail of 10 to 50 frames, then one of the shared prefixes (outermost last).
    let stack = [...Array.from({ length: 10 + int(40) }, () => locs[int(locs.length)]!), ...prefixes[int(prefixes.length)]!];
    // Now and then a caller stack of an earlier sample: its run ends with samples of its own.
    if (stacks.length > 0 && r() < 0.25) {
      const earlier = stacks[int(stacks.length)]!;
      stack = earlier.slice(1 + int(earlier.length - 1));
    }
    stacks.push(stack);
    const value = bigValues ? (1n << 60n) + BigInt(int(1000)) : BigInt(int(4));
    b.addSample(stack, [value]);
  }
  return b.build();
}

/** pprof's graph over `kept` nodes (residual calls skip the others), sample by sample: the walk's specification. */
function referenceKeptGraph(p: Profile, nodeOfFrame: (loc: number, k: number) => number, linesOf: (loc: number) => number, kept: (n: number) => boolean) {
  const index = new ProfileIndex(p);
  const col = p.samples['.values'][0]!;
  const { offsets, location_id } = p.samples.locations;
  const flat = new Map<number, bigint>();
  const cum = new Map<number, bigint>();
  const calls = new Map<string, { weight: bigint; inline: boolean; residual: boolean }>();
  const add = (m: Map<number, bigint>, k: number, v: bigint) => m.set(k, (m.get(k) ?? 0n) + v);
  for (let i = 0; i < col.length; i++) {
    const v = col[i]!;
    if (v === 0n) continue;
    const seenNodes = new Set<number>();
    const seenCalls = new Set<string>();
    let parent = -1;
    let residual = false;
    for (let k = offsets[i + 1]! - 1; k >= offsets[i]!; k--) {
      const loc = index.locations.get(location_id[k]!);
      // The location's lines, outermost first.
      for (let j = linesOf(loc) - 1; j >= 0; j--) {
        const n = nodeOfFrame(loc, j);
        if (!kept(n)) {
          residual = true;
          continue;
        }
        if (!seenNodes.has(n)) {
          seenNodes.add(n);
          add(cum, n, v);
        }
        const key = `${parent}->${n}`;
        if (parent >= 0 && parent !== n && !seenCalls.has(key)) {
          seenCalls.add(key);
          const c = calls.get(key) ?? { weight: 0n, inline: true, residual: false };
          c.weight += v;
          if (residual) c.residual = true;
          if (j === linesOf(loc) - 1) c.inline = false;
          calls.set(key, c);
        }
        parent = n;
        residual = false;
      }
    }
    if (parent >= 0 && !residual) add(flat, parent, v);
  }
  return { flat, cum, calls };
}

describe('call graph walk over runs of single-callee stacks', () => {
  for (const bigValues of [false, true]) {
    it(`gives the per-sample flat, cum and calls, all nodes kept or some (${bigValues ? 'bigint sums past 2^53' : 'double sums'})`, () => {
      const p = runsProfile(bigValues ? 31 : 30, bigValues);
      const index = new ProfileIndex(p);
      const nodes = newNodeNames();
      const { locNodes } = nodeTable(p, 'function', true, false, index, undefined, nodes);
      const g = graphInputOf(p, index, 0, locNodes, nodes.names.length);
      // Most stacks are runs: each the only callee of its caller, no samples of their own.
      const { firstChild, nextSibling } = stackChildren(g.stacks);
      // (Told by sampleStack: reading `self` would replace the table's sparse sums the walk reads.)
      const withSamples = new Set(g.stacks.sampleStack);
      let runs = 0;
      for (let s = 0; s < g.stacks.length; s++) if (firstChild[s + 1]! >= 0 && nextSibling[firstChild[s + 1]!] === -1 && !withSamples.has(s)) runs++;
      expect(runs).toBeGreaterThan(g.stacks.length / 2);
      const all = new Uint8Array(nodes.names.length).fill(1);
      const some = new Uint8Array(nodes.names.length).map((_, n) => (n % 3 === 0 ? 0 : 1));
      for (const kept of [undefined, some]) {
        const isKept = (n: number) => (kept ? kept[n] === 1 : true);
        const ref = referenceKeptGraph(p, (loc, j) => locNodes[loc]![j]!, (loc) => locNodes[loc]!.length, isKept);
        // Both walks of the stacks (climbing each leaf's path, and depth-first by runs).
        for (const walk of ['leaf-paths', 'runs'] as const) {
          const built = buildNodes(g, kept, all, all, undefined, walk);
          for (let n = 0; n < nodes.names.length; n++) {
            expect([walk, nodes.names[n], built.flat[n]]).toEqual([walk, nodes.names[n], isKept(n) ? (ref.flat.get(n) ?? 0n) : 0n]);
            expect([walk, nodes.names[n], built.cum[n]]).toEqual([walk, nodes.names[n], isKept(n) ? (ref.cum.get(n) ?? 0n) : 0n]);
          }
          const calls = new Map(built.src.map((src, e) => [`${src}->${built.dst[e]}`, { weight: BigInt(built.weight[e]!), inline: built.inline[e]!, residual: built.residual[e]! }]));
          expect(calls).toEqual(ref.calls);
          if (bigValues) expect(built.cum.some((v) => v > 2n ** 62n)).toBe(true);
        }
      }
    });
  }

  it('sums the self column as changed in place once it was read (as a diff negates its base)', () => {
    const p = runsProfile(32, false);
    const index = new ProfileIndex(p);
    const nodes = newNodeNames();
    const { locNodes } = nodeTable(p, 'function', true, false, index, undefined, nodes);
    const g = graphInputOf(p, index, 0, locNodes, nodes.names.length);
    const before = buildNodes(g, undefined);
    const self = g.stacks.self as Float64Array;
    for (let s = 0; s < self.length; s++) self[s] = -self[s]!;
    const after = buildNodes(g, undefined);
    expect(after.cum).toEqual(before.cum.map((v) => -v));
    expect(after.flat).toEqual(before.flat.map((v) => -v));
    expect(before.cum.some((v) => v > 0n)).toBe(true);
  });

  it('keeps no prefix or per-stack sum column for the call graph (made only when a view reads them)', () => {
    // Enough frames that the walk's own arrays (per node and call) are shorter than the table.
    const p = runsProfile(33, false, 400);
    const index = new ProfileIndex(p);
    const nodes = newNodeNames();
    const { locNodes } = nodeTable(p, 'function', true, false, index, undefined, nodes);
    const flat = flattenLocationNodes(locNodes);
    const frames = p.samples.locations.location_id.length;
    const lengths: { type: string; n: number }[] = [];
    let built!: ReturnType<typeof buildNodes>;
    let table!: ReturnType<typeof buildStackTable>;
    const counting = (base: new (...args: unknown[]) => object, type: string) =>
      class extends base {
        constructor(...args: unknown[]) {
          super(...args);
          if (typeof args[0] === 'number') lengths.push({ type, n: args[0] });
        }
      };
    vi.stubGlobal('Int32Array', counting(Int32Array as new (...args: unknown[]) => object, 'Int32Array'));
    vi.stubGlobal('Float64Array', counting(Float64Array as new (...args: unknown[]) => object, 'Float64Array'));
    try {
      table = buildStackTable(p, index, 0);
      built = buildNodes({ nNodes: nodes.names.length, ...flat, stacks: table }, undefined);
    } finally {
      vi.unstubAllGlobals();
    }
    expect(table.length).toBeGreaterThan(frames / 2);
    // Per stack: the frame column and the two child lists, nothing else (before: also prefix and self).
    const perStack = lengths.filter(({ n }) => n >= table.length);
    expect(nodes.names.length * 2).toBeLessThan(table.length);
    expect(perStack.filter(({ type }) => type !== 'Int32Array')).toEqual([]);
    // Allocated at the bound (the number of frames), then cut to the rows (copies: the bound is far).
    expect(perStack.filter(({ n }) => n >= frames).map(({ n }) => n)).toEqual([frames, frames, frames + 1]);
    expect(perStack.filter(({ n }) => n < frames).map(({ n }) => n).sort()).toEqual([table.length + 1, table.length, table.length].sort());
    // Read later, both columns are there and right.
    const derived = childLists(table.prefix);
    for (let s = 0; s < table.length; s++) expect(table.prefix[s]!).toBeLessThan(s);
    expect([...derived.nextSibling].filter((c) => c >= 0).length + [...derived.firstChild].filter((c) => c >= 0).length).toBe(table.length);
    const col = p.samples['.values'][0]!;
    const expectedSelf = new Float64Array(table.length);
    for (let i = 0; i < col.length; i++) if (table.sampleStack[i]! >= 0) expectedSelf[table.sampleStack[i]!]! += Number(col[i]!);
    expect(table.self).toEqual(expectedSelf);
    expect(buildNodes({ nNodes: nodes.names.length, ...flat, stacks: table }, undefined)).toEqual(built);
  });

  it('walks the -mean divisor without making the prefix or self column of the value table', () => {
    const p = runsProfile(34, false);
    const withCount = { ...p, sample_types: { type: ['samples', 'cpu'], unit: ['count', 'nanoseconds'] }, samples: { ...p.samples, '.values': [p.samples['.values'][0]!.map(() => 1n), p.samples['.values'][0]!.map((v) => v * 1000n)] } } as Profile;
    const nodes = newNodeNames();
    const options = { meanDivisorIndex: 0, nodeFraction: 0 };
    const { locNodes, stacks, divisor } = reportStacks(withCount, new ProfileIndex(withCount), 1, options, nodes);
    // Counts the reads of the table's lazy columns (the same object: its sparse sums stay its own).
    const reads: string[] = [];
    for (const column of ['prefix', 'self'] as const) {
      const lazy = Object.getOwnPropertyDescriptor(stacks, column)!.get!;
      Object.defineProperty(stacks, column, { get: () => (reads.push(column), lazy.call(stacks)) });
    }
    const g = { nNodes: nodes.names.length, ...flattenLocationNodes(locNodes), stacks, divisor };
    const graph = trimmedCallGraph({ t: 1, unit: 'nanoseconds', g, names: nodes.names, infos: nodes.infos, total: () => 1n }, options, true);
    expect(reads).toEqual([]);
    expect(graph.nodes.some((n) => n.cum > 0n)).toBe(true);
  });
});

describe('call graph tables without child lists, walked by climbing each leaf path', () => {
  const shapes = [{}, { samples: 3000, functions: 40, locations: 300, maxDepth: 14 }, { samples: 4000, functions: 200, locations: 2000, maxDepth: 6 }];
  /** The callees of every stack (slot 0: the roots), ascending. */
  const callees = (t: StackTable) => {
    const { firstChild, nextSibling } = stackChildren(t);
    return Array.from({ length: t.length + 1 }, (_, s) => {
      const out: number[] = [];
      for (let c = firstChild[s]!; c !== -1; c = nextSibling[c]!) out.push(c);
      return out.sort((a, b) => a - b);
    });
  };
  shapes.forEach((shape, k) => {
    const seed = 20 + k;
    it(`seed ${seed}: the same stacks as with child lists; prefixes and callees follow from the jumps`, () => {
      const p = randomProfile(seed, false, shape);
      const index = new ProfileIndex(p);
      const lists = buildStackTable(p, index, 0);
      const compact = buildStackTable(p, index, 0, undefined, undefined, { childLists: false });
      expect(compact.children).toBeUndefined();
      expect([compact.length, compact.frame, compact.sampleStack]).toEqual([lists.length, lists.frame, lists.sampleStack]);
      expect(compact.prefix).toEqual(lists.prefix);
      expect(compact.self).toEqual(lists.self);
      expect(callees(compact)).toEqual(callees(lists));
      // The jumps: the stacks whose prefix is not the row before them, ascending, with their prefixes.
      const expected = [...lists.prefix.keys()].filter((s) => lists.prefix[s] !== s - 1);
      expect(expected.length).toBeGreaterThan(1);
      for (const t of [compact, lists]) {
        expect([...t.jumps!.rows]).toEqual(expected);
        expect([...t.jumps!.prefixes]).toEqual(expected.map((s) => lists.prefix[s]!));
      }
    });

    it(`seed ${seed}: both walks give the same graph (sums, flags, calls in order), whatever nodes and calls a pass keeps`, () => {
      const p = randomProfile(seed, false, shape);
      const index = new ProfileIndex(p);
      const nodes = newNodeNames();
      const { locNodes } = nodeTable(p, 'function', true, false, index, undefined, nodes);
      const n = nodes.names.length;
      const all = new Uint8Array(n).fill(1);
      const some = Uint8Array.from({ length: n }, (_, i) => (i % 3 === 1 ? 0 : 1));
      const few = Uint8Array.from({ length: n }, (_, i) => (i % 4 === 0 ? 1 : 0));
      const passes: [Uint8Array | undefined, Uint8Array?, Uint8Array?, Uint8Array?][] = [[undefined], [undefined, all, all], [some, some, some], [undefined, all, all, few], [few, few, all]];
      const g = graphInputOf(p, index, 0, locNodes, n);
      expect(g.stacks.children).toBeUndefined();
      // The same again once stacks' sums cancel to zero (as a diff's can): half the leaves', then all: their calls
      // still count, with weight 0.
      const [someCancelled, allCancelled] = [2, 1].map((every) => {
        const input = graphInputOf(p, index, 0, locNodes, n);
        const self = input.stacks.self as Float64Array;
        const leaves = callees(input.stacks).flatMap((list, s) => (s > 0 && list.length === 0 ? [s - 1] : []));
        for (const s of leaves.filter((_, i) => i % every === 0)) self[s] = 0;
        if (every === 1) self.fill(0);
        return input;
      });
      for (const input of [g, someCancelled!, allCancelled!]) {
        for (const [kept, into, from, touching] of passes) {
          const climbed = buildNodes(input, kept, into, from, touching, 'leaf-paths');
          expect(climbed).toEqual(buildNodes(input, kept, into, from, touching, 'runs'));
          expect(climbed.src.length > 0).toBe(into !== undefined);
        }
      }
      const zero = buildNodes(allCancelled!, undefined, all, all, undefined, 'leaf-paths');
      expect(zero.src.length).toBeGreaterThan(0);
      expect(zero.weight.every((w) => w === 0)).toBe(true);
    });
  });

  it('keeps one column per stack, the frames: no child lists or prefix column, made or derived', () => {
    const p = runsProfile(35, false, 400);
    const index = new ProfileIndex(p);
    const nodes = newNodeNames();
    const { locNodes } = nodeTable(p, 'function', true, false, index, undefined, nodes);
    const frames = p.samples.locations.location_id.length;
    const lengths: number[] = [];
    let g!: ReturnType<typeof graphInputOf>;
    const counting = class extends Int32Array {
      constructor(...args: unknown[]) {
        super(...(args as [number]));
        if (typeof args[0] === 'number') lengths.push(args[0]);
      }
    };
    vi.stubGlobal('Int32Array', counting);
    try {
      g = graphInputOf(p, index, 0, locNodes, nodes.names.length);
      buildNodes(g, undefined);
    } finally {
      vi.unstubAllGlobals();
    }
    expect(g.stacks.length).toBeGreaterThan(frames / 2);
    expect(nodes.names.length * 2).toBeLessThan(g.stacks.length);
    // The frame column at the bound (the number of frames), and maybe its copy cut to the stacks; before: two child lists as well.
    const perStack = lengths.filter((n) => n >= g.stacks.length);
    expect(perStack[0]).toBe(frames);
    expect(perStack.slice(1)).toEqual(perStack.length > 1 ? [g.stacks.length] : []);
  });
});

describe('report nodes read from the location columns', () => {
  it('are those of the locations read as objects, at every granularity, inline frames or not', () => {
    const p = randomProfile(30, false, { samples: 500, functions: 20, locations: 120, maxDepth: 8 });
    const index = new ProfileIndex(p);
    for (const by of ['function', 'filefunctions', 'file', 'line', 'address'] as const) {
      for (const inline of [true, false]) {
        const fromColumns = nodeTable(p, by, inline, false, index);
        const fromObjects = nodeTable(p, by, inline, false, index, readLocations(p, index));
        expect([by, inline, fromColumns]).toEqual([by, inline, fromObjects]);
        expect(fromColumns.locNodes.some((nodes) => nodes.length > 1)).toBe(inline);
      }
    }
  });
});

describe('stack builder and call table hashes', () => {
  /** The fixed hash the builder and the call table had (murmur3's finalizer over the pair). */
  const fixedHash = (prefix: number, frame: number) => {
    let h = Math.imul(prefix, 0x9e3779b1) ^ frame;
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    return (h ^ (h >>> 16)) >>> 0;
  };
  /** The longest run of occupied slots (-1 empty): what a lookup may probe. */
  const longestRun = (slots: Int32Array) => {
    let longest = 0;
    for (let i = 0, run = 0; i < slots.length; i++) longest = Math.max(longest, (run = slots[i] === -1 ? 0 : run + 1));
    return longest;
  };

  it('spreads rows chosen to share slots under a fixed hash (their frames and prefixes come from the input)', () => {
    // The rows a profile of roots 0..2047, each with callees among 4,096 frames, would make if it
    // picked the (prefix, frame) pairs that the fixed hash puts in the first eighth of the slots.
    const [roots, frames, pairs] = [2048, 4096, 20_000];
    // The slot mask once 2,047 jumping roots and the pairs are hashed (doubled while over half full).
    let mask = 1023;
    for (let hashed = 1; hashed <= roots - 1 + pairs; hashed++) if (hashed * 2 > mask) mask = mask * 2 + 1;
    const builder = new PrefixTreeBuilder(Infinity, false);
    for (let a = 0; a < roots; a++) builder.intern(-1, a);
    let made = 0;
    for (let a = 0; a < roots - 1 && made < pairs; a++) {
      for (let f = 0; f < frames && made < pairs; f++) {
        if ((fixedHash(a, f) & mask) < (mask + 1) / 8) {
          builder.intern(a, f);
          made++;
        }
      }
    }
    const { slots } = builder as unknown as { slots: Int32Array };
    expect([made, builder.length, slots.length]).toEqual([pairs, roots + pairs, mask + 1]);
    // The fixed hash made one run of all the pairs.
    expect(longestRun(slots)).toBeLessThan(500);
  });

  it('spreads calls chosen to share slots under a fixed hash (node ids come from the input)', () => {
    const calls = new CallTable(0);
    const pairs = 20_000;
    // The slot mask once the calls are in (from 4,096 slots, doubled while over half full).
    let mask = 4095;
    for (let n = 1; n <= pairs; n++) if (n * 2 > mask) mask = mask * 2 + 1;
    let made = 0;
    for (let src = 0; src < 2048 && made < pairs; src++) {
      for (let dst = 0; dst < 4096 && made < pairs; dst++) {
        if (src !== dst && (fixedHash(src, dst) & mask) < (mask + 1) / 8) calls.at(src, dst, made++, 0);
      }
    }
    const { hSrc } = calls as unknown as { hSrc: Int32Array };
    expect([made, calls.src.length, hSrc.length]).toEqual([pairs, pairs, mask + 1]);
    expect(longestRun(hSrc)).toBeLessThan(500);
  });
});
