import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, createRegistry, isProfkitError, parseLimitArgs, type ReadLimits } from '@profkit/core/node';
import adapter, { decodeProfile, decodeProfileStream } from '../src/index.js';
import { pb, varint, type Field } from './helpers.js';

// Issue 15, item 1: every repeated field of profile.proto has a count limit, checked in the
// indexing pass as the count grows (a gzip of millions of 2-byte empty entries used to take
// gigabytes and abort V8). The buffer and the streamed decoder give the same error.

type Table = 'string_table' | 'mapping' | 'location' | 'line' | 'function' | 'label' | 'comment';

/**
 * A valid profile with `n` entries of `big` (the others have one or a few) whose fields of that
 * table come last in the file, so that the entry that crosses a limit is one of them. Returns
 * the bytes and the number of entries `maxTableEntries` counts.
 */
function profileWith(big: Table | 'sample_type' | 'sample', n: number, packedComments = false): { bytes: Uint8Array; entries: number } {
  const count = (t: Table | 'sample_type' | 'sample', usual: number) => (big === t ? n : usual);
  const nTypes = count('sample_type', 1);
  const strings = ['', 'samples', 'count', 'main', 'k', 'v'];
  for (let i = strings.length; i < count('string_table', 0); i++) strings.push(`s${i}`);
  const labels: Field[] = Array.from({ length: count('label', 1) }, () => [3, [[1, 4], [2, 5]]] as Field);
  const sample: Field[] = [[1, 1], ...Array.from({ length: nTypes }, () => [2, 1] as Field), ...labels];
  const nLines = count('line', 1);
  const lines: Field[] = Array.from({ length: nLines }, () => [4, [[1, 1], [2, 7]]] as Field);
  const groups: Record<string, Field[]> = {
    sample_type: Array.from({ length: nTypes }, () => [1, [[1, 1], [2, 2]]] as Field),
    sample: Array.from({ length: count('sample', 1) }, () => [2, sample] as Field),
    mapping: Array.from({ length: count('mapping', 1) }, (_, i) => [3, [[1, i + 1], [2, 0x1000 * (i + 1)]]] as Field),
    location: Array.from({ length: count('location', 1) }, (_, i) => [4, i === 0 ? [[1, 1], [2, 1], ...lines] : [[1, i + 1], [3, 0x1000 + i]]] as Field), // address only, no line
    function: Array.from({ length: count('function', 1) }, (_, i) => [5, [[1, i + 1], [2, 3]]] as Field),
    string_table: strings.map((s) => [6, new TextEncoder().encode(s)] as Field),
    comment: packedComments ? [[13, { packed: Array(count('comment', 1)).fill(3) }]] : Array.from({ length: count('comment', 1) }, () => [13, 3] as Field),
  };
  const last = big === 'line' ? 'location' : big === 'label' ? 'sample' : big;
  const fields = [...Object.entries(groups).filter(([k]) => k !== last), [last, groups[last]!] as const].flatMap(([, f]) => f);
  const locations = groups.location!.length;
  const entries = strings.length + groups.mapping!.length + locations + nLines + groups.function!.length + labels.length * groups.sample!.length + count('comment', 1);
  return { bytes: pb(fields), entries };
}

/** The outcome of a decode: the profile's counts, or the error (code, message and detail). */
function outcome(run: () => { profile: { samples: { value: BigInt64Array } } }): unknown {
  try {
    return { samples: run().profile.samples.value.length };
  } catch (e) {
    if (!isProfkitError(e)) throw e;
    return { code: e.code, message: e.message, detail: e.detail };
  }
}

async function streamedOutcome(bytes: Uint8Array, limits: ReadLimits, piece: number): Promise<unknown> {
  async function* chunks() {
    for (let i = 0; i < bytes.length; i += piece) yield bytes.subarray(i, i + piece);
  }
  const r = await decodeProfileStream(chunks, { file: 'x.pb', limits }).catch((e: unknown) => e);
  return outcome(() => {
    if (r instanceof Error) throw r;
    return r as { profile: { samples: { value: BigInt64Array } } };
  });
}

