import { describe, expect, it } from 'vitest';
import { ErrorCodes, createRegistry, isProfkitError, type ReadLimits } from '@profkit/core';
import adapter from '../src/index.js';

// Regressions found by tools/fuzz (special inputs) and the read limits of issue 10: exceeding a
// limit is PROFKIT_E_LIMIT naming the option that raises it; raising the option lets it through.

function varint(v: number): number[] {
  const out: number[] = [];
  do {
    let b = v % 128;
    v = Math.floor(v / 128);
    if (v > 0) b |= 0x80;
    out.push(b);
  } while (v > 0);
  return out;
}
const field = (n: number, payload: number[]) => [(n << 3) | 2, ...varint(payload.length), ...payload];

/** A minimal valid profile: one sample type, `samples` samples of `frames` frames of location 1. */
function profile(samples: number, frames: number, name = 'main'): Uint8Array {
  const out: number[] = [];
  out.push(...field(1, [0x08, 1, 0x10, 2])); // sample_type {type: 1, unit: 2}
  const sample = [...field(1, Array(frames).fill(1)), ...field(2, [1])];
  for (let i = 0; i < samples; i++) out.push(...field(2, sample));
  out.push(...field(4, [0x08, 1, ...field(4, [0x08, 1])])); // location {id 1, line {function_id 1}}
  out.push(...field(5, [0x08, 1, 0x10, 3])); // function {id 1, name 3}
  for (const s of ['', 'samples', 'count', name]) out.push(...field(6, [...Buffer.from(s)]));
  return Uint8Array.from(out);
}

const registry = createRegistry([adapter]);
async function readError(bytes: Uint8Array, limits: ReadLimits) {
  try {
    await registry.read(bytes, { format: 'pprof', fileName: 'x.pb', limits });
  } catch (e) {
    return e;
  }
  throw new Error('read succeeded');
}

describe('pprof read limits', () => {
  const cases: [keyof ReadLimits, Uint8Array, number][] = [
    ['maxFramesPerStack', profile(1, 50), 49],
    ['maxSamples', profile(20, 1), 19],
    ['maxStringLength', profile(1, 1, 'x'.repeat(300)), 299],
  ];
  for (const [option, bytes, limit] of cases) {
    it(`${option}: above the limit is PROFKIT_E_LIMIT naming the option; at the limit it reads`, async () => {
      const e = await readError(bytes, { [option]: limit });
      expect(isProfkitError(e) && e.code).toBe(ErrorCodes.LIMIT);
      if (!isProfkitError(e)) return;
      expect(e.detail.option).toBe(option);
      expect(e.message).toContain(option);
      expect(typeof e.detail.offset).toBe('number');
      const ok = await registry.read(bytes, { format: 'pprof', fileName: 'x.pb', limits: { [option]: limit + 1 } });
      expect(ok.profile.samples.locations.offsets.length).toBeGreaterThan(1);
    });
  }

  it('the defaults accept an ordinary profile', async () => {
    const r = await registry.read(profile(3, 4), { format: 'pprof', fileName: 'x.pb' });
    expect(r.profile.functions.name).toContain('main');
  });

  it('500k nested start-group tags of an unknown field end in a typed error, not a stack overflow', async () => {
    const tag = [0xa3, 0x06]; // field 100, wire type 3
    const deep = new Uint8Array(tag.length * 500_000);
    for (let i = 0; i < 500_000; i++) deep.set(tag, i * 2);
    const e = await readError(deep, {});
    expect(isProfkitError(e) && e.code).toMatch(/^PROFKIT_E_/);
  });
});
