/**
 * The streaming reader (`readSpeedscopeChunks`, the adapter's read path) gives the same profile,
 * warnings and errors as the whole-input reader (`readSpeedscopeBytes`), whatever the chunk
 * boundaries and the order of the keys; its limits stop the stream as it grows; the adapter reads
 * through it.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProfkitError, type ReadInput, type ReadResult } from '@profkit/core';
import { rejectionOf } from '@profkit/test-utils';
import speedscopeAdapter, { readSpeedscopeBytes, readSpeedscopeChunks, type SpeedscopeReadOptions } from '../src/index.js';

const fixtures = join(import.meta.dirname, 'fixtures');
const enc = (v: unknown) => new TextEncoder().encode(typeof v === 'string' ? v : JSON.stringify(v));
const CHUNK_SIZES = [1, 7, 4096];

async function* chunked(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.slice(i, i + size);
}

/** The same value with every object's keys in reverse order (profiles before shared, events before startValue, at before type). */
function reversedKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reversedKeys);
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reversedKeys(x)]));
}

type Outcome = { result: ReadResult } | { error: ProfkitError };

function settle(f: () => ReadResult): Outcome {
  try {
    return { result: f() };
  } catch (e) {
    if (e instanceof ProfkitError) return { error: e };
    throw e;
  }
}

async function settleAsync(p: Promise<ReadResult>): Promise<Outcome> {
  try {
    return { result: await p };
  } catch (e) {
    if (e instanceof ProfkitError) return { error: e };
    throw e;
  }
}

/** What the two readers must agree on: everything, but where a JSON syntax error is (line vs byte) and the count a limit names. */
function comparable(o: Outcome): unknown {
  if ('result' in o) return o.result;
  const { code, message, detail } = o.error;
  if (code === 'PROFKIT_E_LIMIT') return { code, option: detail.option, path: detail.path, limit: detail.limit };
  if (detail.rule === 'speedscope files are JSON') return { code };
  return { code, message, detail };
}

const FILE = 'x.speedscope.json';

async function expectSameAsWhole(bytes: Uint8Array, options: SpeedscopeReadOptions = {}): Promise<Outcome> {
  const whole = settle(() => readSpeedscopeBytes(bytes, { ...options, fileName: FILE }));
  for (const size of CHUNK_SIZES) {
    const streamed = await settleAsync(readSpeedscopeChunks(chunked(bytes, size), { ...options, fileName: FILE }));
    expect(comparable(streamed), `chunks of ${size}`).toEqual(comparable(whole));
  }
  return whole;
}

const SCHEMA = 'https://www.speedscope.app/file-format-schema.json';
const frames = [{ name: 'main', file: 'a.js', line: 3, col: 7 }, { name: 'f' }, { name: 'g \u00e9\u4e2d\ud83d\ude00 "q"\n', file: 'd\u00e9j\u00e0.js', line: 1 }];
const sampled = (over: Record<string, unknown> = {}) => ({ type: 'sampled', name: 's', unit: 'milliseconds', startValue: 0, endValue: 9, samples: [[0, 1], [0, 1, 2], [], [0]], weights: [1, 2.5, 0, 3], ...over });
const events = () => [
  { type: 'O', frame: 0, at: 0.5 },
  { type: 'O', frame: 1, at: 1 },
  { type: 'O', frame: 1, at: 1 },
  { type: 'C', frame: 1, at: 2 },
  { type: 'C', frame: 1, at: 2 },
  { type: 'O', frame: 2, at: 3 },
  { type: 'C', frame: 2, at: 3 },
  { type: 'C', frame: 0, at: 5 },
];
const evented = (over: Record<string, unknown> = {}) => ({ type: 'evented', name: 'e', unit: 'none', startValue: 0, endValue: 5, events: events(), ...over });
const doc = (profiles: unknown[], over: Record<string, unknown> = {}) => ({ $schema: SCHEMA, shared: { frames }, profiles, name: 'n', exporter: 'x', activeProfileIndex: 1, ...over });
/** Event `j` of the evented profile replaced. */
const withEvent = (j: number, e: unknown) => evented({ events: events().map((x, i) => (i === j ? e : x)) });
const withSample = (j: number, s: unknown) => sampled({ samples: sampled().samples.map((x, i) => (i === j ? s : x)) });

