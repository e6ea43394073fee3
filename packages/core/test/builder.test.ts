import { describe, expect, it } from 'vitest';
import { ProfileBuilder, ProfileIndex, resolveStack, sampleRow, locationRow, ErrorCodes, ProfkitError } from '../src/node/index.js';

describe('ProfileBuilder', () => {
  it('interns functions and locations and resolves stacks innermost first, inline frames expanded', () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }, { type: 'cpu', unit: 'nanoseconds' }] });
    const main = b.internFunction({ name: 'main', filename: 'main.c', startLine: 1 });
    const foo = b.internFunction({ name: 'foo', systemName: '_Z3foov', filename: 'foo.c' });
    const inl = b.internFunction({ name: 'inl', filename: 'foo.h' });
    expect(b.internFunction({ name: 'main', filename: 'main.c', startLine: 1 })).toBe(main);
    const lMain = b.internLocation({ functionId: main, line: 10 });
    const lFoo = b.internLocation({ functionId: inl, line: 3, column: 7, address: 0x1000n, inlinedInto: [{ functionId: foo, line: 20 }] });
    expect(b.internLocation({ functionId: main, line: 10 })).toBe(lMain);
    b.addSample([lFoo, lMain], [1, 2n ** 60n], [{ key: 'thread', str: 't1' }, { key: 'bytes', num: 5, unit: 'bytes' }]);
    b.addSample([lMain], [2, -3]);
    const p = b.build();
    expect(p.samples.value).toBe(p.samples['.values'][0]);
    expect(Array.from(p.samples['.values'][1]!)).toEqual([2n ** 60n, -3n]);
    const frames = resolveStack(p, 0, new ProfileIndex(p));
    expect(frames.map((f) => [f.name, f.filename, f.line, f.inlined])).toEqual([
      ['inl', 'foo.h', 3, true],
      ['foo', 'foo.c', 20, false],
      ['main', 'main.c', 10, false],
    ]);
    expect(sampleRow(p, 0).labels).toEqual([{ key: 'thread', str: 't1' }, { key: 'bytes', num: 5n, unit: 'bytes' }]);
    expect(sampleRow(p, 1).labels).toEqual([]);
    expect(locationRow(p, 1).lines).toEqual([{ functionId: inl, line: 3, column: 7 }, { functionId: foo, line: 20, column: 0 }]);
  });

  it('rejects values that would lose precision and wrong value counts', () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    expect(() => b.addSample([], [2 ** 60])).toThrow(ProfkitError);
    try {
      b.addSample([], [1, 2]);
      expect.unreachable();
    } catch (e) {
      expect((e as ProfkitError).code).toBe(ErrorCodes.USAGE);
    }
  });
});
