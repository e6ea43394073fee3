/**
 * `maxFlameFrames` bounds the frames a flame graph draws. A stack entry draws one frame per inline
 * line of its location, and when every sample shares the stack every frame is wide enough to be
 * drawn: 1,000 entries of one 2,000-line location (a 1.9 KB gzipped pprof) drew 2M frames, a
 * 27 MB page; 20 KB asks for 4×10^8 (a RangeError or an out-of-memory abort). Past the limit
 * `renderFlameGraph` and `cutFlameTree` stop with `PROFKIT_E_LIMIT` naming the option.
 */
import { describe, expect, it } from 'vitest';
import { ErrorCodes, ProfileBuilder, READ_LIMITS, boundedFlameTree, cutFlameTree, flameTree, renderFlameGraph, type FlameNode, type Profile } from '../src/node/index.js';
import { thrownBy } from '@profkit/test-utils';

/** What the limit errors carry that the tests read. */
type Thrown = { code?: string; message: string; detail?: { option?: string; limit?: number } };

/** One sample whose stack is `entries` times one location of `lines` lines (f0..f9 in turn): 1 + entries × lines frames, all of the full width. */
function oneLocationRepeated(entries: number, lines: number, hot = 0n): Profile {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
  // A sample of `hot` on a location of its own, if any: the frames of the other are its callers.
  if (hot > 0n) b.addSample([b.internLocation({ functionId: b.internFunction({ name: 'hot' }), line: 1 })], [hot]);
  const fns = Array.from({ length: 10 }, (_, i) => b.internFunction({ name: `f${i}` }));
  const location = b.internLocation({ functionId: fns[0]!, line: 1, inlinedInto: Array.from({ length: lines - 1 }, (_, k) => ({ functionId: fns[(k + 1) % 10]!, line: k + 2 })) });
  b.addSample(new Array<number>(entries).fill(location), [1n]);
  return b.build();
}

function nodeCount(tree: FlameNode): number {
  let n = 0;
  const work = [tree];
  while (work.length) {
    const node = work.pop()!;
    n++;
    work.push(...node.children);
  }
  return n;
}


describe('maxFlameFrames', () => {
  // 1 + 10 × 20 frames.
  const p = oneLocationRepeated(10, 20);

  it('draws a profile of exactly the limit, every frame', () => {
    expect(nodeCount(cutFlameTree(p, 0, 0, { limits: { maxFlameFrames: 201 } }).tree)).toBe(201);
    const svg = renderFlameGraph(p, { format: 'svg', limits: { maxFlameFrames: 201 } });
    expect(svg.match(/<g class="frame"/g)?.length).toBe(201);
  });

  it('refuses one frame more with PROFKIT_E_LIMIT naming the option: cutFlameTree and renderFlameGraph (HTML and SVG)', () => {
    const attempts = [
      () => cutFlameTree(p, 0, 0, { limits: { maxFlameFrames: 200 } }),
      () => cutFlameTree(p, 0, 0, { countEveryFrame: true, limits: { maxFlameFrames: 200 } }),
      () => renderFlameGraph(p, { limits: { maxFlameFrames: 200 } }),
      () => renderFlameGraph(p, { format: 'svg', limits: { maxFlameFrames: 200 } }),
    ];
    for (const attempt of attempts) {
      const e = thrownBy<Thrown>(attempt);
      expect(e.code).toBe(ErrorCodes.LIMIT);
      expect(e.detail?.option).toBe('maxFlameFrames');
      expect(e.detail?.limit).toBe(200);
      expect(e.message).toContain('limits.maxFlameFrames');
    }
  });

  it('refuses the 1.9 KB-style profile (1,000 entries of a 2,000-line location: 2M frames) at a small limit before drawing it', () => {
    const crafted = oneLocationRepeated(1_000, 2_000);
    // Its 2M levels are past maxFlameDepth too (see below): raised, to meet the frames' limit.
    const limits = { maxFlameFrames: 100_000, maxFlameDepth: 10_000_000 };
    const e = thrownBy<Thrown>(() => renderFlameGraph(crafted, { limits }));
    expect([e.code, e.detail?.option]).toEqual([ErrorCodes.LIMIT, 'maxFlameFrames']);
    expect(thrownBy<Thrown>(() => cutFlameTree(crafted, 0, 0.0001, { limits })).detail?.option).toBe('maxFlameFrames');
    expect(thrownBy<Thrown>(() => boundedFlameTree(crafted, 0, 0.0001, { limits })).detail?.option).toBe('maxFlameFrames');
  });

  it('SVG: text past maxReportBytes is PROFKIT_E_LIMIT naming it (the SVG repeats every frame name; 4M frames passed the longest JS string, a RangeError)', () => {
    const svg = renderFlameGraph(p, { format: 'svg' });
    expect(renderFlameGraph(p, { format: 'svg', limits: { maxReportBytes: svg.length } })).toBe(svg);
    const e = thrownBy<Thrown>(() => renderFlameGraph(p, { format: 'svg', limits: { maxReportBytes: svg.length - 1 } }));
    expect([e.code, e.detail?.option]).toEqual([ErrorCodes.LIMIT, 'maxReportBytes']);
  });

  it('boundedFlameTree and flameTree (the library tree) refuse one frame more with PROFKIT_E_LIMIT naming the option; draw a profile of exactly the limit', () => {
    expect(nodeCount(boundedFlameTree(p, 0, 0, { limits: { maxFlameFrames: 201 } }).tree)).toBe(201);
    expect(nodeCount(flameTree(p, 0, { limits: { maxFlameFrames: 201 } }))).toBe(201);
    for (const attempt of [() => boundedFlameTree(p, 0, 0, { limits: { maxFlameFrames: 200 } }), () => flameTree(p, 0, { limits: { maxFlameFrames: 200 } })]) {
      const e = thrownBy<Thrown>(attempt);
      expect([e.code, e.detail?.option, e.detail?.limit]).toEqual([ErrorCodes.LIMIT, 'maxFlameFrames', 200]);
      expect(e.message).toContain('limits.maxFlameFrames');
    }
    // Frames left out (narrower than the min width) are counted, not drawn: not limited.
    const narrow = boundedFlameTree(oneLocationRepeated(10, 20, 1_000_000n), 0, 0.01, { limits: { maxFlameFrames: 2 } });
    expect([nodeCount(narrow.tree), narrow.frames]).toEqual([2, 202]);
  });

  it('by default is above the frames a real profile draws and below what a small input can ask for', () => {
    // The 600,000 inline frames of the CLI's flame-memory test draw; 2×10^6 × the input's 1.9 KB does not scale past it.
    expect(READ_LIMITS.maxFlameFrames).toBeGreaterThanOrEqual(600_001);
    expect(READ_LIMITS.maxFlameFrames).toBeLessThanOrEqual(16_000_000);
  });
});

