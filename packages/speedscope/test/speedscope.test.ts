/**
 * speedscope: the files of speedscope's own repository (written by its exporter), round trips,
 * evented nesting errors, several profiles, any profile written as sampled profiles, limits.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProfileBuilder, ProfileIndex, resolveStack, validate, type Profile, type ProfkitError } from '@profkit/core';
import { createRegistry } from '@profkit/core/node';
import { rejectionOf, thrownBy } from '@profkit/test-utils';
import speedscopeAdapter, { readSpeedscopeBytes, sniffSpeedscope, writeSpeedscope, type SpeedscopeFile } from '../src/index.js';

const fixtures = join(import.meta.dirname, 'fixtures');
const fixture = (name: string) => readFileSync(join(fixtures, name));
const enc = (v: unknown) => new TextEncoder().encode(typeof v === 'string' ? v : JSON.stringify(v));
const decode = (b: Uint8Array) => JSON.parse(new TextDecoder().decode(b)) as SpeedscopeFile;

/** "root;…;leaf" → summed values of sample type t. */
function stacks(p: Profile, t = 0): Map<string, bigint> {
  const index = new ProfileIndex(p);
  const out = new Map<string, bigint>();
  for (let i = 0; i < p.samples.value.length; i++) {
    const v = p.samples['.values'][t]![i]!;
    if (v === 0n) continue;
    const key = resolveStack(p, i, index)
      .map((f) => f.name)
      .reverse()
      .join(';');
    out.set(key, (out.get(key) ?? 0n) + v);
  }
  return out;
}

function expectValid(p: Profile): void {
  const v = validate(p);
  if (!v.ok) throw new Error('invalid profile: ' + JSON.stringify(v.problems.slice(0, 3)));
}

