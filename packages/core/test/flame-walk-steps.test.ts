/**
 * `maxFlameWalkSteps` bounds the walk of a flame graph. Members in locations of the same frame
 * names cut at other boundaries where one member has at most one frame left in its location (a
 * 1,000-line location against the same frames in 2-line locations) share no run of inline frames
 * taken at once, so they are walked a frame at a time, members × frames: the drawing of 1,000
 * samples through 60 such entries (91k entries) took 60M steps (2-3 s), bounded only by members ×
 * `maxFlameDepth`; `boundedFlameTree` counting 200 samples through 1,000 such entries left out
 * took 200M steps (5-7 s). Past a budget proportional to the profile (`flameWalkBudget`) both
 * stop with `PROFKIT_E_LIMIT` naming the option; raised, they give the exact result. Runs of
 * inline frames the members share in different locations (a deep inline chain at many addresses
 * differing in the innermost frame) are taken at once, their comparisons charged.
 */
import { describe, expect, it } from 'vitest';
import { thrownBy } from '@profkit/test-utils';
import { ErrorCodes, ProfileBuilder, boundedFlameTree, cutFlameTree, flameTree, flameWalkBudget, renderFlameGraph, type Profile } from '../src/node/index.js';
import { cutFlameFrames } from '../src/flame/cut.js';
import { deepRandomProfile, framesOf, inlinedAtManyAddressesProfile, splitInlineChunksProfile } from './flame-profiles.js';

/** What the errors carry that the tests read. */
type Thrown = { code?: string; detail?: { option?: string; limit?: number } };

/** The code, option and limit of what `f` throws. */
function limitOf(f: () => unknown): [string | undefined, string | undefined, number | undefined] {
  const e = thrownBy(f) as Thrown;
  return [e.code, e.detail?.option, e.detail?.limit];
}

const unbounded = { maxFlameWalkSteps: Number.MAX_SAFE_INTEGER };

describe('maxFlameWalkSteps: the drawing walk (cutFlameTree, renderFlameGraph)', () => {
  it('stops at the default budget on members × inline frames (1,000 samples × 60 entries cut into 2-line pieces: 60M steps) with PROFKIT_E_LIMIT naming the option', () => {
    const p = splitInlineChunksProfile(1_000, 60, 1_000, { cut: 'pairs' });
    const budget = flameWalkBudget(p);
    // Proportional to the profile (91k entries), far below the 60M steps of the drawing.
    expect(p.samples.locations.location_id.length).toBe(999 * 61 + 1 + 60 * 500);
    expect(budget).toBeLessThan(60_000_000 / 10);
    const expected = [ErrorCodes.LIMIT, 'maxFlameWalkSteps', budget];
    expect(limitOf(() => cutFlameFrames(p, 0, 0.0001, { countEveryFrame: true }))).toEqual(expected);
    expect(limitOf(() => cutFlameTree(p, 0, 0.0001))).toEqual(expected);
    expect(limitOf(() => renderFlameGraph(p, { format: 'svg' }))).toEqual(expected);
  });

  it('draws the exact frames with the limit at the steps taken, and refuses one step less', () => {
    // 20 samples through 4 entries of a 100-line location or 200 of its 2-line pieces: all, main,
    // then one chain of 400 inline frames 20 members wide.
    const p = splitInlineChunksProfile(20, 4, 100, { cut: 'pairs' });
    const { drawSteps } = cutFlameFrames(p, 0, 0.0001, { countEveryFrame: true, limits: unbounded });
    expect(drawSteps).toBeGreaterThanOrEqual(20 * 400);
    expect(limitOf(() => cutFlameTree(p, 0, 0.0001, { limits: { maxFlameWalkSteps: drawSteps - 1 } }))).toEqual([ErrorCodes.LIMIT, 'maxFlameWalkSteps', drawSteps - 1]);
    const cut = cutFlameTree(p, 0, 0.0001, { countEveryFrame: true, limits: { maxFlameWalkSteps: drawSteps } });
    const exact = boundedFlameTree(p, 0, 0.0001, { limits: unbounded });
    expect(framesOf(cut.tree)).toEqual(framesOf(exact.tree));
    expect(framesOf(cut.tree)).toHaveLength(2 + 400);
    expect(framesOf(cut.tree).at(-1)).toBe('401 f9 20 20');
    expect([cut.frames, cut.elided, cut.countStopped]).toEqual([exact.frames, 0, false]);
  });

  it('does not charge the frames left out (countBudget bounds them: the count stops, the drawing does not fail)', () => {
    const p = splitInlineChunksProfile(20, 4, 100, { hot: true, cut: 'pairs' });
    // Drawn: the root (21 members) and hot (1).
    const cut = cutFlameFrames(p, 0, 0.0001, { countEveryFrame: true, limits: { maxFlameWalkSteps: 22 } });
    expect(cut.walkSteps).toBeGreaterThan(20 * 400);
    expect([cut.drawSteps, cut.countStopped, cut.allFrames]).toEqual([22, false, boundedFlameTree(p, 0, 0.0001, { limits: unbounded }).frames]);
  });
});