/** Decodes whole and streamed (in 1-, 7- and 4096-byte pieces); all must agree. */
async function decodeBoth(bytes: Uint8Array, limits: ReadLimits): Promise<Record<string, unknown>> {
  const whole = outcome(() => decodeProfile(bytes, { file: 'x.pb', limits }));
  for (const piece of [1, 7, 4096]) expect(await streamedOutcome(bytes, limits, piece)).toEqual(whole);
  return whole as Record<string, unknown>;
}

function expectLimit(result: Record<string, unknown>, option: string, table?: Table): void {
  expect(result.code).toBe(ErrorCodes.LIMIT);
  const detail = result.detail as Record<string, unknown>;
  expect(detail.option).toBe(option);
  expect(result.message).toContain(option);
  expect(detail.file).toBe('x.pb');
  expect(typeof detail.offset).toBe('number');
  if (table) expect(detail.table).toBe(table);
}

describe('pprof table limits (maxTableEntries: the entries of all tables together)', () => {
  const tables: Table[] = ['string_table', 'mapping', 'location', 'line', 'function', 'label', 'comment'];
  for (const table of tables) {
    it(`${table}: one entry over the limit is PROFKIT_E_LIMIT (buffer and streamed); at the limit it reads`, async () => {
      const { bytes, entries } = profileWith(table, 40);
      expectLimit(await decodeBoth(bytes, { maxTableEntries: entries - 1 }), 'maxTableEntries', table);
      expect(await decodeBoth(bytes, { maxTableEntries: entries })).toEqual({ samples: table === 'sample' ? 40 : 1 });
    });
  }

  it('packed comments count one entry per comment', async () => {
    const { bytes, entries } = profileWith('comment', 40, true);
    expectLimit(await decodeBoth(bytes, { maxTableEntries: entries - 1 }), 'maxTableEntries', 'comment');
    expect(await decodeBoth(bytes, { maxTableEntries: entries })).toEqual({ samples: 1 });
  });

  it('the error names the offset of the entry that crossed the limit', async () => {
    // string_table entries are 2 bytes each here: the 4th ('' then 3 empty ones) is at 6.
    const bytes = Uint8Array.from([0x32, 0, 0x32, 0, 0x32, 0, 0x32, 0, 0x32, 0]);
    const r = await decodeBoth(bytes, { maxTableEntries: 3 });
    expectLimit(r, 'maxTableEntries', 'string_table');
    expect((r.detail as Record<string, unknown>).offset).toBe(6);
  });
});

describe('pprof per-message and per-profile counts', () => {
  const cases: [option: keyof ReadLimits, what: string, big: 'sample_type' | 'label' | 'line' | 'sample', samples: number][] = [
    ['maxSampleTypes', 'sample types', 'sample_type', 1],
    ['maxLabelsPerSample', 'labels of one sample', 'label', 1],
    ['maxFramesPerStack', 'lines (inlined frames) of one location', 'line', 1],
    ['maxSamples', 'samples', 'sample', 30],
    ['maxTotalFrames', 'location ids of all samples (one each)', 'sample', 30],
    // 8 bytes each in the value columns for one byte of input (a gzip of 85 KB was 427 MB RSS).
    ['maxSampleValues', 'values of all samples (30 samples × 1 type)', 'sample', 30],
    ['maxSampleValues', 'values of all samples (1 sample × 30 types)', 'sample_type', 1],
  ];
  for (const [option, what, big, samples] of cases) {
    it(`${option}: ${what} over the limit (buffer and streamed); at the limit it reads`, async () => {
      const { bytes } = profileWith(big, 30);
      expectLimit(await decodeBoth(bytes, { [option]: 29 }), option);
      expect(await decodeBoth(bytes, { [option]: 30 })).toEqual({ samples });
    });
  }
});

