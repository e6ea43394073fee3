import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  ErrorCodes,
  ProfileBuilder,
  ProfkitError,
  createRegistry,
  headMatchesMagic,
  resolveStack,
  sampleTypes,
  validate,
  type Profile,
  type ReadInput,
  type StaticSniffMagic,
} from '@profkit/core/node';
import { MAX_JSON_BYTES, readSpeedscope, speedscopeToProfile, writeSpeedscope } from '../src/codec.js';
import speedscopeAdapter, { sniffSpeedscope } from '../src/index.js';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

function inputOf(text: string, fileName = 'test.speedscope.json'): ReadInput {
  const bytes = new TextEncoder().encode(text);
  return {
    fileName,
    gzipped: false,
    bytes: async () => bytes,
    chunks: async function* () {
      yield bytes;
    },
  };
}

async function collect(data: Uint8Array | AsyncIterable<Uint8Array>): Promise<string> {
  if (data instanceof Uint8Array) return new TextDecoder().decode(data);
  let s = '';
  const d = new TextDecoder();
  for await (const c of data) s += d.decode(c, { stream: true });
  return s + d.decode();
}

/** The meaning of a profile: stack (innermost first, name@file:line:col) -> summed values per type. */
function meaning(p: Profile): Record<string, string[]> {
  const out: Record<string, bigint[]> = {};
  for (let i = 0; i < p.samples.value.length; i++) {
    const key = resolveStack(p, i)
      .map((f) => `${f.name}@${f.filename}:${f.line}:${f.column}`)
      .join(' <- ');
    const acc = (out[key] ??= p.samples['.values'].map(() => 0n));
    p.samples['.values'].forEach((c, t) => (acc[t]! += c[i]!));
  }
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, v.map(String)]));
}

async function parseError(text: string): Promise<ProfkitError> {
  try {
    await readSpeedscope(inputOf(text));
  } catch (e) {
    return e as ProfkitError;
  }
  throw new Error('expected an error');
}

const minimal = (profiles: unknown[], frames: unknown[] = [{ name: 'f' }]) =>
  JSON.stringify({ $schema: 'https://www.speedscope.app/file-format-schema.json', shared: { frames }, profiles });

describe('sniff', () => {
  const enc = (s: string) => new TextEncoder().encode(s);
  it('scores the $schema URL 1, the structure 0.8, the file name 0.3, anything else 0', () => {
    const score = (s: string, fileName?: string) => {
      const r = sniffSpeedscope(enc(s), { fileName });
      return typeof r === 'number' ? r : r.score;
    };
    expect(score(readFileSync(join(fixtures, 'sampled.speedscope.json'), 'utf8'))).toBe(1);
    expect(score('\ufeff  {"shared": {"frames": []}, "profiles": []}')).toBe(0.8);
    expect(score('{"other": 1}', 'x.speedscope.json')).toBe(0.3);
    expect(score('{"other": 1}', 'x.json')).toBe(0);
    expect(score('sample.interval=20000\n', 'x.speedscope.json')).toBe(0);
    expect(score('')).toBe(0);
  });

  it("scores 0 for every head its package.json magic rules out (the CLI then never imports it)", () => {
    const pkg = JSON.parse(readFileSync(join(fixtures, '../../package.json'), 'utf8')) as { profkit: { adapters: { magic: StaticSniffMagic }[] } };
    const magic = pkg.profkit.adapters[0]!.magic;
    const schema = readFileSync(join(fixtures, 'sampled.speedscope.json'), 'utf8');
    for (const text of [schema, '\ufeff \r\n\t' + schema, '{"shared": {"frames": []}, "profiles": []}']) {
      expect(headMatchesMagic(enc(text), magic)).toBe(true);
      expect(sniffSpeedscope(enc(text), { fileName: 'x.speedscope.json' })).not.toBe(0);
    }
    // Not JSON objects once JSON's own white space is skipped: other white space, a BOM inside, text before.
    for (const before of ['\f', '\u00a0', '\u2028', '\v', ' \ufeff', 'x', '[', '\u0000']) {
      expect(headMatchesMagic(enc(before + schema), magic)).toBe(false);
      expect(sniffSpeedscope(enc(before + schema), { fileName: 'x.speedscope.json' })).toBe(0);
    }
  });
});