/**
 * `maxFlameDepth` bounds the levels of a flame graph. A chain of frames as wide as the root is drawn
 * whatever the min width, so the frames limit alone let a 7.5 KB pprof (1,000 entries of one
 * 2,000-line location) draw 2M levels: a 437 MB SVG 32M pixels tall, 26 s.
 */
describe('maxFlameDepth', () => {
  // 201 levels: the root and 10 × 20 inline frames, one chain.
  const p = oneLocationRepeated(10, 20);

  it('draws a graph of exactly the limit; one level more is PROFKIT_E_LIMIT naming the option: cutFlameTree, renderFlameGraph (HTML and SVG), boundedFlameTree, flameTree', () => {
    const at = { maxFlameDepth: 201 };
    expect(nodeCount(cutFlameTree(p, 0, 0, { limits: at }).tree)).toBe(201);
    expect(nodeCount(boundedFlameTree(p, 0, 0, { limits: at }).tree)).toBe(201);
    expect(renderFlameGraph(p, { format: 'svg', limits: at }).match(/<g class="frame"/g)?.length).toBe(201);
    const over = { maxFlameDepth: 200 };
    const attempts = [
      () => cutFlameTree(p, 0, 0, { limits: over }),
      () => cutFlameTree(p, 0, 0, { countEveryFrame: true, limits: over }),
      () => renderFlameGraph(p, { limits: over }),
      () => renderFlameGraph(p, { format: 'svg', limits: over }),
      () => boundedFlameTree(p, 0, 0, { limits: over }),
      () => flameTree(p, 0, { limits: over }),
    ];
    for (const attempt of attempts) {
      const e = thrownBy<Thrown>(attempt);
      expect([e.code, e.detail?.option, e.detail?.limit]).toEqual([ErrorCodes.LIMIT, 'maxFlameDepth', 200]);
      expect(e.message).toContain('limits.maxFlameDepth');
      expect(e.message).toContain('level 201');
    }
  });

  it('counts levels, not frames: a wide graph of few levels draws under a small depth limit; levels left out (min width) are not limited', () => {
    // 30 samples, each a chain of 3 frames under a root callee of its own: 91 frames on 4 levels.
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    for (let i = 0; i < 30; i++) {
      const fn = (name: string) => b.internLocation({ functionId: b.internFunction({ name }), line: 1 });
      b.addSample([fn('c'), fn('b'), fn(`root${i}`)], [1n]);
    }
    const wide = b.build();
    expect(nodeCount(cutFlameTree(wide, 0, 0, { limits: { maxFlameDepth: 4 } }).tree)).toBe(91);
    expect(nodeCount(boundedFlameTree(wide, 0, 0, { limits: { maxFlameDepth: 4 } }).tree)).toBe(91);
    // The deep chain under a sample 10^6 times wider: left out at 1% and only counted.
    const narrow = oneLocationRepeated(10, 20, 1_000_000n);
    expect(cutFlameTree(narrow, 0, 0.01, { countEveryFrame: true, limits: { maxFlameDepth: 2 } }).frames).toBe(202);
    expect(boundedFlameTree(narrow, 0, 0.01, { limits: { maxFlameDepth: 2 } }).frames).toBe(202);
  });

  it('by default refuses the 2M-level chain of a few KB (1,000 entries of a 2,000-line location) and draws what recorders keep', () => {
    const e = thrownBy<Thrown>(() => cutFlameTree(oneLocationRepeated(1_000, 2_000), 0, 0.0001));
    expect([e.code, e.detail?.option, e.detail?.limit]).toEqual([ErrorCodes.LIMIT, 'maxFlameDepth', READ_LIMITS.maxFlameDepth]);
    // async-profiler keeps 2,048 frames of a stack by default, each maybe a few inline frames; a
    // folded file or a runaway recursion may hold more (the CLI's viewer test draws 20,000 levels).
    expect(READ_LIMITS.maxFlameDepth).toBeGreaterThanOrEqual(20_001);
    expect(READ_LIMITS.maxFlameDepth).toBeLessThanOrEqual(100_000);
    expect(nodeCount(cutFlameTree(oneLocationRepeated(1_000, 20), 0, 0.0001).tree)).toBe(20_001);
  });
});
