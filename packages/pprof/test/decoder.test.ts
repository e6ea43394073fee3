/**
 * `ProfileDecoder` (pass 1 run on the bytes as they arrive, pass 2 at the end) against the buffer
 * decoder: same profiles, same errors (code, rule, offset, message) for every fixture, random
 * chunkings, and truncated and mutated inputs.
 */
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, type ReadLimits } from '@profkit/core/node';
import { seededRandom } from '@profkit/test-utils';
import { ProfileDecoder, decodeProfile, encodeProfile } from '../src/index.js';
import { PROTO_FIXTURES, everyFieldProfile, hasFixtures, outcome, pb, readFixture, str, type Outcome } from './helpers.js';

/**
 * `bytes` arriving in chunks whose sizes `nextSize` picks, as a download fills one buffer: each
 * chunk copied into a buffer that starts at `initial` bytes and doubles when full, the decoder
 * indexing the bytes so far after each chunk.
 */
function arriving(bytes: Uint8Array, nextSize: () => number, initial: number, options: { file?: string; limits?: ReadLimits } = { file: 'in.pb' }): Outcome {
  const decoder = new ProfileDecoder(options);
  let buffer = new Uint8Array(initial);
  let used = 0;
  while (used < bytes.length) {
    const chunk = bytes.subarray(used, Math.min(bytes.length, used + Math.max(1, nextSize())));
    if (used + chunk.length > buffer.length) {
      const larger = new Uint8Array(Math.max(used + chunk.length, 2 * buffer.length));
      larger.set(buffer.subarray(0, used));
      buffer = larger;
    }
    buffer.set(chunk, used);
    used += chunk.length;
    decoder.index(buffer.subarray(0, used));
  }
  return outcome(() => decoder.finish(buffer.subarray(0, used), options));
}

const sample = everyFieldProfile;

describe('ProfileDecoder', () => {
  it('reads the same profile as decodeProfile in chunks of every size, in a buffer that grows or not', () => {
    const bytes = sample();
    const want = outcome(() => decodeProfile(bytes, { file: 'in.pb' }));
    expect(want.ok).toBe(true);
    for (const size of [1, 2, 3, 5, 8, 13, 64, bytes.length]) {
      expect(arriving(bytes, () => size, 16), `chunks of ${size}, growing buffer`).toEqual(want);
      expect(arriving(bytes, () => size, bytes.length), `chunks of ${size}, buffer of the whole size`).toEqual(want);
    }
  });

  it.skipIf(!hasFixtures)('reads every pprof fixture as decodeProfile does, in random chunkings', () => {
    const rnd = seededRandom(19);
    for (const rel of PROTO_FIXTURES) {
      const raw = new Uint8Array(gunzipSync(readFixture(rel)));
      const want = outcome(() => decodeProfile(raw, { file: 'in.pb' }));
      for (const most of [4096, 65536]) {
        expect(arriving(raw, () => Math.floor(rnd() * most), 1024), `${rel}: random chunks of up to ${most} bytes`).toEqual(want);
      }
    }
  });

  it('reports the errors of decodeProfile, at the same offsets, for truncated and mutated inputs in random chunkings', () => {
    const bytes = encodeProfile(decodeProfile(sample()).profile);
    const rnd = seededRandom(7);
    const inputs: Uint8Array[] = [new Uint8Array(0)];
    for (let cut = 1; cut < bytes.length; cut += 3) inputs.push(bytes.slice(0, cut));
    for (let k = 0; k < 300; k++) {
      const m = bytes.slice();
      for (let j = 0; j < 1 + Math.floor(rnd() * 3); j++) m[Math.floor(rnd() * m.length)] = Math.floor(rnd() * 256);
      inputs.push(m);
    }
    let errors = 0;
    for (const input of inputs) {
      const want = outcome(() => decodeProfile(input, { file: 'in.pb' }));
      if (!want.ok) errors++;
      for (const most of [1, 9, 200]) expect(arriving(input, () => 1 + Math.floor(rnd() * most), 8)).toEqual(want);
    }
    // The inputs must exercise the error paths (pass 1's and pass 2's), not only the happy one.
    expect(errors).toBeGreaterThan(100);
    expect(arriving(new Uint8Array(0), () => 1, 8)).toMatchObject({ ok: false, code: ErrorCodes.EMPTY_INPUT });
  });

  it("applies the decoder's limits as the bytes arrive, and decodeProfile's own for other options", () => {
    const bytes = sample();
    const limited = { file: 'in.pb', limits: { maxSamples: 1 } };
    const want = outcome(() => decodeProfile(bytes, limited));
    expect(want).toMatchObject({ ok: false, code: ErrorCodes.LIMIT });
    expect(arriving(bytes, () => 5, 8, limited)).toEqual(want);
    // Indexed under maxSamples 1 (which fails), finished with the default limits: decodeProfile's result for those.
    const decoder = new ProfileDecoder(limited);
    decoder.index(bytes);
    expect(outcome(() => decoder.finish(bytes, { file: 'in.pb' }))).toEqual(outcome(() => decodeProfile(bytes, { file: 'in.pb' })));
  });

  it('finishes from the pass 1 it ran (for its own options, limits given or not), without reading the indexed fields again', () => {
    const bytes = sample();
    // The same bytes but one string: only pass 1 reads the string table, so a finish that ran
    // pass 1 again (decodeProfile) would name the function HELPER.
    const at = Buffer.from(bytes).indexOf('helper');
    const other = bytes.slice();
    other.set(str('HELPER'), at);
    expect(JSON.stringify(decodeProfile(other).profile.functions.name)).toContain('HELPER');
    for (const [indexed, finished] of [[{}, {}], [{ file: 'in.pb' }, { file: 'in.pb', limits: {} }]] as const) {
      const decoder = new ProfileDecoder(indexed);
      decoder.index(bytes);
      expect(decoder.finish(other, finished).profile).toEqual(decodeProfile(bytes).profile);
    }
  });

  it('keeps interleaved decodes apart (a buffer decode between two chunks)', () => {
    const a = sample();
    const b = pb([[1, [[1, 1], [2, 2]]], [2, [[1, 1], [2, 3]]], [4, [[1, 1]]], [6, str('')], [6, str('x')], [6, str('y')]]);
    const decoder = new ProfileDecoder();
    for (let n = 1; n <= a.length; n += 11) {
      decoder.index(a.subarray(0, n));
      decodeProfile(b);
    }
    expect(decoder.finish(a).profile).toEqual(decodeProfile(a).profile);
  });
});
