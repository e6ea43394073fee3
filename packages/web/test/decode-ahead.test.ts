/**
 * The worker's pprof decode started while the inflated bytes arrive (native-gunzip.ts feeds a
 * `ProfileDecoder`, the registry of registry.ts finishes it): the profile, warnings and errors
 * of reading the gzip through the plain registry, and the decode actually finished from the
 * pass 1 run ahead.
 */

import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ProfileBuilder, isProfkitError, limitValue, type LimitName } from '@profkit/core';
import { ProfileDecoder, serializePprof, type DecodeOptions } from '@profkit/pprof';
import { seededRandom } from '@profkit/test-utils';
import { nativeGunzip } from '../src/app/native-gunzip.js';
import { webRegistry } from '../src/registry.js';

/** A random CPU profile: `n` samples of stacks up to 12 deep over 40 functions, a label on some. */
function randomProfile(n: number, seed: number): Uint8Array {
  const rnd = seededRandom(seed);
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }, { type: 'samples', unit: 'count' }] });
  const locations = Array.from({ length: 40 }, (_v, i) => b.internLocation({ functionId: b.internFunction({ name: `fn${i}`, filename: `f${i % 7}.go` }), line: i + 1 }));
  for (let s = 0; s < n; s++) {
    const stack = Array.from({ length: 1 + Math.floor(rnd() * 12) }, () => locations[Math.floor(rnd() * locations.length)]!);
    b.addSample(stack, [BigInt(1 + Math.floor(rnd() * 1000)), 1n], s % 5 === 0 ? { labels: { thread: [`t${s % 3}`] } } : undefined);
  }
  return serializePprof(b.build(), { compress: false });
}

/** A decoder that records what the registry asks of it. */
class RecordingDecoder extends ProfileDecoder {
  indexCalls = 0;
  finishedWith: DecodeOptions | undefined;
  override index(bytes: Uint8Array): void {
    this.indexCalls++;
    super.index(bytes);
  }
  override finish(bytes: Uint8Array, options?: DecodeOptions) {
    this.finishedWith = options;
    return super.finish(bytes, options);
  }
}

type Outcome = { profile: unknown; warnings: unknown } | { code: string; message: string; detail: unknown };
async function outcome(read: () => Promise<{ profile: unknown; warnings: unknown }>): Promise<Outcome> {
  try {
    const r = await read();
    return { profile: r.profile, warnings: r.warnings };
  } catch (e) {
    if (!isProfkitError(e)) throw e;
    return { code: e.code, message: e.message, detail: e.detail };
  }
}

/** The gzip of `raw` read as the worker reads it: inflated natively, decoded ahead, finished by the registry. */
async function readAhead(raw: Uint8Array, fileName: string): Promise<{ outcome: Outcome; decoder: RecordingDecoder }> {
  const decoder = new RecordingDecoder({ file: fileName });
  const inflated = await nativeGunzip(gzipSync(raw), undefined, (soFar) => decoder.index(soFar));
  expect(inflated).toEqual(raw);
  const registry = webRegistry(new Map([[inflated!, decoder]]));
  return { outcome: await outcome(() => registry.read(inflated!, { fileName })), decoder };
}

const DECODE_LIMITS: LimitName[] = ['maxFramesPerStack', 'maxStringLength', 'maxSamples', 'maxTotalFrames', 'maxTableEntries', 'maxSampleTypes', 'maxSampleValues', 'maxLabelsPerSample', 'maxMessageBytes'];

describe('the pprof decode started while the bytes arrive', () => {
  it("gives the plain registry's profile and warnings, finished from the pass 1 run on the arriving chunks", async () => {
    const raw = randomProfile(30_000, 3);
    const { outcome: got, decoder } = await readAhead(raw, 'big.pb.gz');
    expect(got).toEqual(await outcome(() => webRegistry().read(gzipSync(raw), { fileName: 'big.pb.gz' })));
    // Several 64 KiB chunks inflated, each indexed as it arrived.
    expect(decoder.indexCalls).toBeGreaterThan(3);
    // Finished for the decoder's own file and limits: its pass 1 stands (other options would decode again).
    expect(decoder.finishedWith?.file).toBe('big.pb.gz');
    for (const name of DECODE_LIMITS) expect(limitValue(decoder.finishedWith?.limits, name), name).toBe(limitValue(undefined, name));
  });

  it("gives the plain registry's typed errors (code, message, offset) for truncated and corrupted profiles", async () => {
    const raw = randomProfile(300, 5);
    const rnd = seededRandom(11);
    const inputs = [raw.subarray(0, 1), raw.subarray(0, raw.length >> 1), raw.subarray(0, raw.length - 3)];
    for (let k = 0; k < 40; k++) {
      const m = raw.slice();
      for (let j = 0; j < 3; j++) m[Math.floor(rnd() * m.length)] = Math.floor(rnd() * 256);
      inputs.push(m);
    }
    let errors = 0;
    for (const input of inputs) {
      const want = await outcome(() => webRegistry().read(gzipSync(input), { fileName: 'bad.pb.gz' }));
      if ('code' in want) errors++;
      expect((await readAhead(input, 'bad.pb.gz')).outcome).toEqual(want);
    }
    expect(errors).toBeGreaterThan(10);
  });

  it("reads uncompressed bytes (no decode ahead) as the plain registry does: profile, warnings, typed errors", async () => {
    const raw = randomProfile(2_000, 9);
    const rnd = seededRandom(13);
    const inputs = [raw, raw.subarray(0, raw.length >> 1)];
    for (let k = 0; k < 20; k++) {
      const m = raw.slice();
      for (let j = 0; j < 3; j++) m[Math.floor(rnd() * m.length)] = Math.floor(rnd() * 256);
      inputs.push(m);
    }
    for (const input of inputs) {
      const want = await outcome(() => webRegistry().read(input, { fileName: 'raw.pb' }));
      expect(await outcome(() => webRegistry(new Map()).read(input, { fileName: 'raw.pb' }))).toEqual(want);
    }
  });
});
