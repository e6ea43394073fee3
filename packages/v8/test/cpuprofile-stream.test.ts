/**
 * The streaming `.cpuprofile` reader (`readCpuProfileChunks`, the adapter's read path) gives the
 * same profile, warnings and errors as the whole-input reader (`readCpuProfileBytes`), whatever
 * the chunk boundaries: every input is fed in chunks of 1, 7 and 4096 bytes.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ProfkitError } from '@profkit/core';
import { readCpuProfileBytes, readCpuProfileChunks } from '../src/index.js';
import { callFrame, chunked, enc, outcome, smallCpuProfile } from './helpers.js';

const CHUNK_SIZES = [1, 7, 4096];

async function thrown(f: () => Promise<unknown>): Promise<ProfkitError> {
  try {
    await f();
  } catch (e) {
    if (e instanceof ProfkitError) return e;
    throw e;
  }
  throw new Error('no error');
}

function wholeError(bytes: Uint8Array): ProfkitError {
  try {
    readCpuProfileBytes(bytes, { fileName: 'x.cpuprofile' });
  } catch (e) {
    if (e instanceof ProfkitError) return e;
    throw e;
  }
  throw new Error('no error');
}

/** A profile with what the tokenizer must get right: escapes, non-ASCII split across chunks, fractions, exponents, negative deltas. */
function trickyCpuProfile() {
  const p = smallCpuProfile();
  p.nodes[2]!.callFrame = callFrame('main \u00e9\u4e2d\ud83d\ude00 "q" \\ \n\t\u0001', 'file:///d\u00e9j\u00e0/app.js', 0, 9, '7');
  p.nodes[4]!.callFrame = callFrame('\ufeffbom-first', 'file:///app.js', 9, 2, '7');
  return { ...p, startTime: 1000.5, endTime: 2.2e3, timeDeltas: [100.25, 1e2, 250, -100, 50, 100, 1.5e2, 300], extra: [true, false, null, { a: [] }] };
}

