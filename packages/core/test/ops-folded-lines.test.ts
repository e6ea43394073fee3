/**
 * `foldedLines` sorts stacks as their joined texts sort without building those texts: checked
 * against the joined-and-sorted reference on profiles whose frame names begin one another
 * (`f`, `f1`, `f!`, `f.x`: characters before and after `;`), so that the order of a stack and its
 * caller's sibling depends on the separator.
 */
import { describe, expect, it } from 'vitest';
import { seededRandom } from '@profkit/test-utils';
import { ProfileBuilder, foldedLines, toFolded, type Profile } from '../src/node/index.js';
import { referenceFolded } from './folded-reference.js';

const NAMES = ['f', 'f1', 'f!', 'f.x', 'f;y', 'fz', 'g', ''];

function prefixNamedProfile(seed: number): Profile {
  const r = seededRandom(seed);
  const int = (n: number) => Math.floor(r() * n);
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
  const fns = NAMES.map((name) => b.internFunction({ name: name || '<?>' }));
  const locs = Array.from({ length: 12 }, () =>
    b.internLocation({ functionId: fns[int(fns.length)]!, line: 1, inlinedInto: r() < 0.3 ? [{ functionId: fns[int(fns.length)]!, line: 2 }] : [] }),
  );
  for (let i = 0; i < 400; i++) {
    const stack = Array.from({ length: 1 + int(5) }, () => locs[int(locs.length)]!);
    b.addSample(stack, [BigInt(int(4) - 1)]);
  }
  return b.build();
}

describe('foldedLines', () => {
  for (const seed of [1, 2, 3, 4]) {
    it(`seed ${seed}: lines in the order of the joined texts, equal texts summed`, () => {
      const p = prefixNamedProfile(seed);
      const expected = referenceFolded(p);
      expect([...foldedLines(p)].join('')).toBe(expected);
      expect(toFolded(p)).toBe(expected);
    });
  }
});
