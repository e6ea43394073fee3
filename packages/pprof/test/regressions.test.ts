import { describe, expect, it } from 'vitest';
import { ErrorCodes, createRegistry, isProfkitError, type ReadLimits } from '@profkit/core/node';
import adapter, { decodeProfile, decodeProfileStream } from '../src/index.js';

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

// Found by the differential check of tools/fuzz's pprof target (buffer decode = streamed decode).
describe('field tags of 2^32 and more', () => {
  /** A tag varint of `bytes` bytes whose low 3 bits (the wire type) are `wireType`, rest all ones. */
  const hugeTag = (wireType: number, bytes = 9) => [0xf8 | wireType, ...Array(bytes - 2).fill(0xff), 0x01];
  const outcomeOf = async (run: () => unknown) => {
    try {
      await run();
      return 'ok';
    } catch (e) {
      if (!isProfkitError(e)) throw e;
      return `${e.code}@${String(e.detail.offset)}: ${e.message}`;
    }
  };

  it('keep their exact wire type: wire type 7 is an unknown wire type at the tag, as in Go', async () => {
    const bytes = Uint8Array.from([...hugeTag(7), 0x08, 0x01]);
    const e = await readError(bytes, {});
    expect(isProfkitError(e) && e.code).toBe(ErrorCodes.PARSE);
    if (!isProfkitError(e)) return;
    expect(e.detail.offset).toBe(0);
    expect(e.message).toContain('unknown wire type: 7');
  });

  it('of an unknown field are skipped by their wire type, and the profile around them reads', async () => {
    const base = [...profile(2, 3)];
    for (const [wireType, payload] of [
      [0, [0x96, 0x01]],
      [1, [1, 2, 3, 4, 5, 6, 7, 8]],
      [2, [3, 0x61, 0x62, 0x63]],
      [5, [1, 2, 3, 4]],
    ] as const) {
      const bytes = Uint8Array.from([...hugeTag(wireType), ...payload, ...base]);
      const r = await registry.read(bytes, { format: 'pprof', fileName: 'x.pb' });
      expect(r.profile.samples.value.length, `wire type ${wireType}`).toBe(2);
      expect(r.profile.functions.name).toContain('main');
    }
  });

  it('give the same outcome decoded whole and streamed in pieces of every size from 1 to 24 bytes', async () => {
    // The fuzzer's input: a fixed32 field, then a 9-byte tag of wire type 7.
    const found = Uint8Array.from([0xbd, 0xd7, 0x5c, 0x99, 0xd1, 0x54, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0xc3, 0x55, 0x40, 0xe4, 0x86]);
    const skipped = Uint8Array.from([...hugeTag(2, 10), 2, 0x61, 0x62, ...profile(1, 2)]);
    for (const bytes of [found, skipped]) {
      const whole = await outcomeOf(() => decodeProfile(bytes, { file: 'x.pb' }));
      for (let size = 1; size <= 24; size++) {
        const streamed = await outcomeOf(() =>
          decodeProfileStream(async function* () {
            for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
          }, { file: 'x.pb' }),
        );
        expect(streamed, `pieces of ${size}`).toBe(whole);
      }
    }
    expect(await outcomeOf(() => decodeProfile(found, { file: 'x.pb' }))).toMatch(/^PROFKIT_E_PARSE@7: .*unknown wire type: 7/);
  });
});
