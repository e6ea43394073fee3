import { describe, expect, it } from 'vitest';
import { ProfileBuilder, findSampleType, type ProfkitError } from '@profkit/core';
import { createRegistry } from '@profkit/core/node';
import { thrownBy } from '@profkit/test-utils';
import v8Adapter, { readCpuProfileBytes, sniffV8, writeCpuProfile } from '../src/index.js';
import { callFrame, dec, enc, expectValid, sampleStacks, smallCpuProfile, stacksByMeaning } from './helpers.js';

const ms = (us: number) => BigInt(us * 1000);
const bytesOf = (d: Uint8Array | AsyncIterable<Uint8Array>) => {
  if (!(d instanceof Uint8Array)) throw new Error('expected one buffer');
  return d;
};

describe('sniffV8', () => {
  const score = (text: string, fileName?: string) => {
    const s = sniffV8(enc(text), { fileName });
    return typeof s === 'number' ? { score: s, format: undefined } : s;
  };
  it('1.0 for the start V8 writes, 0.8 for the structure in another order, 0.3 for the extension only, 0 otherwise', () => {
    expect(score(JSON.stringify(smallCpuProfile()))).toMatchObject({ score: 1, format: 'v8-cpuprofile' });
    expect(score(JSON.stringify(smallCpuProfile(), null, 2))).toMatchObject({ score: 1, format: 'v8-cpuprofile' });
    expect(score('{"startTime":1,"nodes":[{"callFrame":{"functionName":"x"},"id":1}]')).toMatchObject({ score: 0.8, format: 'v8-cpuprofile' });
    expect(score('{"head":{"callFrame":{"functionName":"(root)","scriptId":"0"')).toMatchObject({ score: 1, format: 'v8-heapprofile' });
    expect(score('{"samples":[],"head":{"selfSize":0,"callFrame":{"functionName":"(root)"')).toMatchObject({ score: 0.8, format: 'v8-heapprofile' });
    expect(score('not json', 'x.cpuprofile')).toMatchObject({ score: 0.3, format: 'v8-cpuprofile' });
    expect(score('{"shared":{"frames":[]},"profiles":[]}')).toMatchObject({ score: 0 });
    expect(score('{"nodes":[1,2]}')).toMatchObject({ score: 0 });
  });
});

describe('.cpuprofile read', () => {
  const { profile, warnings } = readCpuProfileBytes(enc(smallCpuProfile()), { fileName: 'small.cpuprofile' });

  it('one sample per V8 sample in time order; cpu = time to the next sample (the last: to endTime); (root) is no frame', () => {
    expectValid(profile);
    expect(warnings).toEqual([]);
    expect(profile.sample_types).toEqual({ type: ['samples', 'cpu'], unit: ['count', 'nanoseconds'] });
    expect(sampleStacks(profile)).toEqual(['main;work', 'main;work', '(program)', 'main;(anonymous)', 'main', '(garbage collector)', '(idle)', 'main;work']);
    expect(Array.from(profile.samples['.values'][1]!)).toEqual([100, 250, 100, 50, 100, 100, 300, 100].map(ms));
    expect(Array.from(profile.samples['.values'][0]!)).toEqual(Array(8).fill(1n));
    expect(Array.from(profile['.extensions'].v8!.samples!.timestamp_us as Float64Array)).toEqual([1100, 1200, 1450, 1550, 1600, 1700, 1800, 2100]);
    expect(profile['.profile'].duration_nanos).toBe(ms(1200));
    expect(profile['.profile'].period_type).toEqual({ type: 'cpu', unit: 'nanoseconds' });
  });

  it('0-based V8 lines and columns become 1-based; -1 (no position) becomes 0; "" is (anonymous)', () => {
    const cpu = stacksByMeaning(profile, 1);
    expect(cpu.get('main@file:///app.js:1:10;work@file:///app.js:5:14')).toBe(ms(450));
    expect(cpu.get('main@file:///app.js:1:10;(anonymous)@file:///app.js:10:3')).toBe(ms(50));
    expect(cpu.get('(program)@:0:0')).toBe(ms(100));
    expect(cpu.get('(idle)@:0:0')).toBe(ms(300));
    const f = profile.functions;
    expect(f.start_line[f.name.indexOf('work')]).toBe(5);
  });

  it('positionTicks (1-based lines) are kept for writing back', () => {
    const t = profile['.extensions'].v8!.tables!.position_ticks!;
    expect(Array.from(t.line as Float64Array)).toEqual([6, 7]);
    expect(Array.from(t.ticks as Uint32Array)).toEqual([2, 1]);
    expect(Array.from(t.sample as Uint32Array)).toEqual([0, 0]);
  });

  it('negative time deltas: samples put in time order with a warning', () => {
    const p = smallCpuProfile();
    p.samples = [4, 2, 5];
    p.timeDeltas = [300, -200, 50];
    const r = readCpuProfileBytes(enc(p));
    expect(sampleStacks(r.profile)).toEqual(['(program)', 'main;(anonymous)', 'main;work']);
    expect(Array.from(r.profile['.extensions'].v8!.samples!.timestamp_us as Float64Array)).toEqual([1100, 1150, 1300]);
    expect(r.warnings.map((w) => w.code)).toEqual(['PROFKIT_W_V8_SAMPLES_REORDERED']);
  });

  it('children given by parent ids (another producer) read the same', () => {
    const p = smallCpuProfile();
    const parentOf = new Map<number, number>();
    for (const n of p.nodes) for (const c of (n as { children?: number[] }).children ?? []) parentOf.set(c, n.id);
    const nodes = p.nodes.map(({ children: _c, ...n }) => ({ ...n, ...(parentOf.has(n.id) ? { parent: parentOf.get(n.id) } : {}) }));
    const r = readCpuProfileBytes(enc({ ...p, nodes }));
    expect(stacksByMeaning(r.profile, 1)).toEqual(stacksByMeaning(profile, 1));
  });
});