describe("speedscope's own files", () => {
  it('the evented and the sampled file of the same profile read to the same stacks', () => {
    const evented = readSpeedscopeBytes(fixture('0.0.1-simple.speedscope.json')).profile;
    const sampled = readSpeedscopeBytes(fixture('0.1.2-simple-sampled.speedscope.json')).profile;
    expectValid(evented);
    expectValid(sampled);
    const expected = new Map([
      ['a;b;c', 5n],
      ['a;b;d', 4n],
      ['a;b', 5n],
    ]);
    expect(stacks(evented)).toEqual(expected);
    expect(stacks(sampled)).toEqual(expected);
    expect(evented.sample_types).toEqual({ type: ['simple.txt'], unit: ['count'] });
    expect(sampled.sample_types).toEqual({ type: ['simple.speedscope.json'], unit: ['seconds'] });
    // Evented stretches keep their start.
    expect(Array.from(evented['.extensions'].speedscope!.samples!.at as Float64Array)).toEqual([0, 2, 6, 9]);
  });

  it('two profiles: two sample types; activeProfileIndex is the default; the profile option picks one', () => {
    const bytes = fixture('0.6.0-two-sampled.speedscope.json');
    const both = readSpeedscopeBytes(bytes).profile;
    expect(both.sample_types.type).toEqual(['one', 'two']);
    expect(both['.profile'].default_sample_type).toBe('two');
    expect(both['.extensions'].speedscope!.facts).toMatchObject({ name: 'Two Samples', exporter: 'speedscope@0.6.0', activeProfileIndex: 1 });
    const two = readSpeedscopeBytes(bytes, { profile: 'two' }).profile;
    expect(two.sample_types.type).toEqual(['two']);
    expect(stacks(two)).toEqual(stacks(both, 1));
    expect(readSpeedscopeBytes(bytes, { profile: 0 }).profile.sample_types.type).toEqual(['one']);
    expect(thrownBy<ProfkitError>(() => readSpeedscopeBytes(bytes, { profile: 'three' })).code).toBe('PROFKIT_E_USAGE');
    const notThere = thrownBy<ProfkitError>(() => readSpeedscopeBytes(bytes, { profile: 'three' }));
    expect(notThere.message).toBe('no speedscope profile "three" (the file has 0: "one", 1: "two")');
    // Thousands of long names: a few named, each cut short.
    const many = enc({ shared: { frames: [] }, profiles: Array.from({ length: 5000 }, (_, i) => ({ type: 'sampled', name: `${i}`.padEnd(1000, 'x'), samples: [], weights: [] })) });
    const e = thrownBy<ProfkitError>(() => readSpeedscopeBytes(many, { profile: 'none of these' }));
    expect(e.message.length).toBeLessThan(1000);
    expect(e.message).toMatch(/^no speedscope profile "none of these" \(the file has 0: "0x{35}\.\.\., .* and 4990 more\)$/);
  });

  it('the files speedscope refuses are PROFKIT_E_PARSE errors naming the event', () => {
    const open = thrownBy<ProfkitError>(() => readSpeedscopeBytes(fixture('invalid-incomplete-trace.json'), { fileName: 'x.json' }));
    expect([open.code, open.detail.path, open.detail.file]).toEqual(['PROFKIT_E_PARSE', 'profiles[0].events', 'x.json']);
    expect(open.message).toContain('still open');
    const nest = thrownBy<ProfkitError>(() => readSpeedscopeBytes(fixture('invalid-out-of-order-events.json')));
    expect([nest.code, nest.detail.path]).toEqual(['PROFKIT_E_PARSE', 'profiles[0].events[6]']);
    expect(nest.message).toBe('profiles[0].events[6]: closes frame 1 but the innermost open frame is 0');
  });
});

describe('round trips', () => {
  for (const name of ['0.0.1-simple.speedscope.json', '0.1.2-simple-sampled.speedscope.json', '0.6.0-two-sampled.speedscope.json']) {
    it(`${name}: written back as it was`, () => {
      const original = decode(fixture(name));
      const { data, warnings } = writeSpeedscope(readSpeedscopeBytes(fixture(name)).profile);
      const back = decode(data);
      expect(warnings).toEqual([]);
      expect(back.shared).toEqual(original.shared);
      expect(back.profiles).toEqual(original.profiles);
      for (const k of ['name', 'exporter', 'activeProfileIndex'] as const) if (original[k] !== undefined) expect(back[k]).toEqual(original[k]);
      expect(back.$schema).toBe('https://www.speedscope.app/file-format-schema.json');
    });
  }

  it('fractional milliseconds are read as whole nanoseconds and written back exactly; gaps and recursion survive', () => {
    const file: SpeedscopeFile = {
      $schema: 'https://www.speedscope.app/file-format-schema.json',
      shared: { frames: [{ name: 'main', file: 'a.js', line: 3, col: 7 }, { name: 'f' }] },
      profiles: [
        {
          type: 'evented',
          name: 'cpu',
          unit: 'milliseconds',
          startValue: 0.1,
          endValue: 9.75,
          events: [
            { type: 'O', frame: 0, at: 0.1 },
            { type: 'O', frame: 1, at: 0.3 },
            { type: 'O', frame: 1, at: 0.35 },
            { type: 'C', frame: 1, at: 1.25 },
            { type: 'C', frame: 1, at: 2 },
            { type: 'C', frame: 0, at: 2.5 },
            { type: 'O', frame: 1, at: 4 },
            { type: 'C', frame: 1, at: 9.75 },
          ],
        },
      ],
    };
    const r = readSpeedscopeBytes(enc(file));
    expect(r.warnings).toEqual([]);
    expect(r.profile.sample_types.unit).toEqual(['nanoseconds']);
    expect(stacks(r.profile)).toEqual(
      new Map([
        ['main', 200_000n + 500_000n],
        ['main;f', 50_000n + 750_000n],
        ['main;f;f', 900_000n],
        ['f', 5_750_000n],
      ]),
    );
    expect(decode(writeSpeedscope(r.profile).data).profiles).toEqual(file.profiles);
  });

  it('any profile: one sampled profile per sample type, warnings for labels and mappings; read back to the same stacks', async () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }, { type: 'cpu', unit: 'nanoseconds' }] });
    const m = b.internMapping({ filename: '/bin/x' });
    const main = b.internLocation({ functionId: b.internFunction({ name: 'main', filename: 'x.c' }), line: 10, mappingId: m, address: 0x1000 });
    const g = b.internLocation({ functionId: b.internFunction({ name: 'g', filename: 'x.c' }), line: 20, inlinedInto: [{ functionId: b.internFunction({ name: 'h' }), line: 5 }] });
    b.addSample([g, main], [3, 30], [{ key: 'thread', str: 't1' }]);
    b.addSample([main], [1, 0]);
    const p = b.build();
    const { data, warnings } = writeSpeedscope(p);
    expect(warnings.map((w) => w.code).sort()).toEqual(['PROFKIT_W_SPEEDSCOPE_LABELS', 'PROFKIT_W_SPEEDSCOPE_MAPPINGS']);
    const file = decode(data);
    expect(file.profiles.map((x) => [x.name, x.unit, x.type])).toEqual([
      ['samples', 'none', 'sampled'],
      ['cpu', 'nanoseconds', 'sampled'],
    ]);
    expect(file.activeProfileIndex).toBe(1);
    const back = readSpeedscopeBytes(data).profile;
    expect(stacks(back, 0)).toEqual(stacks(p, 0));
    expect(stacks(back, 1)).toEqual(stacks(p, 1));
    expect(stacks(back, 1)).toEqual(new Map([['main;h;g', 30n]]));
    const only = decode(writeSpeedscope(p, { sampleType: 'cpu' }).data);
    expect(only.profiles.map((x) => x.name)).toEqual(['cpu']);
  });
  it('values above 2^53 are written with a precision warning (speedscope weights are doubles), not silently rounded', () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'alloc', unit: 'bytes' }] });
    const f = b.internLocation({ functionId: b.internFunction({ name: 'f' }) });
    b.addSample([f], [2n ** 53n + 1n]);
    b.addSample([f], [2n ** 53n]);
    const { data, warnings } = writeSpeedscope(b.build());
    expect(warnings.map((w) => [w.code, w.message])).toEqual([['PROFKIT_W_SPEEDSCOPE_PRECISION', 'sample type alloc: 1 value(s) above 2^53 written rounded to the nearest double (speedscope weights are JSON doubles)']]);
    expect(decode(data).profiles[0]!.type).toBe('sampled');
  });
});