describe('maxFlameWalkSteps: boundedFlameTree and flameTree (exact counts)', () => {
  it('stops at the default budget counting members × inline frames left out (200 samples × 1,000 entries cut into 2-line pieces: 200M steps) with PROFKIT_E_LIMIT naming the option', () => {
    const p = splitInlineChunksProfile(200, 1_000, 1_000, { hot: true, cut: 'pairs' });
    const budget = flameWalkBudget(p);
    expect(p.samples.locations.location_id.length).toBe(199 * 1_001 + 1 + 1_000 * 500 + 1);
    expect(budget).toBeLessThan(200_000_000 / 10);
    expect(limitOf(() => boundedFlameTree(p, 0, 0.0001))).toEqual([ErrorCodes.LIMIT, 'maxFlameWalkSteps', budget]);
  });

  it('counts exactly with the limit at the steps taken, and refuses one step less (never a wrong count)', () => {
    const p = splitInlineChunksProfile(20, 10, 100, { hot: true, cut: 'pairs' });
    const { walkSteps, frames, elided, tree } = boundedFlameTree(p, 0, 0.0001, { limits: unbounded });
    expect(walkSteps).toBeGreaterThanOrEqual(20 * 1_000);
    // all, hot, main, 1,000 inline frames.
    expect([frames, elided]).toEqual([3 + 1_000, 1_001]);
    expect(framesOf(tree)).toEqual(['0 all 1000000020 0', '1 hot 1000000000 1000000000']);
    const over = { maxFlameWalkSteps: walkSteps - 1 };
    expect(limitOf(() => boundedFlameTree(p, 0, 0.0001, { limits: over }))).toEqual([ErrorCodes.LIMIT, 'maxFlameWalkSteps', walkSteps - 1]);
    expect(limitOf(() => flameTree(p, 0, { limits: over }))).toEqual([ErrorCodes.LIMIT, 'maxFlameWalkSteps', walkSteps - 1]);
    const at = boundedFlameTree(p, 0, 0.0001, { limits: { maxFlameWalkSteps: walkSteps } });
    expect([at.frames, at.elided, at.walkSteps]).toEqual([frames, elided, walkSteps]);
    // The count of the drawing walk, which stops at its own budget instead, agrees.
    const counted = cutFlameTree(p, 0, 0.0001, { countEveryFrame: true, countBudget: Infinity });
    expect([counted.frames, counted.elided]).toEqual([frames, elided]);
  });
});

describe('runs of inline frames the members share in different locations (taken at once, comparisons charged)', () => {
  it('draws a deep inline chain at many addresses differing in the innermost frame (the reviewer\'s 300k-sample profile, scaled to 30k samples and the budget to its part per entry)', () => {
    // 30,000 samples, 100 callers × 200 addresses of a 60-deep inline chain. A frame at a time the
    // drawing walked every sample's member through the 59 shared inline frames (30,000 × 61 steps:
    // over this budget, as the full-size profile's 18.6M steps over its default 18.59M).
    const p = inlinedAtManyAddressesProfile(71, 30_000);
    const limits = { maxFlameWalkSteps: flameWalkBudget(p) - 4_000_000 };
    expect(limits.maxFlameWalkSteps).toBeLessThan(30_000 * 61);
    const exact = boundedFlameTree(p, 0, 0, { limits: unbounded });
    // all, caller, g0..g58, 200 innermost frames.
    expect(exact.frames).toBe(2 + 59 + 200);
    for (const minWidth of [0.0001, 0]) {
      const cut = cutFlameFrames(p, 0, minWidth, { countEveryFrame: true, limits });
      expect(cut.drawSteps).toBeLessThanOrEqual(limits.maxFlameWalkSteps / 10);
      expect(framesOf(cutFlameTree(p, 0, minWidth, { limits }).tree)).toEqual(framesOf(exact.tree));
      expect(renderFlameGraph(p, { format: 'svg', minWidth, limits })).toContain('innermost199');
      const bounded = boundedFlameTree(p, 0, minWidth, { limits });
      expect(bounded.walkSteps).toBeLessThanOrEqual(limits.maxFlameWalkSteps / 10);
      expect(framesOf(bounded.tree)).toEqual(framesOf(exact.tree));
    }
  });

  it('walks one member per distinct stack where most samples repeat one of many stacks (120k samples over 20,000 stacks: 83% repeats, 10% of the 4,096 the merge is decided on)', () => {
    const p = inlinedAtManyAddressesProfile(72, 120_000, { depth: 3 });
    const cut = cutFlameFrames(p, 0, 0, { countEveryFrame: true });
    // A member a sample visits all, caller, g0, g1 and an innermost frame: 600,000 steps; a member
    // per distinct stack (at most 100 × 200), at most 100,000.
    expect(cut.walkSteps).toBeLessThanOrEqual(5 * 100 * 200);
    expect(framesOf(cutFlameTree(p, 0, 0).tree)).toEqual(framesOf(boundedFlameTree(p, 0, 0).tree));
  });

  it('takes runs down to the next boundary where locations of the same frames are cut at other boundaries (1,000 samples × 60 entries of a 1,000-line location or its halves: 60M steps a frame at a time)', () => {
    const p = splitInlineChunksProfile(1_000, 60, 1_000);
    const proportional = flameWalkBudget(p) - 4_000_000;
    const cut = cutFlameFrames(p, 0, 0.0001, { countEveryFrame: true });
    expect(cut.drawSteps).toBeLessThanOrEqual(proportional / 5);
    expect(boundedFlameTree(p, 0, 0.0001).walkSteps).toBeLessThanOrEqual(proportional / 5);
    const drawn = cutFlameTree(p, 0, 0.0001, { limits: { maxFlameDepth: 70_000 } });
    expect(framesOf(drawn.tree)).toEqual(framesOf(boundedFlameTree(p, 0, 0.0001, { limits: { maxFlameDepth: 70_000 } }).tree));
    expect(framesOf(drawn.tree)).toHaveLength(2 + 60 * 1_000);
  });
});