describe('read', () => {
  it('reads sampled profiles as sample types, stacks innermost first, frames with file/line/col', async () => {
    const r = await readSpeedscope(inputOf(readFileSync(join(fixtures, 'sampled.speedscope.json'), 'utf8')));
    const p = r.profile;
    expect(validate(p).ok).toBe(true);
    expect(sampleTypes(p)).toEqual([
      { type: 'cpu', unit: 'nanoseconds' },
      { type: 'samples', unit: 'count' },
    ]);
    // Both profiles list the same stacks: one set of samples with two values each.
    expect(p.samples.value.length).toBe(3);
    expect(meaning(p)).toEqual({
      'tokenize@lex.py:7:0 <- parse@parse.py:20:4 <- main@main.py:1:0': ['300', '3'],
      'parse@parse.py:20:4 <- main@main.py:1:0': ['200', '2'],
      '<native>@:0:0 <- main@main.py:1:0': ['100', '1'],
    });
    expect(p['.profile'].default_sample_type).toBe('samples');
    expect(p['.extensions']['speedscope-example']?.facts).toMatchObject({ name: 'two types', exporter: 'hand-written test fixture' });
  });

  it('replays evented profiles: time between events goes to the open stack', async () => {
    const r = await readSpeedscope(inputOf(readFileSync(join(fixtures, 'evented.speedscope.json'), 'utf8')));
    expect(sampleTypes(r.profile)).toEqual([{ type: 'wall', unit: 'milliseconds' }]);
    // a: 0-2, 9-10, 11-14; a;b: 2-3, 5-9; a;b;c: 3-5; a;c: 10-11 (ms)
    expect(meaning(r.profile)).toEqual({
      'a@:0:0': ['6'],
      'b@:0:0 <- a@:0:0': ['5'],
      'c@:0:0 <- b@:0:0 <- a@:0:0': ['2'],
      'c@:0:0 <- a@:0:0': ['1'],
    });
    expect(r.profile['.profile'].duration_nanos).toBe(14_000_000n);
  });

  it('appends profiles with different stacks, 0 in the other types, and suffixes repeated names', () => {
    const doc = JSON.parse(
      minimal(
        [
          { type: 'sampled', name: 't', unit: 'none', startValue: 0, endValue: 1, samples: [[0]], weights: [1] },
          { type: 'sampled', name: 't', unit: 'bytes', startValue: 0, endValue: 5, samples: [[0, 1]], weights: [5] },
        ],
        [{ name: 'f' }, { name: 'g' }],
      ),
    );
    const p = speedscopeToProfile(doc, 'x').profile;
    expect(sampleTypes(p).map((t) => t.type)).toEqual(['t', 't (2)']);
    expect(meaning(p)).toEqual({ 'f@:0:0': ['1', '0'], 'g@:0:0 <- f@:0:0': ['0', '5'] });
  });

  it('turns fractional times into nanoseconds and says so; rounds other fractions with a warning', () => {
    const r = speedscopeToProfile(JSON.parse(minimal([{ type: 'sampled', name: 'ms', unit: 'milliseconds', startValue: 0, endValue: 2, samples: [[0], [0]], weights: [1.5, 0.25] }])), 'x');
    expect(sampleTypes(r.profile)).toEqual([{ type: 'ms', unit: 'nanoseconds' }]);
    expect(Array.from(r.profile.samples.value)).toEqual([1_500_000n, 250_000n]);
    expect(r.warnings.map((w) => w.code)).toEqual(['PROFKIT_W_SPEEDSCOPE_UNIT_CONVERTED']);
    const r2 = speedscopeToProfile(JSON.parse(minimal([{ type: 'sampled', name: 'n', unit: 'none', startValue: 0, endValue: 2, samples: [[0]], weights: [1.5] }])), 'x');
    expect(Array.from(r2.profile.samples.value)).toEqual([2n]);
    expect(r2.warnings.map((w) => w.code)).toEqual(['PROFKIT_W_SPEEDSCOPE_ROUNDED']);
  });

  it('rejects malformed files with the JSON path or line and the rule', async () => {
    const bad = await parseError(minimal([{ type: 'sampled', name: 'x', unit: 'none', startValue: 0, endValue: 1, samples: [[0, 7]], weights: [1] }]));
    expect(bad.code).toBe(ErrorCodes.PARSE);
    expect(bad.message).toBe('profiles[0].samples[0][1]: frame index 7 is not an index into shared.frames (which has 1 frames)');
    expect(bad.detail.file).toBe('test.speedscope.json');
    const unbalanced = await parseError(
      minimal(
        [{ type: 'evented', name: 'e', unit: 'none', startValue: 0, endValue: 2, events: [{ type: 'O', frame: 0, at: 0 }, { type: 'C', frame: 1, at: 1 }] }],
        [{ name: 'f' }, { name: 'g' }],
      ),
    );
    expect(unbalanced.message).toBe('profiles[0].events[1]: closes frame 1 but the innermost open frame is 0');
    const backwards = await parseError(
      minimal([{ type: 'evented', name: 'e', unit: 'none', startValue: 0, endValue: 2, events: [{ type: 'O', frame: 0, at: 5 }, { type: 'C', frame: 0, at: 1 }] }]),
    );
    expect(backwards.message).toContain('events must be in time order');
    const lengths = await parseError(minimal([{ type: 'sampled', name: 'x', unit: 'none', startValue: 0, endValue: 1, samples: [[0]], weights: [] }]));
    expect(lengths.message).toBe('profiles[0].weights: has 0 entries but samples has 1');
    const unit = await parseError(minimal([{ type: 'sampled', name: 'x', unit: 'furlongs', samples: [], weights: [] }]));
    expect(unit.message).toContain('profiles[0].unit: must be one of none, nanoseconds');
    const json = await parseError('{\n  "shared": {\n    "frames": [,]\n  }\n}');
    expect(json.code).toBe(ErrorCodes.PARSE);
    expect(json.detail.line).toBe(3);
    expect((await parseError('{"shared": {"frames": [')).code).toBe(ErrorCodes.TRUNCATED);
    expect((await parseError('{"shared": {"frames": []}, "profiles": []}')).message).toBe('profiles: the file has no profiles');
    const huge = Object.defineProperty(new Uint8Array(1), 'length', { value: MAX_JSON_BYTES + 1 });
    await expect(readSpeedscope({ ...inputOf(''), bytes: async () => huge })).rejects.toMatchObject({ code: ErrorCodes.LIMIT });
    const notUtf8 = new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]);
    await expect(readSpeedscope({ ...inputOf(''), bytes: async () => notUtf8 })).rejects.toMatchObject({ code: ErrorCodes.PARSE, message: 'not UTF-8 text' });
  });
});