const dir = mkdtempSync(join(tmpdir(), 'profkit-v8-stream-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function realCpuProfile(): Uint8Array {
  const script = join(dir, 'busy.js');
  writeFileSync(script, 'function spin(n){let s=0;for(let i=0;i<n;i++)s+=Math.sqrt(i);return s}\nconst end=Date.now()+200;let t=0;while(Date.now()<end)t+=spin(5000);\n');
  execFileSync(process.execPath, ['--cpu-prof', '--cpu-prof-dir', join(dir, 'cpu'), '--cpu-prof-interval', '200', script]);
  const f = readdirSync(join(dir, 'cpu')).find((x) => x.endsWith('.cpuprofile'))!;
  return readFileSync(join(dir, 'cpu', f));
}

describe('the streaming .cpuprofile reader gives what the whole-input reader gives', () => {
  const inputs: [string, Uint8Array][] = [
    ['small, compact', enc(smallCpuProfile())],
    ['small, indented', enc(JSON.stringify(smallCpuProfile(), null, 2))],
    ['escapes, UTF-8, fractions, exponents, negative deltas', enc(JSON.stringify(trickyCpuProfile(), null, '\t').replace('"extra":', '"__proto__": {"x": 1}, "extra":'))],
    // The columns start as 32-bit integers and must turn to doubles mid-way without losing a value.
    ['a fraction, -0 and a node id beyond 32 bits late in the columns', enc(JSON.stringify(smallCpuProfile()).replace('"id":7,', '"id":3000000000,').replace('2,3,6,7]', '2,3,6,3000000000]').replace('6,7,4]', '6,3000000000,4]').replace('100,300]', '-0,300.5]'))],
    ['node --cpu-prof', realCpuProfile()],
  ];
  for (const [name, bytes] of inputs) {
    for (const size of CHUNK_SIZES) {
      it(`${name}, chunks of ${size}`, async () => {
        const whole = readCpuProfileBytes(bytes, { fileName: 'x.cpuprofile' });
        const streamed = await readCpuProfileChunks(chunked(bytes, size), { fileName: 'x.cpuprofile' });
        expect(streamed).toEqual(whole);
      });
    }
  }
  it('the late-doubles input has what it is meant to test', () => {
    expect(new TextDecoder().decode(inputs[3]![1])).toMatch(/"samples":\[.*,3000000000,4\],"timeDeltas":\[.*,-0,300\.5\]/);
  });
  it('the tricky input has what it is meant to test (non-ASCII names, a reordering warning)', () => {
    const r = readCpuProfileBytes(inputs[2]![1], { fileName: 'x.cpuprofile' });
    expect(r.profile.functions.name).toContain('main \u00e9\u4e2d\ud83d\ude00 "q" \\ \n\t\u0001');
    expect(r.profile.functions.name).toContain('\ufeffbom-first');
    expect(r.warnings.map((w) => w.code)).toContain('PROFKIT_W_V8_SAMPLES_REORDERED');
    expect(new TextDecoder().decode(inputs[2]![1])).toContain('"__proto__": {"x": 1}');
  });
});

describe('the streaming reader refuses what the whole-input reader refuses, naming the offset or path', () => {
  const good = JSON.stringify(smallCpuProfile());
  const cases: [string, string, string, Record<string, unknown>][] = [
    ['a missing comma', good.replace('"startTime":1000,', '"startTime":1000 '), 'PROFKIT_E_PARSE', { offset: good.indexOf('"startTime":1000,') + 17 }],
    ['a bad literal', good.replace('"endTime":2200', '"endTime":nul'), 'PROFKIT_E_PARSE', { offset: good.indexOf('"endTime":2200') + 10 }],
    ['a run of letters', good.replace('"endTime":2200', '"endTime":nullnullnull'), 'PROFKIT_E_PARSE', { offset: good.indexOf('"endTime":2200') + 10 }],
    ['a leading zero', good.replace('"endTime":2200', '"endTime":02200'), 'PROFKIT_E_PARSE', { offset: good.indexOf('"endTime":2200') + 10 }],
    ['a bad escape', good.replace('"(program)"', '"(pro\\xgram)"'), 'PROFKIT_E_PARSE', { offset: good.indexOf('"(program)"') }],
    ['a raw control character in a string', good.replace('(program)', '(pro\u0001gram)'), 'PROFKIT_E_PARSE', { offset: good.indexOf('(program)') + 4 }],
    ['a trailing comma', good.replace('300]', '300,]'), 'PROFKIT_E_PARSE', { offset: good.indexOf('300]') + 4 }],
    ['data after the value', good + ' {}', 'PROFKIT_E_PARSE', { offset: good.length + 1 }],
    ['the end cut off', good.slice(0, good.length - 5), 'PROFKIT_E_TRUNCATED', { offset: good.length - 5 }],
    ['the end cut off in a string', good.slice(0, good.indexOf('(program)') + 3), 'PROFKIT_E_TRUNCATED', {}],
    ['nothing', ' \n', 'PROFKIT_E_EMPTY_INPUT', {}],
    ['not an object', '[1,2]', 'PROFKIT_E_PARSE', { path: '$' }],
    ['a sample that is not a number', good.replace('"samples":[4,4,2', '"samples":[4,4,"2"'), 'PROFKIT_E_PARSE', { path: 'samples[2]' }],
    ['a time delta that is an object', good.replace('"timeDeltas":[100', '"timeDeltas":[{}'), 'PROFKIT_E_PARSE', { path: 'timeDeltas[0]' }],
    ['a sample naming no node', good.replace('"samples":[4,4,2', '"samples":[4,4,99'), 'PROFKIT_E_PARSE', { path: 'samples[2]' }],
    // 2^53 + 1 reads as the double 2^53: refused as not a safe integer, never taken for another id.
    ['a node id above 2^53', good.replace('"id":2,', '"id":9007199254740993,'), 'PROFKIT_E_PARSE', { path: 'nodes[1].id' }],
    ['a sample above 2^53', good.replace('"samples":[4,4,2', '"samples":[4,4,9007199254740993'), 'PROFKIT_E_PARSE', { path: 'samples[2]' }],
  ];
  for (const [name, text, code, detail] of cases) {
    for (const size of CHUNK_SIZES) {
      it(`${name}, chunks of ${size}`, async () => {
        const bytes = enc(text);
        const e = await thrown(() => readCpuProfileChunks(chunked(bytes, size), { fileName: 'x.cpuprofile' }));
        expect(e.code).toBe(code);
        expect(e.code).toBe(wholeError(bytes).code);
        expect(e.detail).toMatchObject({ file: 'x.cpuprofile', ...detail });
      });
    }
  }
  it('nesting deeper than the limit', async () => {
    const e = await thrown(() => readCpuProfileChunks(chunked(enc('{"x":' + '['.repeat(5000)), 4096), { fileName: 'x.cpuprofile' }));
    expect([e.code, e.detail.offset]).toEqual(['PROFKIT_E_PARSE', 5 + 999]);
  });
  it('maxInputBytes and maxSamples, before the whole input is read', async () => {
    const bytes = enc(good);
    let e = await thrown(() => readCpuProfileChunks(chunked(bytes, 7), { limits: { maxInputBytes: 100 } }));
    expect([e.code, e.detail.option]).toEqual(['PROFKIT_E_LIMIT', 'maxInputBytes']);
    e = await thrown(() => readCpuProfileChunks(chunked(bytes, 7), { limits: { maxSamples: 3 } }));
    expect([e.code, e.detail.option, e.detail.path]).toEqual(['PROFKIT_E_LIMIT', 'maxSamples', 'samples']);
  });  it('maxSamples on timeDeltas and maxTableEntries on nodes, as the arrays grow (before the input ends)', async () => {
    // Cut off: only a check made while the array grows can report the limit rather than the truncation.
    let e = await thrown(() => readCpuProfileChunks(chunked(enc('{"timeDeltas":[1,2,3,4,5'), 7), { limits: { maxSamples: 3 } }));
    expect([e.code, e.detail.option, e.detail.path]).toEqual(['PROFKIT_E_LIMIT', 'maxSamples', 'timeDeltas']);
    e = await thrown(() => readCpuProfileChunks(chunked(enc('{"nodes":[{},[],1,{"id":1}'), 7), { limits: { maxTableEntries: 3 } }));
    expect([e.code, e.detail.option, e.detail.path]).toEqual(['PROFKIT_E_LIMIT', 'maxTableEntries', 'nodes']);
  });
  it('inside the nodes, keys the reader does not use are skipped, and values of the wrong kind give the whole-input reader\'s message', async () => {
    const good = JSON.stringify(smallCpuProfile());
    const inputs = [
      // Unknown keys at every level of a node, holding anything (V8 writes deoptReason; others may add more).
      good.replace('"hitCount":3,', '"hitCount":3,"deoptReason":"x","extra":{"id":99,"children":[1,2,{"callFrame":[]}]},').replace('"url":"file:///app.js","lineNumber":4', '"url":"file:///app.js","more":[{"functionName":1}],"lineNumber":4').replace('{"line":6,"ticks":2}', '{"line":6,"ticks":2,"x":[[6]]}'),
      good.replace('"hitCount":3,', '"hitCount":[3,[4],{"a":5}],'),
      good.replace('"lineNumber":4', '"lineNumber":{"a":[1]}'),
      good.replace('"children":[4,5]', '"children":[4,[5]]'),
      good.replace('"children":[4,5]', '"children":{"4":5}'),
      good.replace('"positionTicks":[', '"positionTicks":[[1,2,3],'),
      good.replace('"startTime":1000', '"startTime":[1000,2000]'),
    ];
    for (const text of inputs) {
      const bytes = enc(text);
      const whole = await outcome(() => readCpuProfileBytes(bytes, { fileName: 'x.cpuprofile' }));
      for (const size of CHUNK_SIZES) expect(await outcome(() => readCpuProfileChunks(chunked(bytes, size), { fileName: 'x.cpuprofile' }))).toEqual(whole);
    }
    expect(await outcome(() => readCpuProfileBytes(enc(inputs[1]!)))).toMatchObject({ message: 'nodes[3].hitCount: expected a whole number ≥ 0, got an array of 3' });
  });
  it('samples or timeDeltas that are not arrays, or repeated (the last counts): the whole-input reader\'s result or message', async () => {
    const good = JSON.stringify(smallCpuProfile());
    const inputs = [
      good.replace('"samples":[', '"samples":2000,"samples":['),
      good.replace('"timeDeltas":[', '"timeDeltas":{"a":[1]},"timeDeltas":['),
      good.replace(/"samples":\[[^\]]*\]/, '"samples":5'),
      good.replace(/"timeDeltas":\[[^\]]*\]/, '"timeDeltas":{"a":[1]}'),
      good.replace(/"samples":\[[^\]]*\]/, '"samples":[4,4],"samples":null'),
    ];
    for (const text of inputs) {
      const bytes = enc(text);
      const whole = await outcome(() => readCpuProfileBytes(bytes, { fileName: 'x.cpuprofile' }));
      for (const size of CHUNK_SIZES) expect(await outcome(() => readCpuProfileChunks(chunked(bytes, size), { fileName: 'x.cpuprofile' }))).toEqual(whole);
    }
    expect(await outcome(() => readCpuProfileBytes(enc(inputs[0]!)))).toHaveProperty('profile');
    expect(await outcome(() => readCpuProfileBytes(enc(inputs[2]!)))).toHaveProperty('code', 'PROFKIT_E_PARSE');
  });
  it('fields the reader does not use are skipped, whatever they hold', async () => {
    const extra = { ...smallCpuProfile(), x: [{ samples: [1], nodes: 'no' }, [[{}]], 'y'], y: { nodes: [] }, z: 1 };
    const bytes = enc(JSON.stringify(extra));
    for (const size of CHUNK_SIZES) {
      expect((await readCpuProfileChunks(chunked(bytes, size))).profile).toStrictEqual(readCpuProfileBytes(bytes).profile);
    }
  });
});
