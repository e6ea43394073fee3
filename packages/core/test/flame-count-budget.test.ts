/**
 * `renderFlameGraph`'s subtitle counts every frame left out ("N of M frames"): `cutFlameFrames`
 * with `countEveryFrame` walks the members of each frame left out a frame at a time, so a group
 * of many members under a deep run of inline frames cost members × frames, unbounded by
 * `maxFlameFrames` (which counts drawn frames): 1,000 entries of a 1,000-line location in the
 * stacks of 200 samples, left out beside a wider sample, took 200M steps (6.1 s). The count now
 * stops at a budget proportional to the profile (`flameCountBudget`) and the subtitle says "at
 * least"; the frames drawn are the same.
 */
import { describe, expect, it } from 'vitest';
import { ProfileBuilder, boundedFlameTree, cutFlameTree, renderFlameGraph, type Profile } from '../src/node/index.js';
import { cutFlameFrames, flameCountBudget } from '../src/flame/cut.js';
import { deepRandomProfile, framesOf } from './flame-profiles.js';

/**
 * With `hot`, one sample of 10^9 on a location of its own; and `samples` samples of 1 whose stacks
 * are `entries` times a location of `lines` inline lines above a leaf of their own: the deep part
 * is one frame of the complete tree per level, `samples` members wide (narrower than 0.01% of the
 * total with `hot`). `twins`: the samples alternate between two such locations of the same
 * functions (other lines), so that the members of a frame stand in two locations.
 */
function sharedDeepStacks(samples: number, entries: number, lines: number, { hot = true, twins = true } = {}): Profile {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
  const fns = Array.from({ length: 10 }, (_, i) => b.internFunction({ name: `f${i}` }));
  const deep = [0, 1].map((twin) =>
    b.internLocation({ functionId: fns[0]!, line: 1 + twin, inlinedInto: Array.from({ length: lines - 1 }, (_, k) => ({ functionId: fns[(k + 1) % 10]!, line: 100_000 * twin + k + 2 })) }),
  );
  if (hot) b.addSample([b.internLocation({ functionId: b.internFunction({ name: 'hot' }), line: 1 })], [1_000_000_000n]);
  for (let i = 0; i < samples; i++) {
    const leaf = b.internLocation({ functionId: b.internFunction({ name: `leaf${i}` }), line: 1 });
    b.addSample([leaf, ...new Array<number>(entries).fill(deep[twins ? i % 2 : 0]!)], [1n]);
  }
  return b.build();
}

/** Deep random stacks (see deepRandomProfile). */
const randomDeep = (seed: number): Profile => deepRandomProfile(seed, 200);

describe('counting the frames left out (countEveryFrame)', () => {
  it('stops at the budget on members × inline frames (20 samples × 1,000 × 1,000 lines of two locations: 20M steps), says so, and draws the same frames', () => {
    const p = sharedDeepStacks(20, 1_000, 1_000);
    const budget = flameCountBudget(p);
    const cut = cutFlameFrames(p, 0, 0.0001, { countEveryFrame: true });
    expect(cut.countStopped).toBe(true);
    expect(cut.countSteps).toBeLessThanOrEqual(budget);
    // The budget is proportional to the profile, far below the 20M steps of a complete count.
    expect(budget).toBeLessThan(5_000_000);
    // Lower bounds: the complete tree has 1 + 1 + 10^6 + 20 frames (the stack table's count).
    expect(boundedFlameTree(p, 0, 0.0001).frames).toBe(1_000_022);
    expect(cut.allFrames).toBeLessThan(1_000_022);
    expect(cut.elided).toBe(cut.allFrames - 2);
    const counted = cutFlameTree(p, 0, 0.0001, { countEveryFrame: true });
    expect(counted.tree).toEqual(cutFlameTree(p, 0, 0.0001).tree);
    expect(counted.countStopped).toBe(true);
    const page = renderFlameGraph(p);
    expect(page).toContain(`at least ${cut.elided} of at least ${cut.allFrames} frames narrower than 0.01% of the total left out`);
  });

  it('counts every frame where the profile pays for them (2 samples of two locations: 2M steps, under the floor of the budget)', () => {
    const p = sharedDeepStacks(2, 1_000, 1_000);
    const cut = cutFlameTree(p, 0, 0.0001, { countEveryFrame: true });
    expect([cut.countStopped, cut.frames, cut.elided]).toEqual([false, 1_000_004, 1_000_002]);
    expect(renderFlameGraph(p, { format: 'svg' })).toContain('; 1000002 of 1000004 frames narrower than 0.01% of the total left out');
  });

  it('gives lower bounds of the exact counts at every budget, exact ones when it does not stop, and the same drawing', () => {
    for (const seed of [51, 52]) {
      const p = randomDeep(seed);
      for (const minWidth of [0.002, 0.05, 0.3]) {
        const exact = boundedFlameTree(p, 0, minWidth);
        let stopped = 0;
        for (const countBudget of [0, 1, 10, 100, 1_000, 10_000, 1e9]) {
          const cut = cutFlameTree(p, 0, minWidth, { countEveryFrame: true, countBudget });
          const at = `seed ${seed}, min width ${minWidth}, budget ${countBudget}`;
          expect(cut.tree, at).toEqual(exact.tree);
          if (cut.countStopped) {
            stopped++;
            expect(cut.frames, at).toBeLessThan(exact.frames);
            expect(cut.elided, at).toBeLessThan(exact.elided);
          } else {
            expect([cut.frames, cut.elided], at).toEqual([exact.frames, exact.elided]);
          }
          const steps = cutFlameFrames(p, 0, minWidth, { countEveryFrame: true, countBudget }).countSteps;
          expect(steps, at).toBeLessThanOrEqual(countBudget);
        }
        // Budgets of 0 and 1 step stop at the first frame left out (any takes 2 steps), the largest does not.
        if (minWidth >= 0.05) expect(exact.elided).toBeGreaterThan(0);
        expect(stopped, `seed ${seed}, min width ${minWidth}`).toBeGreaterThanOrEqual(exact.elided > 0 ? 2 : 0);
        expect(cutFlameTree(p, 0, minWidth, { countEveryFrame: true }).countStopped).toBe(false);
      }
    }
  });
});