/** Valid files, and files each with one thing wrong (the whole-input reader's errors, the stream reader's). */
const cases: [string, unknown][] = [
  ['sampled and evented, fractions, non-ASCII, unknown fields', { ...doc([sampled(), evented()]), extra: { deep: [[[{ a: [1, 2, { b: null }] }]]], s: 'x' } }],
  ['a sampled profile with unknown fields inside profile, frame and event', doc([{ ...sampled(), meta: { x: [1, [2]] } }, evented({ events: events().map((e) => ({ ...e, args: { k: [1, 2] } })) })], { shared: { frames: frames.map((f) => ({ ...f, extra: [[1]] })), more: 1 } })],
  ['a value beyond 2^53', doc([sampled({ unit: 'bytes', weights: [2 ** 60, 1, 1, 1] })])],
  ['rounded values', doc([sampled({ unit: 'bytes' })])],
  ['not an object', [1, 2, 3]],
  ['a string', 'text'],
  ['shared missing', { profiles: [sampled()] }],
  ['shared an array', { shared: [1, 2], profiles: [sampled()] }],
  ['frames not an array', { shared: { frames: { a: 1 } }, profiles: [sampled()] }],
  ['a frame not an object', doc([sampled()], { shared: { frames: [frames[0], [1, 2, 3]] } })],
  ['a frame name an array', doc([sampled()], { shared: { frames: [frames[0], { name: [1, [2], 3] }] } })],
  ['a frame line fractional', doc([sampled()], { shared: { frames: [frames[0], { name: 'f', line: 1.5 }] } })],
  ['profiles missing', { shared: { frames } }],
  ['profiles empty', doc([])],
  ['profiles an object', doc([], { profiles: { a: [] } })],
  ['a profile not an object', doc([sampled(), 5])],
  ['a type that is an object', doc([sampled({ type: { kind: 'sampled' } })])],
  ['a unit that is an array', doc([sampled({ unit: ['ms'] })])],
  ['startValue a string', doc([evented({ startValue: '0' })])],
  ['samples not an array', doc([sampled({ samples: { 0: [0] } })])],
  ['weights missing', doc([sampled({ weights: undefined })])],
  ['weights and samples of different lengths', doc([sampled({ weights: [1, 2, 3] })])],
  ['a sample not an array', doc([withSample(1, 7)])],
  ['a sample an object', doc([withSample(2, { 0: 1 })])],
  ['a frame index fractional', doc([withSample(1, [0, 1.5])])],
  ['a frame index an array', doc([withSample(1, [0, [1, 2]])])],
  ['a frame index not in shared.frames', doc([withSample(3, [0, 3])])],
  ['a frame index beyond 32 bits', doc([withSample(1, [0, 2 ** 32 + 5])])],
  ['a frame index beyond 2^53', doc([withSample(1, [0, 2 ** 60])])],
  ['a negative weight', doc([sampled({ weights: [1, -2, 0, 3] })])],
  ['a weight that is a string', doc([sampled({ weights: [1, 2, '0', 3] })])],
  ['a weight that is an object', doc([sampled({ weights: [1, 2, 0, {}] })])],
  ['events not an array', doc([evented({ events: 'none' })])],
  ['an event not an object', doc([withEvent(2, [1])])],
  ['an event without at', doc([withEvent(3, { type: 'C', frame: 1 })])],
  ['an event frame a string', doc([withEvent(3, { type: 'C', frame: '1', at: 2 })])],
  ['an event frame not in shared.frames', doc([withEvent(1, { type: 'O', frame: 3, at: 1 })])],
  ['an event frame beyond 32 bits', doc([withEvent(1, { type: 'O', frame: 2 ** 33, at: 1 })])],
  ['an event type X', doc([withEvent(4, { type: 'X', frame: 1, at: 2 })])],
  ['an event without type', doc([withEvent(4, { frame: 1, at: 2 })])],
  ['an event type that is an object', doc([withEvent(4, { type: { t: 'C' }, frame: 1, at: 2 })])],
  ['events out of time order', doc([withEvent(3, { type: 'C', frame: 1, at: 0.75 })])],
  ['the first event before startValue', doc([evented({ startValue: 1 })])],
  ['closing a frame that is not the innermost', doc([withEvent(3, { type: 'C', frame: 0, at: 2 })])],
  ['closing with nothing open', doc([evented({ events: [{ type: 'C', frame: 0, at: 0 }] })])],
  ['frames still open at the end', doc([evented({ events: events().slice(0, 7) })])],
  ['a fault in the second profile after a good first', doc([sampled(), withEvent(3, { type: 'C', frame: 0, at: 2 })])],
  ['two faults: the earlier is reported', doc([sampled({ weights: [1, -2, 0, 3], samples: [[0], [0, 9], [], [0]] })])],
  ['an out-of-range frame before a bad event type', doc([evented({ events: [{ type: 'O', frame: 9, at: 0 }, { type: 'Z', frame: 0, at: 1 }] })])],
];

