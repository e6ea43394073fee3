/** Profiles the flame tests share. */
import { seededRandom } from '@profkit/test-utils';
import { ProfileBuilder, type Profile } from '../src/index.js';

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