describe('maxMessageBytes: one top-level field (the streamed decoder holds one whole)', () => {
  it('a sample, location or unknown field over the limit is PROFKIT_E_LIMIT (buffer and streamed); at the limit it reads', async () => {
    const { bytes } = profileWith('line', 30); // the location with 30 lines is the last field
    const locationBytes = pb([[1, 1], [2, 1], ...Array.from({ length: 30 }, () => [4, [[1, 1], [2, 7]]] as Field)]).length;
    const r = await decodeBoth(bytes, { maxMessageBytes: locationBytes - 1 });
    expectLimit(r, 'maxMessageBytes');
    expect((r.detail as Record<string, unknown>).offset).toBe(bytes.length - locationBytes - 1 - varint(locationBytes).length);
    expect(await decodeBoth(bytes, { maxMessageBytes: locationBytes })).toEqual({ samples: 1 });
    const unknown = Uint8Array.from([...bytes, ...pb([[100, new Uint8Array(locationBytes + 1)]])]);
    expectLimit(await decodeBoth(unknown, { maxMessageBytes: locationBytes }), 'maxMessageBytes');
  });

  it('is decided from the length alone: a truncated input claiming 2^40 bytes is the limit, not "too much data"', async () => {
    const claim = [0x80, 0x80, 0x80, 0x80, 0x80, 0x20]; // varint 2^40
    for (const [tagByte, option] of [[0x12, 'maxMessageBytes'], [0x22, 'maxMessageBytes'], [0x32, 'maxStringLength'], [0xa2, 'maxMessageBytes']] as const) {
      const bytes = Uint8Array.from([0x32, 0, ...(tagByte === 0xa2 ? [0xa2, 0x06] : [tagByte]), ...claim, 1, 2, 3]);
      const r = await decodeBoth(bytes, {});
      expectLimit(r, option);
      expect((r.detail as Record<string, unknown>).offset).toBe(2);
    }
  });
});

describe('gzip of many empty entries (the attack of issue 15) through the registry', () => {
  const registry = createRegistry([adapter]);
  // tag, 0-length: string_table, location, function, mapping; comment is a varint 0
  const kinds: [string, number, Table][] = [
    ['string_table', 0x32, 'string_table'],
    ['location', 0x22, 'location'],
    ['function', 0x2a, 'function'],
    ['mapping', 0x1a, 'mapping'],
    ['comment', 0x68, 'comment'],
  ];
  for (const [name, tagByte, table] of kinds) {
    it(`${name}: 200k empty entries stop at maxTableEntries, streamed and whole`, async () => {
      const raw = new Uint8Array(2 + 2 * 200_000);
      raw[0] = 0x32; // string_table[0] = ''
      for (let i = 2; i < raw.length; i += 2) raw[i] = tagByte;
      const gz = gzipSync(raw);
      for (const stream of [true, false]) {
        const e = await registry.read(gz, { format: 'pprof', fileName: 'x.pb.gz', limits: { maxTableEntries: 1000 }, options: { stream } }).catch((x: unknown) => x);
        expect(isProfkitError(e) && e.code).toBe(ErrorCodes.LIMIT);
        if (!isProfkitError(e)) return;
        expect(e.detail.option).toBe('maxTableEntries');
        expect(e.detail.table).toBe(table);
        expect(e.detail.offset).toBe(2 * 1000); // the 1001st entry, counting string_table[0]
      }
    });
  }
});

describe('--limit accepts the new limits', () => {
  it('parseLimitArgs knows maxTableEntries, maxSampleTypes, maxLabelsPerSample and maxMessageBytes', () => {
    expect(parseLimitArgs(['maxTableEntries=2e7', 'maxSampleTypes=100', 'maxLabelsPerSample=1k', 'maxMessageBytes=1GiB'])).toEqual({
      maxTableEntries: 2e7,
      maxSampleTypes: 100,
      maxLabelsPerSample: 1000,
      maxMessageBytes: 2 ** 30,
    });
  });
});