describe('the comparisons of a run charged as they are made', () => {
  it('stops comparing at the budget where many members stand at other positions of one long location (1,000 members × 98,000 frames: 98M comparisons in one run before the limit was checked)', () => {
    // Every frame is f: stack j enters a 100,000-line location R after 2j frames of prefix
    // locations (2-1,024 lines), so at depth 2,000 the 1,000 members stand at 1,000 positions of
    // R and share a run of its last ~98,000 frames, compared member by member: as many steps as
    // the walk a frame at a time, which stopped at the budget (5.8M).
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
    const f = b.internFunction({ name: 'f' });
    const location = (lines: number, line: number) =>
      b.internLocation({ functionId: f, line, inlinedInto: Array.from({ length: lines - 1 }, (_, k) => ({ functionId: f, line: line + 1 + k })) });
    const long = location(100_000, 1);
    const pieces = Array.from({ length: 10 }, (_, i) => location(2 << i, 1_000_000 * (i + 1)));
    for (let j = 0; j < 1_000; j++) b.addSample([long, ...pieces.filter((_, i) => (j >> i) & 1)], [1n]);
    const p = b.build();
    const budget = flameWalkBudget(p);
    expect(budget).toBeLessThan(1_000 * 98_000 / 10);
    const stepsOf = (f: () => unknown) => {
      const e = thrownBy(f) as Thrown & { message: string };
      expect([e.code, e.detail?.option, e.detail?.limit]).toEqual([ErrorCodes.LIMIT, 'maxFlameWalkSteps', budget]);
      return Number(/\((\d+) so far/.exec(e.message)![1]);
    };
    expect(stepsOf(() => cutFlameTree(p, 0, 0))).toBeLessThanOrEqual(budget + 1_000);
    expect(stepsOf(() => boundedFlameTree(p, 0, 0))).toBeLessThanOrEqual(budget + 1_000);
  });
});

describe('maxFlameWalkSteps by default', () => {
  it('is far above the walk of profiles whose stacks share callers and inline frames (deep random stacks: steps ≤ a tenth of the budget past its floor)', () => {
    for (const seed of [61, 62]) {
      const p: Profile = deepRandomProfile(seed, 2_000);
      const proportional = flameWalkBudget(p) - 4_000_000;
      for (const minWidth of [0, 0.0001, 0.05]) {
        const cut = cutFlameFrames(p, 0, minWidth, { countEveryFrame: true });
        expect(cut.drawSteps).toBeLessThanOrEqual(proportional / 10);
        expect(boundedFlameTree(p, 0, minWidth).walkSteps).toBeLessThanOrEqual(proportional / 10);
      }
    }
  });

  it('is the option when given, else 4M + 16 per stack entry, inline line, location and sample', () => {
    const p = splitInlineChunksProfile(2, 1, 10);
    // 2 + 3 stack entries, 2 samples (3 offsets), 5 locations (2 outermost, the whole, its halves), 9 + 4 + 4 inline lines.
    const size = 5 + 3 + 5 + 17;
    expect(flameWalkBudget(p)).toBe(4_000_000 + 16 * size);
    expect(flameWalkBudget(p, { maxFlameWalkSteps: 7 })).toBe(7);
  });
});

describe('countBudget', () => {
  it('must be a number of steps >= 0 (NaN never stopped the count): PROFKIT_E_USAGE naming it', () => {
    const p = deepRandomProfile(63, 50);
    for (const countBudget of [Number.NaN, -1, '5' as unknown as number]) {
      const e = thrownBy(() => cutFlameTree(p, 0, 0.05, { countEveryFrame: true, countBudget })) as Thrown;
      expect([e.code, e.detail?.option], String(countBudget)).toEqual([ErrorCodes.USAGE, 'countBudget']);
    }
    expect(cutFlameTree(p, 0, 0.05, { countEveryFrame: true, countBudget: 0 }).countStopped).toBe(true);
  });
});

describe('a flame graph of no samples (every sample filtered out: the web viewer focused on a pattern no name matched)', () => {
  it('draws the root alone, in each walk (SharedInlineRun of no member looped without end)', async () => {
    const result = await answerInWorker(
      `const { SharedInlineRun } = await import(${JSON.stringify(dist + 'flame/cut.js')});
        const run = new SharedInlineRun(new Int32Array([0, 3]), new Int32Array([1, 2, 3]));
        run.begin();
        const b = new core.ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
        b.internLocation({ functionId: b.internFunction({ name: 'main', filename: 'a.go' }) });
        const p = b.build();
        const cut = core.cutFlameTree(p, 0, 0.0001, { countEveryFrame: true });
        const bounded = core.boundedFlameTree(p, 0, 0.0001);
        const svg = core.renderFlameGraph(p, { format: 'svg' });
        return { runLength: run.length(), cutChildren: cut.tree.children.length, boundedChildren: bounded.tree.children.length, svg: typeof svg };`,
    );
    expect(result).toEqual({ runLength: 0, cutChildren: 0, boundedChildren: 0, svg: 'string' });
  }, 30_000);
});

describe('boundedFlameTree: runs of inline frames in frames left out', () => {
  it('are counted at once, not a frame at a time (100,000 left-out callers of 2 members each through one 500,000-line location: 5·10¹⁰ uncharged iterations)', async () => {
    // Caller c<i> calls g at two addresses, each calling the long location L: the frame f under
    // g has 2 members at position 0 of L, a run of 499,999 frames, left out (a hot sample of 10^15).
    const result = await answerInWorker(
      `const b = new core.ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
        const f = b.internFunction({ name: 'f' });
        const g = b.internFunction({ name: 'g' });
        const L = b.internLocation({ functionId: f, line: 1, inlinedInto: Array.from({ length: 499_999 }, (_, k) => ({ functionId: f, line: 2 + k })) });
        const A = b.internLocation({ functionId: g, line: 1, address: 1n });
        const B = b.internLocation({ functionId: g, line: 2, address: 2n });
        b.addSample([b.internLocation({ functionId: b.internFunction({ name: 'hot' }), line: 1 })], [10n ** 15n]);
        for (let i = 0; i < 100_000; i++) {
          const C = b.internLocation({ functionId: b.internFunction({ name: 'c' + i }), line: 1, address: BigInt(1e6 + i) });
          b.addSample([L, A, C], [1n]);
          b.addSample([L, B, C], [1n]);
        }
        const { frames, elided } = core.boundedFlameTree(b.build(), 0, 0.0001);
        return { frames, elided };`,
    );
    // all, hot, and per caller: c<i>, g, f and its 499,999 inline frames.
    expect(result).toEqual({ frames: 2 + 100_000 * 500_002, elided: 100_000 * 500_002 });
  }, 30_000);
});

const dist = new URL('../dist/', import.meta.url).href;

/**
 * What `body` (statements ending in a return, `core` the built package's main entry) returns, run
 * in a worker, or a string saying it did not answer within 20 s: a loop without end, or a walk
 * whose work is not bounded, fails the test instead of holding the test run (it is synchronous).
 */
async function answerInWorker(body: string): Promise<unknown> {
  const { Worker } = await import('node:worker_threads');
  const worker = new Worker(
    `const { parentPort } = require('node:worker_threads');
    (async () => {
      const core = await import(${JSON.stringify(dist + 'index.js')});
      ${body}
    })().then((answer) => parentPort.postMessage(answer), (e) => parentPort.postMessage({ error: String(e) }));`,
    { eval: true },
  );
  try {
    return await Promise.race([
      new Promise((resolve) => worker.once('message', resolve)),
      new Promise((resolve) => setTimeout(() => resolve('no answer within 20 s (a loop without end)'), 20_000)),
    ]);
  } finally {
    await worker.terminate();
  }
}
