/**
 * The decoder's `aggregate` option: samples with google/pprof's equal sample key (location ids,
 * string labels, numeric labels with their units; `profile/merge.go`) read as one sample with the
 * summed values, in the order of first appearance, by the buffer and the streamed decoder alike.
 * The reference below merges the samples of a plain decode, independently of the decoder's table.
 */
import { gzipSync } from 'node:zlib';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, isProfkitError, labelsOf, type Profile } from '@profkit/core/node';
import { decodeProfile, decodeProfileStream } from '../src/index.js';
import { codec, readStreamed } from '../src/codec.js';
import { ProfileDecoder, judgedBeforeFill } from '../src/decode.js';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { PROTO_FIXTURES, buildGoTools, goMissing, hasFixtures, pb, readFixture, str, type Field } from './helpers.js';

interface FlatSample {
  locationIds: number[];
  labels: { key: string; str?: string; num?: string; unit?: string }[];
  values: string[];
}

/** The samples of `p` as plain data (location ids, labels in their order, values). */
function samplesOf(p: Profile): FlatSample[] {
  const { offsets, location_id } = p.samples.locations;
  const out: FlatSample[] = [];
  for (let i = 0; i + 1 < offsets.length; i++) {
    out.push({
      locationIds: Array.from(location_id.subarray(offsets[i]!, offsets[i + 1]!)),
      labels: labelsOf(p, i).map((l) => ('str' in l ? { key: l.key, str: l.str } : { key: l.key, num: String(l.num), unit: l.unit ?? '' })),
      values: p.samples['.values'].map((c) => String(c[i]!)),
    });
  }
  return out;
}

/** google/pprof's sample key: ids in order; string and numeric labels by key (sorted), values of a key in order. */
function goKey(s: FlatSample): string {
  const byKey = new Map<string, string[]>();
  for (const l of s.labels) {
    const k = `${l.str !== undefined ? 's' : 'n'}${JSON.stringify(l.key)}`;
    byKey.set(k, [...(byKey.get(k) ?? []), l.str !== undefined ? JSON.stringify(l.str) : `${l.num}/${JSON.stringify(l.unit)}`]);
  }
  return JSON.stringify([s.locationIds, [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))]);
}

/** The samples merged as Go's Merge merges them (all-zero samples and sums left out, int64 sums wrap). */
function referenceMerge(samples: FlatSample[]): FlatSample[] {
  const seen = new Map<string, FlatSample>();
  for (const s of samples) {
    if (s.values.every((v) => v === '0')) continue;
    const k = goKey(s);
    const first = seen.get(k);
    if (first === undefined) seen.set(k, { ...s, values: [...s.values] });
    else first.values = first.values.map((v, j) => String(BigInt.asIntN(64, BigInt(v) + BigInt(s.values[j]!))));
  }
  return [...seen.values()].filter((s) => s.values.some((v) => v !== '0'));
}

/** A re-openable stream of `bytes` in pieces of `size` bytes. */
function chunked(bytes: Uint8Array, size: number): () => AsyncIterable<Uint8Array> {
  return async function* () {
    for (let i = 0; i < bytes.length; i += size) yield bytes.slice(i, Math.min(bytes.length, i + size));
  };
}

// String table of the crafted profiles.
const STRINGS = ['', 'samples', 'count', 'bytes', 'thread', 'main', 'f', 'g', 'pid', 'size', 'kilobytes', 'worker', 'main'];
const S = Object.fromEntries(STRINGS.map((s, i) => [s, i]).reverse()) as Record<string, number>;
const strLabel = (key: string, value: string): Field => [3, [[1, S[key]!], [2, S[value]!]]];
const numLabel = (key: string, num: number | bigint, unit?: string): Field => [3, [[1, S[key]!], [3, num], ...(unit ? ([[4, S[unit]!]] as Field[]) : [])]];
const sample = (ids: number[], values: (number | bigint)[], ...labels: Field[]): Field => [2, [[1, { packed: ids }], [2, { packed: values }], ...labels]];