describe('write', () => {
  function built(): Profile {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'alloc_space', unit: 'bytes' }, { type: 'samples', unit: 'count' }], facts: { default_sample_type: 'samples' } });
    const main = b.internFunction({ name: 'main', filename: 'main.go' });
    const grow = b.internFunction({ name: 'grow', filename: 'slice.go' });
    const inl = b.internFunction({ name: 'copyInline', filename: 'slice.go' });
    const lMain = b.internLocation({ functionId: main, line: 5 });
    const lGrow = b.internLocation({ functionId: inl, line: 9, column: 3, inlinedInto: [{ functionId: grow, line: 40 }] });
    b.addSample([lGrow, lMain], [4096, 2]);
    b.addSample([lMain], [512, 1]);
    b.addSample([lGrow, lMain], [1024, 1]);
    return b.build();
  }

  it('round-trips names, files, lines, columns and every sample type', async () => {
    const p = built();
    const w = writeSpeedscope(p);
    const text = await collect(w.data);
    const doc = JSON.parse(text);
    expect(doc.$schema).toBe('https://www.speedscope.app/file-format-schema.json');
    expect(doc.profiles.map((x: { type: string; name: string; unit: string }) => [x.type, x.name, x.unit])).toEqual([
      ['sampled', 'alloc_space', 'bytes'],
      ['sampled', 'samples', 'none'],
    ]);
    expect(doc.activeProfileIndex).toBe(1);
    // ROOT FIRST in the file: every stack starts with main.
    for (const s of doc.profiles[0].samples as number[][]) expect(doc.shared.frames[s[0]!].name).toBe('main');
    const back = (await readSpeedscope(inputOf(text))).profile;
    expect(meaning(back)).toEqual(meaning(p));
    expect(sampleTypes(back)).toEqual(sampleTypes(p));
    expect(back['.profile'].default_sample_type).toBe('samples');
    expect(w.warnings.map((x) => x.message)).toEqual(['speedscope cannot represent which frames were inlined (2 inline frames written as ordinary frames); not written']);
  });

  it('reports what speedscope cannot hold', async () => {
    const b = new ProfileBuilder({
      sampleTypes: [{ type: 'objects', unit: 'objects' }],
      facts: { period: 10n, period_type: { type: 'cpu', unit: 'nanoseconds' }, comments: ['c'], time_nanos: 1n },
    });
    const m = b.internMapping({ memoryStart: 0x1000, memoryLimit: 0x2000, filename: '/bin/x' });
    const l = b.internLocation({ address: 0x1234n, mappingId: m });
    b.addSample([l], [3], [{ key: 'thread', str: 'main' }]);
    const p = b.build();
    const w = writeSpeedscope(p);
    const codes = w.warnings.map((x) => x.message);
    for (const what of ['sample labels (1)', 'mappings (1)', 'location addresses', 'the sampling period', 'the collection time', 'comments (1)', 'speedscope has no unit "objects"']) {
      expect(codes.some((c) => c.includes(what)), what).toBe(true);
    }
    const doc = JSON.parse(await collect(w.data));
    expect(doc.shared.frames).toEqual([{ name: '0x1234' }]);
  });

  it('refuses a profile without sample types (speedscope needs one profile per type)', () => {
    const p = new ProfileBuilder({ sampleTypes: [] }).build();
    expect(() => writeSpeedscope(p)).toThrow(expect.objectContaining({ code: ErrorCodes.UNSUPPORTED }));
  });
});

describe('through a registry', () => {
  it('detects, lazily loads and reads; writes by extension', async () => {
    const r = createRegistry([speedscopeAdapter]);
    const res = await r.read(join(fixtures, 'sampled.speedscope.json'));
    expect(res.adapter).toBe('speedscope-example');
    expect(res.profile.samples.value.length).toBe(3);
    expect(r.writerFor('out.speedscope.json').format.id).toBe('speedscope-example');
    const ser = await r.serialize(res.profile, { format: 'speedscope-example' });
    const again = await r.read(new TextEncoder().encode(await collect(ser.data)), { fileName: 'mem' });
    expect(meaning(again.profile)).toEqual(meaning(res.profile));
  });
});
