/**
 * The encoder's WebAssembly sample writer (src/sample-writer.ts) against its JS loops: the same
 * bytes, whole and in chunk windows, for every pprof fixture, the Rprof fixtures converted, and
 * generated profiles with every varint length and value edge; and the committed module is what
 * sample-writer.wat assembles to.
 */

import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createProfile, type Profile } from '@profkit/core';
import { readRprofBytes } from '@profkit/rprof';
import { seededRandom } from '@profkit/test-utils';
import { decodeProfile, encodeProfile, encodeProfileChunks } from '../src/codec.js';
import { MIN_WASM_SAMPLES, setSamplePath, type SamplePath } from '../src/sample-writer.js';
import { GENERATED_PATH, WAT_PATH, assemble, generatedSource } from '../scripts/build-sample-writer.mjs';
import { PROTO_FIXTURES, fixture, fixturesDir, hasFixtures, packageDir } from './helpers.js';

afterEach(() => {
  setSamplePath('auto');
});

function encodedWith(path: SamplePath, p: Profile): Uint8Array {
  setSamplePath(path);
  return encodeProfile(p);
}

function chunksWith(path: SamplePath, p: Profile, chunkSize: number): Uint8Array {
  setSamplePath(path);
  return Buffer.concat([...encodeProfileChunks(p, { chunkSize }).chunks]);
}

/** The wasm path gives the JS path's bytes, whole and in chunks. */
function expectSameBytes(p: Profile, what: string, chunkSizes: number[] = [4096]): void {
  const js = encodedWith('js', p);
  expect(Buffer.from(encodedWith('wasm', p)).equals(Buffer.from(js)), what).toBe(true);
  for (const chunkSize of chunkSizes) {
    expect(Buffer.from(chunksWith('wasm', p, chunkSize)).equals(Buffer.from(js)), `${what}, chunks of ${chunkSize}`).toBe(true);
  }
}

/** Location ids of 1 to 5 varint bytes, each length's smallest and largest. */
const IDS = [1, 2, 127, 128, 300, 16383, 16384, 99999, 2097151, 2097152, 268435455, 268435456, 0x7fffffff, 0xffffffff];
const MAX64 = (1n << 63n) - 1n;
const VALUE_EDGES = [0n, 1n, -1n, 127n, 128n, 20000000n, (1n << 32n) - 1n, 1n << 32n, 1n << 35n, -(1n << 40n), MAX64, -MAX64, -MAX64 - 1n];

/** A profile of `nS` samples of `nT` values; stacks of 0 to 6 ids, values from edges and at random. */
function generated(seed: number, nS: number, nT: number, constantValues = false): Profile {
  const random = seededRandom(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)]!;
  const offsets = new Uint32Array(nS + 1);
  const ids: number[] = [];
  const values = Array.from({ length: nT }, () => new BigInt64Array(nS));
  for (let s = 0; s < nS; s++) {
    const depth = Math.floor(random() * 7);
    for (let k = 0; k < depth; k++) ids.push(pick(IDS));
    offsets[s + 1] = ids.length;
    for (let j = 0; j < nT; j++) {
      values[j]![s] = constantValues ? BigInt(j + 1) * 20000000n : random() < 0.6 ? pick(VALUE_EDGES) : BigInt.asIntN(64, BigInt(Math.floor(random() * 2 ** 53)) << BigInt(Math.floor(random() * 12)));
    }
  }
  return createProfile({
    sample_types: { type: Array.from({ length: nT }, (_, j) => `t${j}`), unit: Array.from({ length: nT }, () => 'count') },
    samples: { value: values[0] ?? new BigInt64Array(nS), locations: { offsets, location_id: Uint32Array.from(ids) }, '.values': values },
    locations: { location_id: Uint32Array.from(IDS), function_id: new Uint32Array(IDS.length), line: new Float64Array(IDS.length) },
  });
}

/** WebAssembly.Memory.prototype (the packages compile against the ES lib only, without WebAssembly's types). */
const wasmMemoryPrototype = () => (globalThis as unknown as { WebAssembly: { Memory: { prototype: { grow(pages: number): number } } } }).WebAssembly.Memory.prototype;