describe('.cpuprofile errors name the place and the rule', () => {
  const err = (p: unknown, limits?: Record<string, number>) => thrownBy<ProfkitError>(() => readCpuProfileBytes(typeof p === 'string' ? enc(p) : enc(p), { fileName: 'bad.cpuprofile', limits }));
  const mutate = (f: (p: ReturnType<typeof smallCpuProfile>) => void) => {
    const p = smallCpuProfile();
    f(p);
    return p;
  };
  it('not JSON: the line; cut short: TRUNCATED; empty', () => {
    const e = err('{"nodes": [\n  {"id": 1,,}]}');
    expect([e.code, e.detail.line, e.detail.file]).toEqual(['PROFKIT_E_PARSE', 2, 'bad.cpuprofile']);
    expect(err(JSON.stringify(smallCpuProfile()).slice(0, 200)).code).toBe('PROFKIT_E_TRUNCATED');
    expect(err('  ').code).toBe('PROFKIT_E_EMPTY_INPUT');
  });
  it('unknown child id, duplicate id, two parents, self-cycle, cycle, two roots', () => {
    let e = err(mutate((p) => (p.nodes[2]!.children = [4, 99])));
    expect([e.code, e.detail.path, e.message]).toEqual(['PROFKIT_E_PARSE', 'nodes[2].children[1]', 'nodes[2].children[1]: child id 99 is not the id of any node']);
    expect(e.detail.rule).toBe('.cpuprofile: children name existing node ids');
    e = err(mutate((p) => (p.nodes[4]!.id = 4)));
    expect([e.detail.path, e.detail.rule]).toEqual(['nodes[4].id', '.cpuprofile: node ids are unique']);
    e = err(mutate((p) => (p.nodes[1] = { ...p.nodes[1]!, children: [4] } as never)));
    expect(e.message).toMatch(/node 4 is a child of both node 2 and node 3/);
    e = err(mutate((p) => (p.nodes[3] = { ...p.nodes[3]!, children: [4] } as never)));
    expect(e.message).toMatch(/lists itself as a child/);
    // 3 → 4 → 3: both have a parent, the walk from the root never reaches them.
    e = err(mutate((p) => {
      p.nodes[0]!.children = [2, 6, 7];
      p.nodes[3] = { ...p.nodes[3]!, children: [3] } as never;
    }));
    expect([e.detail.rule, e.detail.path]).toEqual(['.cpuprofile: the nodes form a tree (no cycle)', 'nodes[2]']);
    e = err(mutate((p) => (p.nodes[0]!.children = [2, 3, 6])));
    expect(e.detail.rule).toBe('.cpuprofile: the nodes form one tree (one root)');
  });
  it('a sample naming no node, deltas not matching samples, bad types', () => {
    let e = err(mutate((p) => (p.samples[5] = 42)));
    expect([e.detail.path, e.detail.rule]).toEqual(['samples[5]', '.cpuprofile: samples name existing node ids']);
    e = err(mutate((p) => p.timeDeltas.pop()));
    expect(e.message).toBe('timeDeltas: has 7 entries but samples has 8');
    e = err(mutate((p) => ((p.nodes[3]!.callFrame as { lineNumber: unknown }).lineNumber = '4')));
    expect(e.detail.path).toBe('nodes[3].callFrame.lineNumber');
    e = err(mutate((p) => ((p.timeDeltas as unknown[])[2] = null)));
    expect(e.detail.path).toBe('timeDeltas[2]');
    expect(err([1, 2]).message).toMatch(/^\$: expected an object/);
  });
  it('times beyond ±2^53 µs (their nanoseconds would be Infinity): PARSE naming the field, no RangeError', () => {
    let e = err(mutate((p) => (p.timeDeltas = p.timeDeltas.map(() => 1.5e308))));
    expect([e.code, e.detail.path, e.detail.rule]).toEqual(['PROFKIT_E_PARSE', 'timeDeltas[0]', '.cpuprofile: times are microseconds within ±2^53']);
    e = err(mutate((p) => (p.endTime = 1e308)));
    expect([e.code, e.detail.path]).toEqual(['PROFKIT_E_PARSE', 'endTime']);
    e = err(mutate((p) => (p.startTime = -1e308)));
    expect([e.code, e.detail.path]).toEqual(['PROFKIT_E_PARSE', 'startTime']);
  });
  it('limits: maxSamples, maxTotalFrames, maxFramesPerStack, maxTableEntries, maxInputBytes before JSON.parse (PROFKIT_E_LIMIT naming the option)', () => {
    for (const [option, value] of [['maxSamples', 7], ['maxTotalFrames', 10], ['maxFramesPerStack', 1], ['maxTableEntries', 6], ['maxInputBytes', 100]] as const) {
      const e = err(smallCpuProfile(), { [option]: value });
      expect([e.code, e.detail.option]).toEqual(['PROFKIT_E_LIMIT', option]);
    }
    // 11 frames in all (2+2+1+2+1+1+1+2 = 12 > 11) and exactly enough.
    expect(err(smallCpuProfile(), { maxTotalFrames: 11 }).detail.option).toBe('maxTotalFrames');
    expect(readCpuProfileBytes(enc(smallCpuProfile()), { limits: { maxTotalFrames: 12 } }).profile.samples.value.length).toBe(8);
  });
});