describe('the streaming reader gives what the whole-input reader gives', () => {
  for (const name of readdirSync(fixtures).filter((n) => n.endsWith('.json'))) {
    it(`fixture ${name}`, async () => {
      const bytes = new Uint8Array(readFileSync(join(fixtures, name)));
      await expectSameAsWhole(bytes);
      await expectSameAsWhole(enc(reversedKeys(JSON.parse(new TextDecoder().decode(bytes)))));
    });
  }
  for (const [name, value] of cases) {
    it(name, async () => {
      await expectSameAsWhole(enc(value));
      // Keys in reverse order: profiles before shared (frame indices checked once the frames are known), events before startValue.
      await expectSameAsWhole(enc(reversedKeys(value)));
    });
  }
  it('the cases test what they are named for (the valid ones read, each other one an error)', async () => {
    const valid = ['sampled and evented, fractions, non-ASCII, unknown fields', 'a sampled profile with unknown fields inside profile, frame and event', 'rounded values'];
    for (const [name, value] of cases) {
      const o = settle(() => readSpeedscopeBytes(enc(value)));
      expect('result' in o, name).toBe(valid.includes(name));
    }
    const rounded = settle(() => readSpeedscopeBytes(enc(cases.find(([n]) => n === 'rounded values')![1])));
    expect('result' in rounded && rounded.result.warnings.map((w) => w.code)).toEqual(['PROFKIT_W_SPEEDSCOPE_ROUNDED']);
    const two = settle(() => readSpeedscopeBytes(enc(cases.find(([n]) => n === 'two faults: the earlier is reported')![1])));
    expect('error' in two && two.error.detail.path).toBe('profiles[0].samples[1][1]');
  });

  it('frame indices above 65,535 late in the columns (stored in 2 bytes each until then)', async () => {
    const many = Array.from({ length: 70_000 }, (_, i) => ({ name: `f${i}` }));
    const stacks = [[0, 1], [2], [3, 65_535, 65_536], [69_999, 0], [1]];
    const opened = [0, 65_535, 65_536, 69_999];
    const bytes = enc({
      shared: { frames: many },
      profiles: [
        { type: 'sampled', name: 's', samples: stacks, weights: stacks.map(() => 1) },
        { type: 'evented', name: 'e', startValue: 0, events: [...opened.map((frame, at) => ({ type: 'O', frame, at })), ...opened.reverse().map((frame, k) => ({ type: 'C', frame, at: 4 + k }))] },
      ],
    });
    const whole = readSpeedscopeBytes(bytes);
    const streamed = await readSpeedscopeChunks(chunked(bytes, 4096));
    expect(streamed).toEqual(whole);
    expect(whole.profile.functions.name).toContain('f69999');
  });

  it('escapes, whitespace and duplicate keys (the last one wins, as in JSON.parse)', async () => {
    const text = JSON.stringify(doc([sampled()]), null, '\t')
      .replace('"name": "main"', '"name": "m\\u00e9\\"n\\\\", "name": "ma\\u0069n"')
      .replace('"unit": "milliseconds"', '"unit": ["x"], "unit": "milliseconds"')
      .replace('"exporter": "x"', '"exporter": "x", "exporter": {"a": 1}');
    const whole = await expectSameAsWhole(enc(text));
    expect('result' in whole && whole.result.profile.functions.name).toContain('main');
    expect('result' in whole && whole.result.profile['.extensions'].speedscope!.facts).not.toHaveProperty('exporter');
  });

  it('numbers beyond a double (1e999 is Infinity) as a weight or an event time: the same error', async () => {
    const sampledText = JSON.stringify(doc([sampled({ weights: [1, 2, 0, 7777] })]));
    const eventedText = JSON.stringify(doc([evented({ events: [{ type: 'O', frame: 0, at: 7777 }, { type: 'C', frame: 0, at: 7777 }] })]));
    for (const text of [sampledText, eventedText]) {
      for (const big of ['1e999', '-1e999']) {
        const whole = await expectSameAsWhole(enc(text.replaceAll('7777', big)));
        expect('error' in whole && [whole.error.code, whole.error.detail.rule]).toEqual(['PROFKIT_E_PARSE', 'speedscope: numbers are finite']);
      }
    }
  });

  it('syntax errors, a cut file and an empty one: the same codes', async () => {
    const text = JSON.stringify(doc([sampled()]));
    for (const bad of [text.slice(0, 100), text.replace('"samples"', '"samples" 1'), text + 'x', '', '   ', text.replace('[[0,1]', '[[0,01]')]) {
      const whole = await expectSameAsWhole(enc(bad));
      expect('error' in whole).toBe(true);
    }
  });

  it('the profile option, by index and by name (the name before or after the samples), and naming none', async () => {
    const named = (name: string, over: Record<string, unknown> = {}) => sampled({ name, ...over });
    const bytes = enc(doc([named('one'), evented({ name: 'two' }), named('three', { weights: [1, 2, 3] }), named('two')]));
    for (const profile of [0, '1', 1, 'two', 'three', 'four', 9]) {
      await expectSameAsWhole(bytes, { profile });
      await expectSameAsWhole(enc(reversedKeys(JSON.parse(new TextDecoder().decode(bytes)))), { profile });
    }
    // A profile not read is not checked, whatever is wrong in it.
    const other = enc(doc([named('bad', { samples: 5 }), named('good')]));
    const r = await expectSameAsWhole(other, { profile: 'good' });
    expect('result' in r && r.result.profile.sample_types.type).toEqual(['good']);
  });

  it('limits: the same limit as the whole-input reader, at the same place', async () => {
    const both = doc([sampled(), evented()]);
    // 3 frames, 4 + 3 samples, 8 events: each limit below is exceeded by one thing only (the readers may meet two in different orders).
    const limited: [unknown, Record<string, number>][] = [
      [both, { maxSamples: 5 }],
      [both, { maxSampleValues: 9 }],
      [both, { maxTotalFrames: 6 }],
      [both, { maxFramesPerStack: 2 }],
      [doc([sampled()]), { maxTableEntries: 2 }],
      [both, { maxTableEntries: 7 }],
      [both, { maxSampleTypes: 1 }],
      [both, { maxInputBytes: 100 }],
    ];
    for (const [value, limits] of limited) {
      for (const v of [value, reversedKeys(value)]) {
        const whole = await expectSameAsWhole(enc(v), { limits });
        expect('error' in whole && [whole.error.code, whole.error.detail.option], JSON.stringify(limits)).toEqual(['PROFKIT_E_LIMIT', Object.keys(limits)[0]]);
      }
    }
    const events = settle(() => readSpeedscopeBytes(enc(both), { limits: { maxTableEntries: 7 } }));
    expect('error' in events && events.error.detail.path).toBe('profiles[1].events');
  });
});