describe('the WebAssembly sample writer', () => {
  it('is what sample-writer.wat assembles to (regenerate with scripts/build-sample-writer.mjs)', async () => {
    const bytes = await assemble(readFileSync(WAT_PATH, 'utf8'));
    expect(readFileSync(GENERATED_PATH, 'utf8')).toBe(generatedSource(bytes));
  });

  it('writes the bytes of the JS loops for 0 to 4 sample types, ids of 1 to 5 bytes, 64-bit edge values', () => {
    for (let nT = 0; nT <= 4; nT++) {
      // Samples need a sample type (pprof.CheckValid): without one, only an empty profile.
      const nS = nT === 0 ? 0 : 600;
      for (const seed of [1, 2, 3]) expectSameBytes(generated(100 * nT + seed, nS, nT), `nT ${nT}, seed ${seed}`, [4096, 4099, 5000]);
      // Runs of equal values (what the module reuses the previous sample's encoding for).
      expectSameBytes(generated(100 * nT + 9, nS, nT, true), `nT ${nT}, constant values`, [4096]);
    }
  });

  it('writes the bytes of the JS loops with chunk windows ending at every byte of a sample', () => {
    const p = generated(7, 400, 2);
    const js = encodedWith('js', p);
    for (let chunkSize = 4096; chunkSize < 4096 + 64; chunkSize++) {
      expect(Buffer.from(chunksWith('wasm', p, chunkSize)).equals(Buffer.from(js)), `chunks of ${chunkSize}`).toBe(true);
    }
  });

  it('writes the bytes of the JS loops for profiles without samples, with empty stacks only, with one sample', () => {
    expectSameBytes(generated(11, 0, 2), 'no samples');
    expectSameBytes(generated(12, 1, 1), 'one sample');
    const empty = generated(13, 50, 2);
    empty.samples.locations.offsets.fill(0);
    expectSameBytes(createProfile({ sample_types: empty.sample_types, samples: { ...empty.samples, locations: { offsets: empty.samples.locations.offsets, location_id: new Uint32Array(0) } } }), 'empty stacks');
  });

  it('is used by default from MIN_WASM_SAMPLES label-free samples on, and gives the same bytes there', () => {
    // 'auto': below the threshold the JS loops, from it on the module (both must agree). The
    // module's memory is grown once per encoding it writes: that tells which path ran.
    const p = generated(21, MIN_WASM_SAMPLES, 2);
    const js = encodedWith('js', p);
    const grow = vi.spyOn(wasmMemoryPrototype(), 'grow');
    try {
      encodedWith('auto', generated(22, MIN_WASM_SAMPLES - 1, 2));
      expect(grow).not.toHaveBeenCalled();
      expect(Buffer.from(encodedWith('auto', p)).equals(Buffer.from(js))).toBe(true);
      expect(grow).toHaveBeenCalledTimes(1);
    } finally {
      grow.mockRestore();
    }
  });

  it('rejects a profile whose stack offsets decrease or end past the ids, on both paths (no trap, no bytes, no 2^32-step loop)', () => {
    /** What encoding gives: the bytes, or the error's class and code. */
    const outcome = (path: SamplePath, p: Profile) => {
      try {
        return Buffer.from(encodedWith(path, p)).toString('base64');
      } catch (e) {
        return `${(e as Error).constructor.name} ${(e as { code?: string }).code}`;
      }
    };
    const nS = MIN_WASM_SAMPLES + 4;
    for (const [what, spoil] of [
      ['decreasing', (o: Uint32Array) => void (o[10] = 0)],
      ['past the ids', (o: Uint32Array) => void (o[10] = o[nS]! + 100000)],
      ['wrapping', (o: Uint32Array) => void (o[10] = 0xfffffff0)],
    ] as const) {
      const p = generated(31, nS, 2);
      spoil(p.samples.locations.offsets);
      // A typed error (before: bytes from the module, or its trap; 2^32 steps of the JS loops).
      expect(outcome('js', p), what).toBe('ProfkitError PROFKIT_E_INVALID_PROFILE');
      expect(outcome('wasm', p), what).toBe('ProfkitError PROFKIT_E_INVALID_PROFILE');
      expect(outcome('auto', p), what).toBe('ProfkitError PROFKIT_E_INVALID_PROFILE');
    }
  });

  it('leaves the samples to the JS loops when the host refuses the module its memory', () => {
    const p = generated(41, MIN_WASM_SAMPLES, 2);
    const js = encodedWith('js', p);
    const grow = vi.spyOn(wasmMemoryPrototype(), 'grow').mockImplementation(() => {
      throw new RangeError('WebAssembly.Memory.grow(): Maximum memory size exceeded');
    });
    try {
      expect(Buffer.from(encodedWith('auto', p)).equals(Buffer.from(js))).toBe(true);
      expect(grow).toHaveBeenCalled();
      // Forced to the module (tests, measurements), the failure is not hidden.
      expect(() => encodedWith('wasm', p)).toThrow(RangeError);
    } finally {
      grow.mockRestore();
    }
  });

  it.skipIf(!hasFixtures)('writes the bytes of the JS loops for every pprof fixture', () => {
    for (const rel of PROTO_FIXTURES) {
      const raw = readFileSync(fixture(rel));
      const { profile } = decodeProfile(raw[0] === 0x1f ? gunzipSync(raw) : raw, { file: rel });
      expectSameBytes(profile, rel, [4096, 1 << 16]);
    }
  });

  it('writes the bytes of the JS loops for the Rprof fixtures converted', () => {
    const dirs = [join(packageDir, '../rprof/test/fixtures'), join(fixturesDir, 'r-profile/inst/samples/rprof'), join(fixturesDir, 'r-profile/derived')];
    let converted = 0;
    for (const dir of dirs.filter((d) => existsSync(d))) {
      for (const name of readdirSync(dir).filter((n) => n.endsWith('.out'))) {
        let profile: Profile;
        try {
          profile = readRprofBytes(readFileSync(join(dir, name)), { fileName: name }).profile;
        } catch {
          continue; // a fixture of the reader's error cases
        }
        expectSameBytes(profile, name);
        converted++;
      }
    }
    expect(converted).toBeGreaterThan(0);
  });
});
