/** The growing columns the stream readers keep large arrays' values in. */
import { describe, expect, it } from 'vitest';
import { NumberColumn, ValueColumn } from '../src/columns.js';

describe('NumberColumn', () => {
  it('keeps every number exactly, 32-bit integers until one is not (then doubles), across growth', () => {
    const c = new NumberColumn();
    const input = [...Array.from({ length: 3000 }, (_, i) => i - 5), 2 ** 31, -0, 0.5, 2 ** 53];
    for (const v of input) c.push(v);
    expect(Array.from(c.values())).toEqual(input);
    expect(Object.is(c.at(3001), -0)).toBe(true);
    expect(c.values()).toBeInstanceOf(Float64Array);
  });
});

describe('ValueColumn', () => {
  it('gives back numbers, absent values (undefined) and other values (kept as they were)', () => {
    const c = new ValueColumn();
    const input: unknown[] = [1, undefined, 'x', null, [1, 2], 7, true, 2 ** 40];
    for (const v of input) c.push(v);
    expect(c.length).toBe(input.length);
    expect(Array.from({ length: c.length }, (_, i) => c.at(i))).toEqual(input);
  });
});
