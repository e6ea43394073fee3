import { describe, expect, it } from 'vitest';
import { ErrorCodes, ProfileBuilder, ProfkitError, toFolded } from '../src/node/index.js';

describe('toFolded', () => {
  it('writes root;...;leaf value lines, inline frames expanded, identical stacks summed, sorted', () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }, { type: 'cpu', unit: 'nanoseconds' }] });
    const fn = (name: string) => b.internFunction({ name });
    const main = b.internLocation({ functionId: fn('main') });
    const work = b.internLocation({ functionId: fn('work'), line: 1 });
    const work2 = b.internLocation({ functionId: fn('work'), line: 2 });
    const inl = b.internLocation({ functionId: fn('inner'), inlinedInto: [{ functionId: fn('outer') }] });
    const odd = b.internLocation({ functionId: fn('a;b\nc') });
    const unsym = b.internLocation({ address: 0xbeefn });
    b.addSample([work, main], [1, 10]);
    b.addSample([work2, main], [2, 20]);
    b.addSample([inl, main], [3, 30]);
    b.addSample([odd, main], [4, 0]);
    b.addSample([unsym, main], [5, -7]);
    b.addSample([main], [0, 0]);
    b.addSample([], [9, 9]);
    const p = b.build();
    expect(toFolded(p)).toBe('main;0xbeef -7\nmain;outer;inner 30\nmain;work 30\n');
    expect(toFolded(p, 0)).toBe('main;0xbeef 5\nmain;a:b c 4\nmain;outer;inner 3\nmain;work 3\n');
    try {
      toFolded(p, 2);
      expect.unreachable();
    } catch (e) {
      expect((e as ProfkitError).code).toBe(ErrorCodes.USAGE);
    }
  });
});
