/** Profiles the flame tests share. */
import { seededRandom } from '@profkit/test-utils';
import { ProfileBuilder, type FlameNode, type Profile } from '../src/index.js';

/**
 * `samples` samples of deep stacks (5-44 entries) over 15 locations, a third with an inline
 * frame: long chains of one sample under shared callers, some stacks repeated.
 */
export function deepRandomProfile(seed: number, samples: number): Profile {
  const r = seededRandom(seed);
  const int = (n: number) => Math.floor(r() * n);
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
  const fns = Array.from({ length: 9 }, (_, i) => b.internFunction({ name: `d${i}` }));
  const locs = Array.from({ length: 15 }, (_, i) => b.internLocation({ functionId: fns[int(9)]!, line: i, inlinedInto: i % 3 === 0 ? [{ functionId: fns[int(9)]!, line: 50 + i }] : [] }));
  const stacks = Array.from({ length: 60 }, () => Array.from({ length: 5 + int(40) }, () => locs[int(locs.length)]!));
  for (let i = 0; i < samples; i++) b.addSample(stacks[int(stacks.length)]!, [BigInt(1 + int(20))]);
  return b.build();
}

/**
 * `samples` samples of 1 through the inline frames of one chain of `lines` names (10 functions in
 * turn), cut into locations at other boundaries. With `cut: 'halves'`, even samples have `entries`
 * entries of one `lines`-line location, odd ones twice as many of its two halves (two locations
 * of `lines / 2` lines): the same frames, every frame's members in different locations at
 * different positions, which share runs of inline frames down to the next half's boundary. With
 * `cut: 'pairs'`, every sample but the last has `entries` entries of the whole location, the last
 * `entries × lines / 2` entries of 2-line locations of the same frames: every frame has a member
 * with at most one frame left in its location, so no run of inline frames is shared and the
 * frames are walked one at a time, members × frames (the cost `maxFlameWalkSteps` bounds). Each
 * sample's outermost entry is a location of its own (one frame, `main`), so that no two stacks
 * are equal (merged). With `hot`, one more sample of 10^9 on a location of its own leaves the
 * rest out (narrower than 0.01% of the total).
 */
export function splitInlineChunksProfile(samples: number, entries: number, lines: number, { hot = false, cut = 'halves' as 'halves' | 'pairs' } = {}): Profile {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
  const fns = Array.from({ length: 10 }, (_, i) => b.internFunction({ name: `f${i}` }));
  // A location of the chain's frames from..to (outermost first): its innermost frame is its
  // function, the others are inlined into it (listed innermost first).
  const chunk = (from: number, to: number, line: number) => {
    const outermostFirst = Array.from({ length: to - from }, (_, k) => fns[(from + k) % 10]!);
    const [innermost, ...inlined] = outermostFirst.reverse();
    return b.internLocation({ functionId: innermost!, line, inlinedInto: inlined.map((functionId, k) => ({ functionId, line: line + k + 1 })) });
  };
  const whole = chunk(0, lines, 1_000_000);
  const pieces =
    cut === 'halves' ? [chunk(0, lines / 2, 2_000_000), chunk(lines / 2, lines, 3_000_000)] : Array.from({ length: lines / 2 }, (_, k) => chunk(2 * k, 2 * k + 2, 4_000_000 + 2 * k));
  const inPieces = (i: number) => (cut === 'halves' ? i % 2 === 1 : i === samples - 1);
  const main = b.internFunction({ name: 'main' });
  if (hot) b.addSample([b.internLocation({ functionId: b.internFunction({ name: 'hot' }), line: 1 })], [1_000_000_000n]);
  for (let i = 0; i < samples; i++) {
    const outermost = b.internLocation({ functionId: main, line: i + 1 });
    const deep = Array.from({ length: entries }, () => (inPieces(i) ? pieces : [whole])).flat();
    b.addSample([outermost, ...deep].reverse(), [1n]);
  }
  return b.build();
}

/** Every frame of `tree` depth first (callees in order) as `level name value self`. */
export function framesOf(tree: FlameNode): string[] {
  const out: string[] = [];
  const work: [FlameNode, number][] = [[tree, 0]];
  while (work.length > 0) {
    const [node, level] = work.pop()!;
    out.push(`${level} ${node.name} ${node.value} ${node.self}`);
    for (let i = node.children.length - 1; i >= 0; i--) work.push([node.children[i]!, level + 1]);
  }
  return out;
}

/**
 * The shape of deeply inlined C++/Rust code: `samples` samples of 1 on 2-entry stacks, a caller
 * (one function, `callers` call sites) above a hot function inlined at `addresses` addresses,
 * each a location of a `depth`-deep inline chain (functions g0..g{depth-2}, then one of its own):
 * the same frames down to the innermost, which differs. Stacks drawn at random (`seed`), so most
 * of the callers × addresses distinct stacks repeat.
 */
export function inlinedAtManyAddressesProfile(seed: number, samples: number, { callers = 100, addresses = 200, depth = 60 } = {}): Profile {
  const r = seededRandom(seed);
  const int = (n: number) => Math.floor(r() * n);
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
  const chain = Array.from({ length: depth - 1 }, (_, i) => b.internFunction({ name: `g${i}` }));
  const caller = b.internFunction({ name: 'caller' });
  const callSites = Array.from({ length: callers }, (_, i) => b.internLocation({ functionId: caller, line: i + 1, address: BigInt(1_000_000 + i) }));
  const hot = Array.from({ length: addresses }, (_, k) => {
    const innermost = b.internFunction({ name: `innermost${k}` });
    // inlinedInto lists the frames the innermost one is inlined into, innermost first.
    const inlinedInto = [...chain].reverse().map((functionId, j) => ({ functionId, line: j + 1 }));
    return b.internLocation({ functionId: innermost, line: k + 1, address: BigInt(k + 1), inlinedInto });
  });
  for (let i = 0; i < samples; i++) b.addSample([hot[int(addresses)]!, callSites[int(callers)]!], [1n]);
  return b.build();
}