describe('.cpuprofile write', () => {
  it('round trip: the same stacks, times, timestamps, positions, script ids and positionTicks', () => {
    const original = smallCpuProfile();
    const first = readCpuProfileBytes(enc(original)).profile;
    const w = writeCpuProfile(first);
    expect(w.warnings).toEqual([]);
    const json = dec(bytesOf(w.data)) as ReturnType<typeof smallCpuProfile>;
    expect([json.startTime, json.endTime]).toEqual([1000, 2200]);
    expect(json.timeDeltas).toEqual(original.timeDeltas);
    expect(json.nodes[0]!.callFrame).toEqual(callFrame('(root)'));
    const byName = new Map(json.nodes.map((n) => [n.callFrame.functionName, n]));
    expect(byName.get('work')).toMatchObject({ callFrame: callFrame('work', 'file:///app.js', 4, 13, '7'), hitCount: 3, positionTicks: [{ line: 6, ticks: 2 }, { line: 7, ticks: 1 }] });
    expect(byName.get('')!.callFrame).toEqual(callFrame('', 'file:///app.js', 9, 2, '7'));
    // Same samples by node meaning.
    const nameOf = new Map(json.nodes.map((n) => [n.id, n.callFrame.functionName]));
    expect(json.samples.map((id) => nameOf.get(id))).toEqual(original.samples.map((id) => original.nodes.find((n) => n.id === id)!.callFrame.functionName));
    const second = readCpuProfileBytes(bytesOf(w.data)).profile;
    expect(stacksByMeaning(second, 1)).toEqual(stacksByMeaning(first, 1));
    expect(sampleStacks(second)).toEqual(sampleStacks(first));
  });

  it('a profile from elsewhere (pprof-like: counts, cpu time, lines inside functions): times made up, lines as positionTicks', () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }, { type: 'cpu', unit: 'nanoseconds' }], facts: { period_type: { type: 'cpu', unit: 'nanoseconds' }, period: 10_000_000n } });
    const main = b.internFunction({ name: 'main', filename: '/src/main.js', startLine: 3 });
    const leaf = b.internFunction({ name: 'leaf', filename: '/src/main.js', startLine: 20 });
    const l1 = b.internLocation({ functionId: main, line: 7 });
    const l2 = b.internLocation({ functionId: leaf, line: 22 });
    b.addSample([l2, l1], [2, 20_000_000]);
    b.addSample([l1], [1, 10_000_000]);
    const w = writeCpuProfile(b.build());
    expect(w.warnings.map((x) => x.code)).toEqual(['PROFKIT_W_V8_SYNTHETIC_TIMES']);
    const json = dec(bytesOf(w.data)) as ReturnType<typeof smallCpuProfile>;
    expect(json.timeDeltas).toEqual([0, 10000, 10000]);
    expect(json.endTime - json.startTime).toBe(30000);
    const leafNode = json.nodes.find((n) => n.callFrame.functionName === 'leaf')!;
    expect(leafNode).toMatchObject({ callFrame: { lineNumber: 19, columnNumber: 0, url: '/src/main.js' }, hitCount: 2, positionTicks: [{ line: 22, ticks: 2 }] });
    const back = readCpuProfileBytes(bytesOf(w.data)).profile;
    expect(back.samples['.values'][findSampleType(back, 'cpu')]!.reduce((a, x) => a + x, 0n)).toBe(30_000_000n);
  });

  it('through a registry: detected by content, validated, written by extension', async () => {
    const reg = createRegistry([v8Adapter]);
    const r = await reg.read(enc(smallCpuProfile()));
    expect(r.format).toBe('v8-cpuprofile');
    const w = await reg.serialize(r.profile, { format: 'v8-cpuprofile' });
    expect((dec(bytesOf(w.data)) as { samples: number[] }).samples).toHaveLength(8);
  });
});
