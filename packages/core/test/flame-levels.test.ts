/**
 * `boundedFlameTree` builds the flame tree in one depth-first walk of the stack table: the same
 * tree as a per-sample build, with sums in bigints when they could exceed 2^53, inline frames as
 * consecutive levels, two locations of one function one frame; with a minimum width, the frames
 * it leaves out (narrow subtrees are only counted, not summed) are counted exactly.
 */
import { describe, expect, it } from 'vitest';
import { seededRandom } from '@profkit/test-utils';
import { ProfileBuilder, ProfileIndex, boundedFlameTree, cutFlameTree, flameTree, locationFrames, type Profile } from '../src/node/index.js';

function profile(seed: number, big: boolean): Profile {
  const r = seededRandom(seed);
  const int = (n: number) => Math.floor(r() * n);
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'alloc', unit: 'bytes' }] });
  const fns = Array.from({ length: 5 }, (_, i) => b.internFunction({ name: `g${i}` }));
  const locs = Array.from({ length: 9 }, () =>
    b.internLocation({ functionId: fns[int(5)]!, line: 1, inlinedInto: r() < 0.5 ? [{ functionId: fns[int(5)]!, line: 2 }, { functionId: fns[int(5)]!, line: 3 }] : [] }),
  );
  for (let i = 0; i < 200; i++) {
    const stack = Array.from({ length: int(6) }, () => locs[int(locs.length)]!);
    b.addSample(stack, [big ? (1n << 60n) + BigInt(int(9)) : BigInt(int(4) - 1)]);
  }
  return b.build();
}

type Ref = { value: bigint; self: bigint; children: Map<string, Ref> };

/** The flame tree summed sample by sample, as `flameTree` returns it. */
function reference(p: Profile) {
  const index = new ProfileIndex(p);
  const { offsets, location_id } = p.samples.locations;
  const col = p.samples['.values'][0]!;
  const root: Ref = { value: 0n, self: 0n, children: new Map() };
  for (let i = 0; i < col.length; i++) {
    const v = col[i]!;
    if (v <= 0n) continue;
    let n = root;
    n.value += v;
    for (let k = offsets[i + 1]! - 1; k >= offsets[i]!; k--) {
      for (const f of locationFrames(p, index, index.locations.get(location_id[k]!)).reverse()) {
        let c = n.children.get(f.name);
        if (!c) n.children.set(f.name, (c = { value: 0n, self: 0n, children: new Map() }));
        c.value += v;
        n = c;
      }
    }
    n.self += v;
  }
  return root;
}

type Plain = { name: string; value: bigint; self: bigint; children: Plain[] };

/** The reference tree as `flameTree` returns it, without the frames narrower than `threshold`. */
function plain(name: string, r: Ref, threshold = 0): Plain {
  const names = [...r.children.keys()].filter((k) => Number(r.children.get(k)!.value) >= threshold).sort();
  return { name, value: r.value, self: r.self, children: names.map((k) => plain(k, r.children.get(k)!, threshold)) };
}

/** Frames of the reference tree, the root included. */
function count(r: Ref): number {
  let n = 1;
  for (const c of r.children.values()) n += count(c);
  return n;
}