describe('errors and limits', () => {
  const doc = (profiles: unknown[], frames: unknown[] = [{ name: 'a' }, { name: 'b' }]) => enc({ $schema: 'https://www.speedscope.app/file-format-schema.json', shared: { frames }, profiles });
  const sampled = (samples: number[][], weights: number[]) => ({ type: 'sampled', name: 's', unit: 'none', startValue: 0, endValue: 1, samples, weights });
  it('schema errors name the JSON path', () => {
    const at = (bytes: Uint8Array) => {
      const e = thrownBy<ProfkitError>(() => readSpeedscopeBytes(bytes));
      return [e.code, e.detail.path];
    };
    expect(at(doc([sampled([[0, 5]], [1])]))).toEqual(['PROFKIT_E_PARSE', 'profiles[0].samples[0][1]']);
    expect(at(doc([sampled([[0]], [1, 2])]))).toEqual(['PROFKIT_E_PARSE', 'profiles[0].weights']);
    expect(at(doc([sampled([[0]], [-1])]))).toEqual(['PROFKIT_E_PARSE', 'profiles[0].weights[0]']);
    expect(at(doc([{ type: 'evented', name: 'e', unit: 'none', startValue: 0, endValue: 1, events: [{ type: 'O', frame: 0, at: 5 }, { type: 'C', frame: 0, at: 4 }] }]))).toEqual(['PROFKIT_E_PARSE', 'profiles[0].events[1].at']);
    expect(at(doc([{ type: 'flame' }]))).toEqual(['PROFKIT_E_PARSE', 'profiles[0].type']);
    expect(at(doc([]))).toEqual(['PROFKIT_E_PARSE', 'profiles']);
    expect(thrownBy<ProfkitError>(() => readSpeedscopeBytes(enc('{"shared":'))).code).toBe('PROFKIT_E_TRUNCATED');
  });
  it('maxSamples, maxFramesPerStack, maxTotalFrames', () => {
    const option = (bytes: Uint8Array, limits: Record<string, number>) => {
      const e = thrownBy<ProfkitError>(() => readSpeedscopeBytes(bytes, { limits }));
      return [e.code, e.detail.option];
    };
    const three = doc([sampled([[0, 1], [0, 1], [0, 1]], [1, 1, 1])]);
    expect(option(three, { maxSamples: 2 })).toEqual(['PROFKIT_E_LIMIT', 'maxSamples']);
    expect(option(three, { maxFramesPerStack: 1 })).toEqual(['PROFKIT_E_LIMIT', 'maxFramesPerStack']);
    expect(option(three, { maxTotalFrames: 5 })).toEqual(['PROFKIT_E_LIMIT', 'maxTotalFrames']);
    const deep = doc([{ type: 'evented', name: 'e', unit: 'none', startValue: 0, endValue: 1, events: [{ type: 'O', frame: 0, at: 0 }, { type: 'O', frame: 0, at: 0 }, { type: 'C', frame: 0, at: 1 }, { type: 'C', frame: 0, at: 1 }] }]);
    expect(option(deep, { maxFramesPerStack: 1 })).toEqual(['PROFKIT_E_LIMIT', 'maxFramesPerStack']);
    expect(readSpeedscopeBytes(three, { limits: { maxSamples: 3, maxFramesPerStack: 2, maxTotalFrames: 6 } }).profile.samples.value.length).toBe(3);
  });
  it('maxInputBytes (for callers of the byte reader) and maxTableEntries on shared.frames, before the frames are read', () => {
    const three = doc([sampled([[0, 1], [0, 1], [0, 1]], [1, 1, 1])]);
    let e = thrownBy<ProfkitError>(() => readSpeedscopeBytes(three, { limits: { maxInputBytes: three.length - 1 } }));
    expect([e.code, e.detail.option]).toEqual(['PROFKIT_E_LIMIT', 'maxInputBytes']);
    e = thrownBy<ProfkitError>(() => readSpeedscopeBytes(three, { limits: { maxTableEntries: 1 } }));
    expect([e.code, e.detail.option, e.detail.path]).toEqual(['PROFKIT_E_LIMIT', 'maxTableEntries', 'shared.frames']);
    expect(readSpeedscopeBytes(three, { limits: { maxInputBytes: three.length, maxTableEntries: 2 } }).profile.samples.value).toHaveLength(3);
  });
  it('maxSampleTypes bounds the profiles (each is a value column of every sample, so N profiles of one sample cost N² values)', () => {
    const many = doc(Array.from({ length: 3 }, () => sampled([[0]], [1])));
    const e = thrownBy<ProfkitError>(() => readSpeedscopeBytes(many, { limits: { maxSampleTypes: 2 } }));
    expect([e.code, e.detail.option, e.detail.path]).toEqual(['PROFKIT_E_LIMIT', 'maxSampleTypes', 'profiles']);
    expect(readSpeedscopeBytes(many, { limits: { maxSampleTypes: 3 } }).profile.sample_types.type).toHaveLength(3);
    expect(readSpeedscopeBytes(many, { limits: { maxSampleTypes: 1 }, profile: 2 }).profile.sample_types.type).toHaveLength(1);
  });
  it('maxSampleValues bounds samples × profiles (every sample stores a value for every profile) as samples grow', () => {
    // 3 profiles of 2 samples: 6 samples × 3 value columns = 18 values, 16 of them zeros.
    const many = doc(Array.from({ length: 3 }, () => sampled([[0], [0]], [1, 1])));
    const e = thrownBy<ProfkitError>(() => readSpeedscopeBytes(many, { limits: { maxSampleValues: 17 } }));
    expect([e.code, e.detail.option, e.detail.path, e.detail.limit]).toEqual(['PROFKIT_E_LIMIT', 'maxSampleValues', 'profiles[2]', 17]);
    expect(e.message).toContain('sample 6 × 3 profiles');
    expect(readSpeedscopeBytes(many, { limits: { maxSampleValues: 18 } }).profile.samples['.values']).toHaveLength(3);
    // One profile chosen is one column: the same samples fit a limit of their count.
    expect(readSpeedscopeBytes(many, { limits: { maxSampleValues: 2 }, profile: 1 }).profile.samples.value).toHaveLength(2);
  });
});

describe('detection', () => {
  it('by content, through a registry; write by format id', async () => {
    const registry = createRegistry([speedscopeAdapter]);
    for (const name of ['0.0.1-simple.speedscope.json', '0.1.2-simple-sampled.speedscope.json', '0.6.0-two-sampled.speedscope.json']) {
      expect((await registry.read(fixture(name), { fileName: 'input' })).format).toBe('speedscope');
    }
    expect(sniffSpeedscope(enc({ shared: { frames: [] }, profiles: [] }))).toMatchObject({ score: 0.8 });
    expect(sniffSpeedscope(enc({ nodes: [] }))).toBe(0);
    const e = await rejectionOf<ProfkitError>(registry.read(fixture('invalid-incomplete-trace.json'), { fileName: 'bad.json' }));
    expect(e.code).toBe('PROFKIT_E_PARSE');
  });
});