function profileOf(samples: Field[]): Uint8Array {
  return pb([
    [1, [[1, S.samples!], [2, S.count!]]],
    [1, [[1, S.bytes!], [2, S.bytes!]]],
    ...samples,
    // Addresses make the three locations differ for Go's Merge too (it merges equal locations).
    [4, [[1, 1], [3, 0x1010], [4, [[1, 1]]]]],
    [4, [[1, 2], [3, 0x1020], [4, [[1, 2]]]]],
    [4, [[1, 3], [3, 0x1030], [4, [[1, 1]]]]],
    [5, [[1, 1], [2, S.f!]]],
    [5, [[1, 2], [2, S.g!]]],
    ...STRINGS.map((s) => [6, str(s)] as Field),
  ]);
}

const CRAFTED = profileOf([
  sample([1, 2], [1, 10]),
  sample([1, 2, 3], [1, 5]),
  sample([1, 2], [2, 20]), // = the first
  sample([2, 1], [1, 1]), // other order: another stack
  sample([1, 2], [1, 7], strLabel('thread', 'main')),
  sample([1, 2], [1, 7], strLabel('thread', 'main')), // = the one before
  sample([1, 2], [1, 7], strLabel('thread', 'worker')),
  sample([1, 2], [1, 1], strLabel('thread', 'main'), numLabel('pid', 4)),
  sample([1, 2], [1, 1], numLabel('pid', 4), strLabel('thread', 'main')), // labels of other keys in another order: equal
  sample([1, 2], [1, 1], numLabel('size', 4, 'bytes')),
  sample([1, 2], [1, 1], numLabel('size', 4, 'kilobytes')), // another unit: another sample
  sample([1, 2], [1, 1], numLabel('size', 4)), // no unit: another sample
  sample([1, 2], [1, 1], numLabel('size', 4, 'bytes')), // = the first size 4 bytes
  sample([1, 2], [1, 1], strLabel('thread', 'main'), strLabel('thread', 'worker')),
  sample([1, 2], [1, 1], strLabel('thread', 'worker'), strLabel('thread', 'main')), // values of one key in another order: another sample
  sample([1, 2], [1, 1], strLabel('thread', 'main'), strLabel('thread', 'worker')),
  sample([1, 2], [1, 1], [3, [[1, S.thread!], [2, 12]]]), // "main" at another string index: equal to thread=main
  sample([3], [0, 0]), // all-zero samples are left out, as Go's Merge does…
  sample([2], [0, 1]),
  sample([3], [0, 3]), // …so that this one comes after [2]'s, as in Go's merged profile
  sample([1], [(1n << 63n) - 1n, -1n]),
  sample([1], [1, -1]), // sums wrap as Go's int64 additions
  sample([1], [5, 1n << 62n]),
  sample([3, 3], [1, 5], strLabel('thread', 'worker')),
  sample([2, 2], [1, 1], strLabel('thread', 'worker')),
  sample([3, 3], [-1, -5], strLabel('thread', 'worker')), // sums to zero: left out after merging, as Go's Merge does
]);