describe('runs of inline frames every member of a frame shares (one location, one position)', () => {
  it('are drawn or counted at once: members + frames steps, not members × frames', () => {
    // 200 samples through 20 entries of one 1,000-line location: 20,000 drawn levels, 200 members
    // each (4M member visits a frame at a time).
    const drawnRun = sharedDeepStacks(200, 20, 1_000, { hot: false, twins: false });
    const cut = cutFlameFrames(drawnRun, 0, 0.0001, { countEveryFrame: true, limits: { maxFlameDepth: 30_000 } });
    expect(cut.walkSteps).toBeLessThan(10 * 200 * 20);
    const exact = boundedFlameTree(drawnRun, 0, 0.0001, { limits: { maxFlameDepth: 30_000 } });
    const same = cutFlameTree(drawnRun, 0, 0.0001, { countEveryFrame: true, limits: { maxFlameDepth: 30_000 } });
    expect([same.frames, same.elided, same.countStopped]).toEqual([exact.frames, exact.elided, false]);
    // Compared frame by frame: toEqual recurses once per level.
    expect(framesOf(same.tree)).toEqual(framesOf(exact.tree));
    expect(framesOf(same.tree)).toHaveLength(1 + 20 * 1_000 + 200);
    // Left out under the hot sample, 200 samples × 1,000 entries: counted exactly, within the budget.
    const countedRun = sharedDeepStacks(200, 1_000, 1_000, { twins: false });
    const counted = cutFlameFrames(countedRun, 0, 0.0001, { countEveryFrame: true });
    expect([counted.countStopped, counted.allFrames, counted.elided]).toEqual([false, 1 + 1 + 1_000_000 + 200, 1_000_200]);
    expect(counted.walkSteps).toBeLessThan(10 * 200 * 1_000);
  });

  it('are drawn at once where the members stand in locations of the same frame names (the same inlined code at two addresses)', () => {
    // 200 samples through 20 entries of two 1,000-line locations of the same functions (other
    // lines), in turn: 4M member visits a frame at a time.
    const twinRuns = sharedDeepStacks(200, 20, 1_000, { hot: false });
    const limits = { maxFlameDepth: 30_000 };
    const cut = cutFlameFrames(twinRuns, 0, 0.0001, { countEveryFrame: true, limits });
    expect(cut.walkSteps).toBeLessThan(10 * 200 * 20);
    const exact = boundedFlameTree(twinRuns, 0, 0.0001, { limits });
    const same = cutFlameTree(twinRuns, 0, 0.0001, { countEveryFrame: true, limits });
    expect([same.frames, same.elided, same.countStopped]).toEqual([exact.frames, exact.elided, false]);
    expect(framesOf(same.tree)).toEqual(framesOf(exact.tree));
    expect(framesOf(same.tree)).toHaveLength(1 + 20 * 1_000 + 200);
  });
});
