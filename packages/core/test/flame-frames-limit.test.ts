/**
 * `maxFlameFrames` bounds the frames a flame graph draws. A stack entry draws one frame per inline
 * line of its location, and when every sample shares the stack every frame is wide enough to be
 * drawn: 1,000 entries of one 2,000-line location (a 1.9 KB gzipped pprof) drew 2M frames, a
 * 27 MB page; 20 KB asks for 4×10^8 (a RangeError or an out-of-memory abort). Past the limit
 * `renderFlameGraph` and `cutFlameTree` stop with `PROFKIT_E_LIMIT` naming the option.
 */
import { describe, expect, it } from 'vitest';
import { ErrorCodes, ProfileBuilder, READ_LIMITS, cutFlameTree, renderFlameGraph, type FlameNode, type Profile } from '../src/node/index.js';
import { thrownBy } from '@profkit/test-utils';

/** What the limit errors carry that the tests read. */
type Thrown = { code?: string; message: string; detail?: { option?: string; limit?: number } };

/** One sample whose stack is `entries` times one location of `lines` lines (f0..f9 in turn): 1 + entries × lines frames, all of the full width. */
function oneLocationRepeated(entries: number, lines: number): Profile {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
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
    const e = thrownBy<Thrown>(() => renderFlameGraph(crafted, { limits: { maxFlameFrames: 100_000 } }));
    expect([e.code, e.detail?.option]).toEqual([ErrorCodes.LIMIT, 'maxFlameFrames']);
    expect(thrownBy<Thrown>(() => cutFlameTree(crafted, 0, 0.0001, { limits: { maxFlameFrames: 100_000 } })).code).toBe(ErrorCodes.LIMIT);
  });

  it('SVG: text past maxReportBytes is PROFKIT_E_LIMIT naming it (the SVG repeats every frame name; 4M frames passed the longest JS string, a RangeError)', () => {
    const svg = renderFlameGraph(p, { format: 'svg' });
    expect(renderFlameGraph(p, { format: 'svg', limits: { maxReportBytes: svg.length } })).toBe(svg);
    const e = thrownBy<Thrown>(() => renderFlameGraph(p, { format: 'svg', limits: { maxReportBytes: svg.length - 1 } }));
    expect([e.code, e.detail?.option]).toEqual([ErrorCodes.LIMIT, 'maxReportBytes']);
  });

  it('by default is above the frames a real profile draws and below what a small input can ask for', () => {
    // The 600,000 inline frames of the CLI's flame-memory test draw; 2×10^6 × the input's 1.9 KB does not scale past it.
    expect(READ_LIMITS.maxFlameFrames).toBeGreaterThanOrEqual(600_001);
    expect(READ_LIMITS.maxFlameFrames).toBeLessThanOrEqual(16_000_000);
  });
});