describe('decodeProfile with aggregate', () => {
  it('merges samples with equal location ids and labels (Go sample key), summing values in 64 bits', () => {
    const plain = samplesOf(decodeProfile(CRAFTED).profile);
    expect(plain).toHaveLength(26);
    const merged = samplesOf(decodeProfile(CRAFTED, { aggregate: true }).profile);
    expect(merged).toEqual(referenceMerge(plain));
    // The cases the crafted profile is made of, spelled out.
    expect(merged).toHaveLength(15);
    expect(merged.map((s) => s.locationIds.join(',')).slice(-4)).toEqual(['2', '3', '1', '2,2']);
    expect(merged.at(-1)!.labels).toEqual([{ key: 'thread', str: 'worker' }]);
    expect(merged[0]).toEqual({ locationIds: [1, 2], labels: [], values: ['3', '30'] });
    expect(merged.find((s) => s.locationIds.length === 1 && s.locationIds[0] === 1)!.values).toEqual([String(-(1n << 63n) + 5n), String((1n << 62n) - 2n)]);
    expect(merged.filter((s) => s.labels.some((l) => l.key === 'size')).map((s) => s.values[0])).toEqual(['2', '1', '1']);
    expect(merged.find((s) => s.locationIds[0] === 3 && s.locationIds.length === 1)!.values).toEqual(['0', '3']);
  });

  it('gives the same profile from the streamed decoder, in every chunk size, and from a read with the option', async () => {
    const want = decodeProfile(CRAFTED, { aggregate: true });
    for (const size of [1, 3, 7, 64, CRAFTED.length]) {
      const got = await decodeProfileStream(chunked(CRAFTED, size), { aggregate: true });
      expect(samplesOf(got.profile)).toEqual(samplesOf(want.profile));
      expect(got.profile).toEqual(want.profile);
    }
    const read = await codec.read!(inputOf(gzipSync(CRAFTED), 'c.pb.gz'), { options: { aggregate: true } });
    expect(samplesOf(read.profile)).toEqual(samplesOf(want.profile));
  });

  it('is off by default, and the read hint samplesSummed turns it on unless the option says false', async () => {
    const gz = gzipSync(CRAFTED);
    expect((await codec.read!(inputOf(gz, 'c.pb.gz'), {})).profile.samples.value).toHaveLength(26);
    // 'if-repeating': Go's 15, but for the samples whose sums would change a sign (four more rows).
    expect((await codec.read!(inputOf(gz, 'c.pb.gz'), { samplesSummed: true })).profile.samples.value).toHaveLength(19);
    expect((await codec.read!(inputOf(gz, 'c.pb.gz'), { samplesSummed: true, options: { aggregate: false } })).profile.samples.value).toHaveLength(26);
    await expect(codec.read!(inputOf(gz, 'c.pb.gz'), { options: { aggregate: 'yes' } })).rejects.toMatchObject({ code: ErrorCodes.USAGE, detail: { option: 'aggregate' } });
  });

  it('takes the streamed path (input beyond the whole-decode bound) with the same result', async () => {
    const gz = gzipSync(CRAFTED);
    const want = decodeProfile(CRAFTED, { aggregate: true }).profile;
    const got = await readStreamed(inputOf(gz, 'c.pb.gz', 16), { options: { aggregate: true } }, 32);
    expect(got.profile).toEqual(want);
  });

  it('keeps the errors of the plain decode (offsets, sample index) and the limits on input samples', () => {
    const bad = profileOf([sample([1], [1, 1]), sample([1], [1, 1]), sample([1], [1])]);
    const plain = thrown(() => decodeProfile(bad));
    expect(plain.code).toBe(ErrorCodes.INVALID_PROFILE);
    expect(thrown(() => decodeProfile(bad, { aggregate: true }))).toEqual(plain);
    const limited = thrown(() => decodeProfile(CRAFTED, { aggregate: true, limits: { maxSamples: 25 } }));
    expect(limited).toMatchObject({ code: ErrorCodes.LIMIT, detail: { option: 'maxSamples' } });
  });

  it('checks the locations of the samples it leaves out for being zero (Go: "sample has nil location")', () => {
    const big = 1n << 40n;
    const missing: [Uint8Array, number | string][] = [
      [profileOf([sample([9], [0, 0]), sample([1], [1, 1])]), 9],
      [profileOf([sample([1], [1, 1]), sample([2, 9], [1, 1]), sample([2, 9], [-1, -1])]), 9], // a zero sum
      [profileOf([[2, [[1, { packed: [2, big] }], [2, { packed: [0, 0] }]]], sample([1], [1, 1])]), String(big)], // an id above 2^32-1
    ];
    for (const [bytes, locationId] of missing) {
      const plain = thrown(() => decodeProfile(bytes));
      expect(plain).toMatchObject({ code: ErrorCodes.INVALID_PROFILE, detail: { locationId } });
      for (const aggregate of [true, 'if-repeating'] as const) expect(thrown(() => decodeProfile(bytes, { aggregate }))).toEqual(plain);
    }
  });

  it("'if-repeating' merges no samples whose sums would change a value's sign (reports sum |value| per sample)", () => {
    const bytes = profileOf([
      sample([1, 2], [5, 10]),
      sample([1, 2], [-3, 10]), // the other sign: a row of its own
      sample([1, 2], [2, 20]), // merged into the first
      sample([1], [(1n << 63n) - 1n, 1]),
      sample([1], [1, 1]), // the sum would wrap: a row of its own
      sample([1], [0, 1]), // merged into [1]'s first
      sample([2], [-(1n << 62n), 1]),
      sample([2], [-(1n << 62n), 1]), // a sum of -2^63 (not negated in int64, as --base negates): a row of its own
    ]);
    const plain = samplesOf(decodeProfile(bytes).profile);
    const summed = samplesOf(decodeProfile(bytes, { aggregate: 'if-repeating' }).profile);
    expect(summed.map((s) => [s.locationIds.join(','), ...s.values])).toEqual([
      ['1,2', '7', '30'],
      ['1,2', '-3', '10'],
      ['1', String((1n << 63n) - 1n), '2'],
      ['1', '1', '1'],
      ['2', String(-(1n << 62n)), '1'],
      ['2', String(-(1n << 62n)), '1'],
    ]);
    const absSums = (samples: FlatSample[]) => [0, 1].map((j) => samples.reduce((t, s) => t + (BigInt(s.values[j]!) < 0n ? -BigInt(s.values[j]!) : BigInt(s.values[j]!)), 0n));
    expect(absSums(summed)).toEqual(absSums(plain));
    // An explicit aggregate stays Go's Merge.
    expect(samplesOf(decodeProfile(bytes, { aggregate: true }).profile)).toEqual(referenceMerge(plain));
  });

  it('leaves a sample with a location id above 2^32-1 unmerged (renumbered after decoding) and its ids right', () => {
    const big = 1n << 40n;
    const bytes = pb([
      [1, [[1, 1], [2, 2]]],
      [2, [[1, { packed: [2, big] }], [2, { packed: [0] }]]], // all zero: left out, its big id with it
      [2, [[1, { packed: [big, 2] }], [2, { packed: [1] }]]],
      [2, [[1, { packed: [2, big] }], [2, { packed: [3] }]]],
      [2, [[1, { packed: [2, big] }], [2, { packed: [-3] }]]], // equal to the one before, but not merged (a big id), so both kept
      [2, [[1, { packed: [big, 2] }], [2, { packed: [1] }]]],
      [2, [[1, { packed: [2] }], [2, { packed: [1] }]]],
      [2, [[1, { packed: [2] }], [2, { packed: [1] }]]],
      [4, [[1, big], [4, [[1, 1]]]]],
      [4, [[1, 2], [4, [[1, 1]]]]],
      [5, [[1, 1], [2, 3]]],
      ...['', 'samples', 'count', 'f'].map((s) => [6, str(s)] as Field),
    ]);
    const merged = samplesOf(decodeProfile(bytes, { aggregate: true }).profile);
    expect(merged.map((s) => s.values[0])).toEqual(['1', '3', '-3', '1', '2']);
    expect(merged[0]!.locationIds).toEqual(merged[3]!.locationIds);
    expect(merged[0]!.locationIds[1]).toBe(2);
    expect(merged[1]!.locationIds).toEqual([2, merged[0]!.locationIds[0]]);
    expect(merged[2]!.locationIds).toEqual(merged[1]!.locationIds);
  });

  it.skipIf(!hasFixtures)('reads every pprof fixture as the reference merge of its plain decode', () => {
    for (const rel of PROTO_FIXTURES) {
      let bytes = readFixture(rel);
      if (bytes[0] === 0x1f) bytes = new Uint8Array(gunzipSync(bytes));
      const plain = samplesOf(decodeProfile(bytes).profile);
      expect(samplesOf(decodeProfile(bytes, { aggregate: true }).profile), rel).toEqual(referenceMerge(plain));
    }
  });

  it("'if-repeating' merges where the first samples repeat, and reads the rest as it is where they do not", () => {
    // 5,000 distinct stacks then each again: judged after 4,096 samples, all distinct.
    const distinctFirst: Field[] = [];
    const stackOf = (k: number) => Array.from({ length: 8 }, (_, d) => 1 + (Math.floor(k / 3 ** d) % 3));
    for (let i = 0; i < 10_000; i++) distinctFirst.push(sample(stackOf(i % 5000), [1, i]));
    const bytes = profileOf(distinctFirst);
    const plain = samplesOf(decodeProfile(bytes).profile);
    expect(samplesOf(decodeProfile(bytes, { aggregate: 'if-repeating' }).profile)).toEqual(plain);
    expect(samplesOf(decodeProfile(bytes, { aggregate: true }).profile)).toHaveLength(5000);
    // 3 stacks over and over: merged to the end.
    const repeating: Field[] = [];
    for (let i = 0; i < 10_000; i++) repeating.push(sample([1 + (i % 3), 2], [1, i]));
    const again = profileOf(repeating);
    expect(samplesOf(decodeProfile(again, { aggregate: 'if-repeating' }).profile)).toEqual(referenceMerge(samplesOf(decodeProfile(again).profile)));
  });

  it("'if-repeating' judges before pass 2: a profile whose first samples hardly repeat is read as without the option", () => {
    // 6,000 samples, one in 20 of the first 4,096 the stack of the one before (95 % distinct keys,
    // values all different): read plain, the repeats stay rows of their own.
    const stackOf = (k: number) => Array.from({ length: 8 }, (_, d) => 1 + (Math.floor(k / 3 ** d) % 3));
    const samples: Field[] = [];
    for (let i = 0; i < 6000; i++) samples.push(sample(stackOf(i % 20 === 19 ? i - 1 : i), [1, i]));
    const bytes = profileOf(samples);
    const plain = samplesOf(decodeProfile(bytes).profile);
    expect(plain).toHaveLength(6000);
    expect(samplesOf(decodeProfile(bytes, { aggregate: 'if-repeating' }).profile)).toEqual(plain);
    expect(judgedBeforeFill).toEqual({ samples: 4096, distinct: 4096 - Math.floor(4096 / 20), merging: false });
    const decoder = new ProfileDecoder({ aggregate: 'if-repeating' });
    decoder.index(bytes.subarray(0, bytes.length >> 1));
    expect(samplesOf(decoder.finish(bytes).profile)).toEqual(plain);
    expect(judgedBeforeFill.merging).toBe(false);
    // `true` merges them all.
    expect(samplesOf(decodeProfile(bytes, { aggregate: true }).profile)).toHaveLength(6000 - 300);
  });

  it("'if-repeating' judges before pass 2 in the streamed decode too (keys hashed in pass 1, in every chunk size): the one-buffer decode's samples", async () => {
    // As above: 95 % of the first 4,096 keys distinct. Judged while merging (after pass 2's first
    // 4,096 samples), the streamed decode had merged the 204 repeats among them.
    const stackOf = (k: number) => Array.from({ length: 8 }, (_, d) => 1 + (Math.floor(k / 3 ** d) % 3));
    const samples: Field[] = [];
    for (let i = 0; i < 6000; i++) samples.push(sample(stackOf(i % 20 === 19 ? i - 1 : i), [1, i]));
    const bytes = profileOf(samples);
    const plain = samplesOf(decodeProfile(bytes).profile);
    for (const size of [7, 4096, 1 << 20]) {
      decodeProfile(CRAFTED, { aggregate: true }); // leaves judgedBeforeFill as "not judged, merging"
      const streamed = await decodeProfileStream(chunked(bytes, size), { aggregate: 'if-repeating' });
      expect(samplesOf(streamed.profile), `chunks of ${size}`).toEqual(plain);
      expect(judgedBeforeFill, `chunks of ${size}`).toEqual({ samples: 4096, distinct: 4096 - Math.floor(4096 / 20), merging: false });
    }
    // Stacks that repeat: judged merging, merged to the end as by the one-buffer decode.
    const repeating: Field[] = [];
    for (let i = 0; i < 6000; i++) repeating.push(sample([1 + (i % 3), 2], [1, i], strLabel('thread', 'main')));
    const again = profileOf(repeating);
    const merged = samplesOf((await decodeProfileStream(chunked(again, 100), { aggregate: 'if-repeating' })).profile);
    expect(judgedBeforeFill).toEqual({ samples: 4096, distinct: 3, merging: true });
    expect(merged).toEqual(samplesOf(decodeProfile(again, { aggregate: 'if-repeating' }).profile));
    expect(merged).toHaveLength(3);
  });

  it("'if-repeating' judged plain before pass 2 still leaves out zero samples, as the streamed decode does", async () => {
    const stackOf = (k: number) => Array.from({ length: 8 }, (_, d) => 1 + (Math.floor(k / 3 ** d) % 3));
    const samples: Field[] = [];
    for (let i = 0; i < 6000; i++) samples.push(sample(stackOf(i), i % 10 === 0 ? [0, 0] : [1, i]));
    const bytes = profileOf(samples);
    const oneBuffer = samplesOf(decodeProfile(bytes, { aggregate: 'if-repeating' }).profile);
    expect(judgedBeforeFill.merging).toBe(false);
    expect(oneBuffer).toHaveLength(5400);
    expect(samplesOf((await decodeProfileStream(chunked(bytes, 4096), { aggregate: 'if-repeating' })).profile)).toEqual(oneBuffer);
  });

  it("'if-repeating' judges before pass 2: stacks that repeat (with other values) merge", () => {
    const repeating: Field[] = [];
    for (let i = 0; i < 6000; i++) repeating.push(sample([1 + (i % 3), 2], [1, i], strLabel('thread', 'main')));
    const bytes = profileOf(repeating);
    const merged = samplesOf(decodeProfile(bytes, { aggregate: 'if-repeating' }).profile);
    expect(judgedBeforeFill).toEqual({ samples: 4096, distinct: 3, merging: true });
    expect(merged).toEqual(referenceMerge(samplesOf(decodeProfile(bytes).profile)));
    expect(merged).toHaveLength(3);
  });

  it('cuts the columns of the profile to the distinct samples', () => {
    const samples: Field[] = [];
    for (let i = 0; i < 30_000; i++) samples.push(sample([1 + (i % 3), 2], [1, i]));
    const p = decodeProfile(profileOf(samples), { aggregate: true }).profile;
    expect(p.samples.value).toHaveLength(3);
    expect(p.samples['.values'][1]!.buffer.byteLength).toBe(3 * 8);
    expect(p.samples.locations.offsets.buffer.byteLength).toBe(4 * 4);
  });

  it('streamed, holds columns for the distinct samples only: 400,000 samples of 20 frames over 10 stacks', async () => {
    // The stream is made as it is read, into one reused chunk, so that the memory outside the
    // JS heap (ArrayBuffers) is the decoder's: sampled at every chunk of both passes.
    const stacks = Array.from({ length: 10 }, (_, k) => pb([sample(Array.from({ length: 20 }, (_, d) => 1 + ((k + d) % 3)), [1, 1000 + k])]));
    const head = pb([[1, [[1, S.samples!], [2, S.count!]]], [1, [[1, S.bytes!], [2, S.bytes!]]]]);
    const tail = profileOf([]).subarray(head.length);
    const chunk = new Uint8Array(1 << 16);
    let peak = 0;
    const open = async function* (): AsyncGenerator<Uint8Array> {
      let used = 0;
      const put = async function* (bytes: Uint8Array): AsyncGenerator<Uint8Array> {
        for (let at = 0; at < bytes.length; ) {
          const n = Math.min(bytes.length - at, chunk.length - used);
          chunk.set(bytes.subarray(at, at + n), used);
          used += n;
          at += n;
          if (used === chunk.length) {
            peak = Math.max(peak, process.memoryUsage().arrayBuffers);
            yield chunk;
            used = 0;
          }
        }
      };
      yield* put(head);
      for (let i = 0; i < 400_000; i++) yield* put(stacks[i % 10]!);
      yield* put(tail);
      if (used > 0) yield chunk.subarray(0, used);
    };
    // Collections before each measurement, whether or not vitest runs with --expose-gc: garbage
    // of earlier tests freed during the decode would otherwise lower what the decode is seen to
    // take. V8 frees the backing stores of collected ArrayBuffers on a concurrent sweeper, so the
    // count is read only once it stops falling (one collection was seen to leave 15 MB behind).
    setFlagsFromString('--expose-gc');
    const collect = runInNewContext('gc') as () => void;
    const settledArrayBuffers = async (): Promise<number> => {
      let last = Number.POSITIVE_INFINITY;
      for (let round = 0; round < 20; round++) {
        collect();
        await new Promise((resolve) => setTimeout(resolve, 10));
        const now = process.memoryUsage().arrayBuffers;
        if (now >= last) return now;
        last = now;
      }
      return last;
    };
    const decodeWith = async (aggregate: boolean): Promise<{ grew: number; profile: Profile }> => {
      const before = await settledArrayBuffers();
      peak = 0;
      const { profile } = await decodeProfileStream(open, { aggregate });
      return { grew: peak - before, profile };
    };
    const plain = await decodeWith(false);
    // 400,000 × (20 location ids + 2 values + offsets) ≈ 40 MB of columns.
    expect(plain.grew).toBeGreaterThan(30 << 20);
    const plainSamples = samplesOf(plain.profile);
    plain.profile = undefined as unknown as Profile;
    const merged = await decodeWith(true);
    expect(merged.grew).toBeLessThan(4 << 20);
    expect(samplesOf(merged.profile)).toEqual(referenceMerge(plainSamples));
  });
});