describe('flame tree from the stack table', () => {
  for (const big of [false, true]) {
    it(`is the per-sample tree (${big ? 'sums beyond 2^53, in bigints' : 'small values, zeros and negatives'})`, () => {
      const p = profile(big ? 11 : 12, big);
      expect(flameTree(p)).toEqual(plain('all', reference(p)));
    });
  }

  for (const minWidth of [0.01, 0.05, 0.2]) {
    it(`leaves out the frames narrower than ${minWidth} of the total and counts them exactly`, () => {
      const p = profile(13, false);
      const ref = reference(p);
      const threshold = minWidth * Number(ref.value);
      const shown = plain('all', ref, threshold);
      const shownFrames = (n: Plain): number => n.children.reduce((k, c) => k + shownFrames(c), 1);
      const bounded = boundedFlameTree(p, 0, minWidth);
      expect(bounded.tree).toEqual(shown);
      expect(bounded.frames).toBe(count(ref));
      expect(bounded.elided).toBe(count(ref) - shownFrames(shown));
      expect(bounded.elided).toBeGreaterThan(0);
    });
  }

  it('counts chains of left-out single callees exactly (deep chains, inline frames, recursion, stacks with samples mid-chain, bigint sums)', () => {
    // Profiles where narrow frames form long chains: samples extend a few long random paths (so
    // a stack's samples sit in the middle of another's chain), over few functions (a name
    // repeats along a chain), locations with inline frames.
    let chainsLeftOut = 0;
    for (let seed = 0; seed < 150; seed++) {
      const r = seededRandom(1000 + seed);
      const int = (n: number) => Math.floor(r() * n);
      const big = seed % 3 === 0;
      const b = new ProfileBuilder({ sampleTypes: [{ type: 'alloc', unit: 'bytes' }] });
      const fns = Array.from({ length: 1 + int(4) }, (_, i) => b.internFunction({ name: `f${i}` }));
      const fn = () => fns[int(fns.length)]!;
      const locs = Array.from({ length: 1 + int(6) }, () =>
        b.internLocation({ functionId: fn(), line: 1, inlinedInto: Array.from({ length: r() < 0.4 ? 1 + int(3) : 0 }, () => ({ functionId: fn(), line: 2 })) }),
      );
      const paths = Array.from({ length: 1 + int(4) }, () => Array.from({ length: 1 + int(25) }, () => locs[int(locs.length)]!));
      for (let i = 0, n = 1 + int(40); i < n; i++) {
        const path = paths[int(paths.length)]!;
        const stack = path.slice(0, int(path.length + 1)).reverse(); // leaf first
        b.addSample(stack, [big ? (1n << 60n) + BigInt(int(9)) : BigInt(int(5) - 1)]);
      }
      const p = b.build();
      const ref = reference(p);
      const all = boundedFlameTree(p, 0, 0);
      expect(all.tree).toEqual(plain('all', ref));
      expect(all.frames).toBe(count(ref));
      for (const minWidth of [0.001, 0.05, 0.2, 0.5, 0.9, 1]) {
        const bounded = boundedFlameTree(p, 0, minWidth);
        const shown = plain('all', ref, minWidth * Number(ref.value));
        const shownFrames = (n: Plain): number => n.children.reduce((k, c) => k + shownFrames(c), 1);
        expect(bounded.tree).toEqual(shown);
        expect(bounded.frames).toBe(all.frames);
        expect(bounded.elided).toBe(all.frames - shownFrames(shown));
        if (bounded.elided > 1) chainsLeftOut++;
      }
    }
    expect(chainsLeftOut).toBeGreaterThan(100);
  });

  it('draws and counts locations of the same frame names (the same inlined code at other addresses) as the per-sample tree, and those differing in one frame or in length apart', () => {
    for (let seed = 0; seed < 40; seed++) {
      const r = seededRandom(2000 + seed);
      const int = (n: number) => Math.floor(r() * n);
      const b = new ProfileBuilder({ sampleTypes: [{ type: 'alloc', unit: 'bytes' }] });
      const fns = Array.from({ length: 4 }, (_, i) => b.internFunction({ name: `h${i}` }));
      // 3 chains of names of 3-7 frames; per chain 4 locations at other lines: twins, one with a frame renamed, one a frame shorter.
      const locs = Array.from({ length: 3 }, (_, c) => {
        const names = Array.from({ length: 3 + int(5) }, () => fns[int(4)]!);
        const renamed = 1 + int(names.length - 1);
        return [0, 1, 2, 3].map((v) => {
          const own = v === 2 ? names.map((f, k) => (k === renamed ? fns[(fns.indexOf(f) + 1) % 4]! : f)) : v === 3 ? names.slice(1) : names;
          const [inner, ...inlined] = own;
          return b.internLocation({ functionId: inner!, line: 10 * c + v, inlinedInto: inlined.map((functionId, k) => ({ functionId, line: 100 * c + 10 * v + k })) });
        });
      });
      const all = locs.flat();
      for (let i = 0; i < 60; i++) {
        const chain = locs[int(3)]!;
        const stack = Array.from({ length: 1 + int(5) }, () => (r() < 0.7 ? chain[int(2)]! : all[int(all.length)]!));
        b.addSample(stack, [BigInt(1 + int(9))]);
      }
      expectPerSampleTree(b.build(), seed, [0, 0.05, 0.3]);
    }
  });
  it('draws runs of inline frames shared at different positions and depths (name prefixes, empty stacks, zero values, nothing kept, merged stacks) as the per-sample tree', () => {
    // Locations whose inline chains are prefixes of a few name chains, of 1-9 frames: the members
    // of a frame stand at other positions of locations of other lengths, so a shared run must end
    // at the member with the fewest frames left and move each member within its own location.
    for (let seed = 0; seed < 60; seed++) {
      const r = seededRandom(3000 + seed);
      const int = (n: number) => Math.floor(r() * n);
      const b = new ProfileBuilder({ sampleTypes: [{ type: 'alloc', unit: 'bytes' }] });
      const fns = Array.from({ length: 1 + int(4) }, (_, i) => b.internFunction({ name: `p${i}` }));
      const chains = Array.from({ length: 1 + int(3) }, () => Array.from({ length: 9 }, () => fns[int(fns.length)]!));
      const locs = Array.from({ length: 2 + int(10) }, (_, v) => {
        const chain = chains[int(chains.length)]!;
        const [outer, ...rest] = chain.slice(0, 1 + int(9));
        // The location's innermost function is the chain's last; the inlined-into list runs inward from the outermost.
        const own = [outer!, ...rest].reverse();
        return b.internLocation({ functionId: own[0]!, line: v, inlinedInto: own.slice(1).map((functionId, k) => ({ functionId, line: 100 + k })) });
      });
      const nothingKept = seed % 10 === 9;
      // Past 4,096 samples the merge of equal stacks is decided on a sample of them.
      const samples = seed % 6 === 0 ? 5000 + int(3000) : 1 + int(80);
      for (let i = 0; i < samples; i++) {
        const stack = Array.from({ length: int(6) }, () => locs[int(locs.length)]!);
        b.addSample(stack, [nothingKept ? -BigInt(int(2)) : BigInt(int(6) - 1)]);
      }
      expectPerSampleTree(b.build(), seed, [0, 0.02, 0.3]);
    }
  });
});

/**
 * Both walks (`boundedFlameTree`; `cutFlameTree` counting every frame and not) draw `p` as the
 * per-sample reference tree at each min width, and count all of its frames.
 */
function expectPerSampleTree(p: Profile, seed: number, minWidths: number[]): void {
  const ref = reference(p);
  for (const minWidth of minWidths) {
    const at = `seed ${seed}, min width ${minWidth}`;
    const shown = plain('all', ref, minWidth * Number(ref.value));
    const bounded = boundedFlameTree(p, 0, minWidth);
    expect(bounded.tree, at).toEqual(shown);
    expect(bounded.frames, at).toBe(count(ref));
    const cut = cutFlameTree(p, 0, minWidth, { countEveryFrame: true });
    expect(cut.tree, at).toEqual(shown);
    expect(cut.frames, at).toBe(count(ref));
    expect(cutFlameTree(p, 0, minWidth).tree, at).toEqual(shown);
  }
}