/** Chunks of `head`, then `unit` repeated `times`, then `tail`; counts the chunks taken. */
function endless(head: string, unit: string, times: number, tail: string) {
  const state = { taken: 0, total: times + 2 };
  async function* chunks(): AsyncGenerator<Uint8Array> {
    state.taken++;
    yield enc(head);
    const one = enc(unit);
    for (let i = 0; i < times; i++) {
      state.taken++;
      yield one;
    }
    state.taken++;
    yield enc(tail);
  }
  return { chunks: chunks(), state };
}

describe('limits stop the stream as it grows, before the rest is read', () => {
  const prefix = `{"$schema":"${SCHEMA}","shared":{"frames":[{"name":"f"}]},"profiles":[`;
  const cases: [string, string, string, string, Record<string, number>, string][] = [
    ['samples', `${prefix}{"type":"sampled","samples":[[0]`, ',[0]', '],"weights":[]}]}', { maxSamples: 1000 }, 'maxSamples'],
    ['samples × profiles', `${prefix}{"type":"sampled","samples":[],"weights":[]},{"type":"sampled","samples":[[0]`, ',[0]', '],"weights":[]}]}', { maxSampleValues: 1000 }, 'maxSampleValues'],
    ['frames of one sample', `${prefix}{"type":"sampled","samples":[[0`, ',0', ']],"weights":[1]}]}', { maxFramesPerStack: 1000 }, 'maxFramesPerStack'],
    ['frames of all samples', `${prefix}{"type":"sampled","samples":[[0]`, ',[0,0,0,0]', '],"weights":[]}]}', { maxTotalFrames: 1000 }, 'maxTotalFrames'],
    ['events', `${prefix}{"type":"evented","events":[{"type":"O","frame":0,"at":0}`, ',{"type":"C","frame":0,"at":0},{"type":"O","frame":0,"at":0}', ']}]}', { maxTableEntries: 1000 }, 'maxTableEntries'],
    ['frames', `{"shared":{"frames":[{"name":"f"}`, ',{"name":"f"}', ']},"profiles":[]}', { maxTableEntries: 1000 }, 'maxTableEntries'],
    ['profiles', `{"shared":{"frames":[]},"profiles":[{"type":"sampled","samples":[],"weights":[]}`, ',{"type":"sampled","samples":[],"weights":[]}', ']}', { maxSampleTypes: 100 }, 'maxSampleTypes'],
    ['bytes', '{"shared":{"frames":[]},"profiles":[', '{"a":1},', ']}', { maxInputBytes: 10_000 }, 'maxInputBytes'],
  ];
  for (const [what, head, unit, tail, limits, option] of cases) {
    it(`${what}: ${option}`, async () => {
      const input = endless(head, unit, 100_000, tail);
      const e = await rejectionOf<ProfkitError>(readSpeedscopeChunks(input.chunks, { limits }));
      expect([e.code, e.detail.option]).toEqual(['PROFKIT_E_LIMIT', option]);
      // Stopped within a few thousand chunks of 100,002: what was over the limit was never all read.
      expect(input.state.taken).toBeLessThan(5_000);
    });
  }
});

describe('the adapter', () => {
  it('reads through the stream (chunks), never the whole input at once', async () => {
    const codec = await speedscopeAdapter.load!();
    const bytes = readFileSync(join(fixtures, '0.6.0-two-sampled.speedscope.json'));
    const input: ReadInput = {
      fileName: 'two.speedscope.json',
      gzipped: false,
      bytes: () => Promise.reject(new Error('the speedscope codec asked for the whole input')),
      chunks: () => chunked(new Uint8Array(bytes), 64),
    };
    const r = await codec.read(input, { options: { profile: 'two' } });
    expect(r.profile).toEqual(readSpeedscopeBytes(bytes, { fileName: 'two.speedscope.json', profile: 'two' }).profile);
    expect(r.format).toBe('speedscope');
  });
});