function thrown(f: () => unknown): { code: string; detail: Record<string, unknown>; message: string } {
  try {
    f();
  } catch (e) {
    if (isProfkitError(e)) return { code: e.code, detail: e.detail, message: e.message };
    throw e;
  }
  throw new Error('did not throw');
}

/** A ReadInput over `bytes` (gzip), streamed in pieces of `size` inflated bytes. */
function inputOf(gz: Uint8Array, fileName: string, size = 1 << 16): Parameters<NonNullable<typeof codec.read>>[0] {
  const raw = new Uint8Array(gunzipSync(gz));
  return {
    fileName,
    gzipped: true,
    bytes: async () => raw,
    chunks: async function* () {
      for (let i = 0; i < raw.length; i += size) yield raw.slice(i, i + size);
    },
  } as unknown as Parameters<NonNullable<typeof codec.read>>[0];
}

describe.skipIf(!!goMissing)("as google/pprof's profile.Merge", () => {
  it('gives the samples of Merge([p]): order, sums, labels, zero samples and zero sums left out', () => {
    const { dumpstring } = buildGoTools();
    const tmp = mkdtempSync(join(tmpdir(), 'profkit-merge-'));
    try {
      const input = join(tmp, 'in.pb');
      const merged = join(tmp, 'merged.pb');
      writeFileSync(input, CRAFTED);
      execFileSync(dumpstring, ['merge', input, merged]);
      // Go renumbers locations as it merges: both sides name them by address; labels by Go's order (per kind and key).
      const comparable = (p: Profile) => {
        const address = new Map(Array.from(p.locations.location_id, (id, i) => [id, p.locations['.address'][i]!.toString(16)]));
        return samplesOf(p).map((s) => ({
          ...s,
          locationIds: s.locationIds.map((id) => address.get(id)),
          labels: [...s.labels].sort((a, b) => Number(a.str === undefined) - Number(b.str === undefined) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
        }));
      };
      const go = comparable(decodeProfile(new Uint8Array(readFileSync(merged))).profile);
      expect(go).toHaveLength(15);
      expect(comparable(decodeProfile(CRAFTED, { aggregate: true }).profile)).toEqual(go);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }, 120_000);

  it('a numeric unit at a second "" of the string table: Merge keeps it apart only for a key with 2+ numeric labels, profkit merges it (as docs/formats/pprof.md says)', () => {
    const { dumpstring } = buildGoTools();
    const tmp = mkdtempSync(join(tmpdir(), 'profkit-merge-'));
    try {
      const emptyAgain = STRINGS.length; // the index of the "" appended below
      const unitEmptyAgain = (key: string, num: number): Field => [3, [[1, S[key]!], [3, num], [4, emptyAgain]]];
      const bytes = Buffer.concat([
        profileOf([
          sample([1], [1, 1], numLabel('size', 4)),
          sample([1], [1, 1], unitEmptyAgain('size', 4)), // one label: Go's key prints the units as [] for both
          sample([2], [1, 1], numLabel('size', 4), numLabel('size', 5)),
          sample([2], [1, 1], unitEmptyAgain('size', 4), numLabel('size', 5)), // two labels: [] and [ ]
        ]),
        pb([[6, str('')]]),
      ]);
      const input = join(tmp, 'in.pb');
      const merged = join(tmp, 'merged.pb');
      writeFileSync(input, bytes);
      execFileSync(dumpstring, ['merge', input, merged]);
      const valuesOf = (p: Profile) => samplesOf(p).map((s) => s.values);
      expect(valuesOf(decodeProfile(new Uint8Array(readFileSync(merged))).profile)).toEqual([['2', '2'], ['1', '1'], ['1', '1']]);
      const read = decodeProfile(bytes, { aggregate: true }).profile;
      expect(valuesOf(read)).toEqual([['2', '2'], ['2', '2']]);
      expect(read['.labels'].num_unit.every((u) => u === '')).toBe(true);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }, 120_000);
});
