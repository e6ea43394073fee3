/**
 * perf script text: real outputs (FlameGraph's test files, and outputs of perf 6.1 recorded for
 * this package; see fixtures/README.md), compared with FlameGraph's stackcollapse-perf.pl results;
 * inlined frames and srcline; labels, timestamps, several events; errors and limits.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProfileIndex, isProfkitError, resolveStack, type ProfkitError } from '@profkit/core';
import { createRegistry } from '@profkit/core/node';
import { rejectionOf } from '@profkit/test-utils';
import perfAdapter, { parseEventLine, parseFrame, readPerfScriptBytes, readPerfScriptChunks, sniffPerfScript } from '../src/index.js';
import { collapseLikeStackcollapsePid, expectValid, fixture, fixtures, labelsOf, parseFolded } from './helpers.js';

const enc = (s: string) => new TextEncoder().encode(s);
const read = (text: string, limits = {}) => readPerfScriptBytes(enc(text), { fileName: 't.perf', limits });

describe('FlameGraph test outputs, against stackcollapse-perf.pl --pid', () => {
  for (const name of ['perf-dd-stacks-01', 'perf-java-stacks-02', 'perf-js-stacks-01', 'perf-funcab-pid-01', 'perf-cycles-instructions-01']) {
    it(`${name}: the same folded stacks and totals`, async () => {
      const text = fixture(`${name}.txt`);
      const { profile } = await readPerfScriptBytes(text, { fileName: name });
      expectValid(profile);
      const expected = parseFolded(readFileSync(join(fixtures, `${name}.collapsed-pid.txt`), 'utf8'));
      // stackcollapse-perf.pl saves a sample at the blank line after it: it loses a last one that
      // the file does not end with a blank line (perf-dd-stacks-01); profkit keeps it.
      const endsBlank = text[text.length - 1] === 10 && text[text.length - 2] === 10;
      const n = profile.samples.value.length;
      expect(collapseLikeStackcollapsePid(profile, endsBlank ? n : n - 1)).toEqual(expected);
    });
  }
});

describe('what is kept', () => {
  it('kernel and user frames with their DSOs as mappings, [unknown] frames with their address', async () => {
    const { profile: p } = await readPerfScriptBytes(fixture('perf-dd-stacks-01.txt'));
    // /bin/dd, the program (comm dd), is the first mapping; the others in the order met.
    expect(p['.mappings'].filename).toEqual(['/bin/dd', '/lib/modules/4.1.0-virtual/build/vmlinux', '/lib/x86_64-linux-gnu/libc-2.15.so']);
    const frames = resolveStack(p, 0, new ProfileIndex(p));
    const dso = (id: number) => p['.mappings'].filename[p['.mappings'].mapping_id.indexOf(id)] ?? '';
    expect(frames.map((f) => [f.name, f.address, dso(f.mappingId)])).toEqual([
      ['fsnotify', 0x414b3bn, '/lib/modules/4.1.0-virtual/build/vmlinux'],
      ['vfs_read', 0x3d6b4cn, '/lib/modules/4.1.0-virtual/build/vmlinux'],
      ['sys_read', 0x3d6b9fn, '/lib/modules/4.1.0-virtual/build/vmlinux'],
      ['system_call', 0x968f6en, '/lib/modules/4.1.0-virtual/build/vmlinux'],
      ['read', 0xe5f70n, '/lib/x86_64-linux-gnu/libc-2.15.so'],
      ['', 0n, ''],
    ]);
    expect(frames[5]!.symbolized).toBe(false);
    expect(p.sample_types).toEqual({ type: ['cpu-clock'], unit: ['nanoseconds'] });
    expect(p.samples.value[0]).toBe(10101010n);
  });

  it('[kernel.kallsyms] is a mapping', async () => {
    const { profile: p } = await readPerfScriptBytes(fixture('perf-java-stacks-02.txt'));
    expect(p['.mappings'].filename).toContain('[kernel.kallsyms]');
  });

  it('comm, pid and tid are labels; the time (ns) and cpu are per-sample columns; the header lines are comments', async () => {
    const { profile: p } = await readPerfScriptBytes(fixture('perf-cycles-instructions-01.txt'));
    expect(labelsOf(p, 0)).toEqual({ comm: 'noploop', tid: 21796n });
    const ext = p['.extensions'].perf!.samples!;
    expect((ext.time_ns as BigInt64Array)[0]).toBe(1410597984841000n);
    expect((ext.cpu as Float64Array)[0]).toBe(1);
    expect(p['.profile'].comments).toContain('# cmdline : /usr/bin/perf record -e cycles -e instructions -c 100000000 -a --call-graph=lbr -- sleep 1 ');
    const funcab = (await readPerfScriptBytes(fixture('perf-funcab-pid-01.txt'))).profile;
    expect(labelsOf(funcab, 0)).toMatchObject({ comm: 'func_ab' });
  });

  it('several events: one sample type each, in order of appearance; the value is the period, else 1', async () => {
    const text = readFileSync(join(fixtures, 'perf-cycles-instructions-01.txt'), 'utf8');
    const { profile: p } = await readPerfScriptBytes(enc(text));
    expect(p.sample_types).toEqual({ type: ['instructions', 'cycles'], unit: ['count', 'count'] });
    expect(p['.profile'].default_sample_type).toBe('instructions');
    const count = (e: string) => text.split('\n').filter((l) => l.endsWith(` ${e}: `)).length;
    const sum = (k: number) => p.samples['.values'][k]!.reduce((a, b) => a + b, 0n);
    expect([sum(0), sum(1)]).toEqual([BigInt(count('instructions')), BigInt(count('cycles'))]);
    expect(count('cycles')).toBeGreaterThan(0);
    for (let i = 0; i < p.samples.value.length; i++) expect(p.samples['.values'][0]![i]! * p.samples['.values'][1]![i]!).toBe(0n);
    const mixed = await read('a 1 1.000001: 10 cycles:\n\t1 f (/x)\n\nb 2 1.000002: 7 instructions:\n\t2 g (/x)\n\na 1 1.000003: 5 cycles:\n\t1 f (/x)\n');
    expect(mixed.profile.sample_types.unit).toEqual(['events', 'events']);
    expect(Array.from(mixed.profile.samples['.values'][0]!)).toEqual([10n, 0n, 5n]);
    expect(Array.from(mixed.profile.samples['.values'][1]!)).toEqual([0n, 7n, 0n]);
  });

  it('frames perf marks (inlined) become inline lines of the frame they are inlined into (perf 6.1, --call-graph dwarf)', async () => {
    const { profile: p } = await readPerfScriptBytes(fixture('inline-dwarf.txt'));
    expectValid(p);
    const index = new ProfileIndex(p);
    // Sample 3: leaf (inlined) -> mid -> main -> __libc_start_call_main -> __libc_start_main_impl (inlined) -> _start
    const frames = resolveStack(p, 2, index);
    expect(frames.map((f) => [f.name, f.inlined, f.locationId])).toEqual([
      ['leaf', true, frames[0]!.locationId],
      ['mid', false, frames[0]!.locationId],
      ['main', false, frames[2]!.locationId],
      ['__libc_start_call_main', false, frames[3]!.locationId],
      ['__libc_start_main_impl', true, frames[4]!.locationId],
      ['_start', false, frames[4]!.locationId],
    ]);
    expect(p.locations.location_id.length).toBeGreaterThan(0);
    const mappingRow = (id: number) => p['.mappings'].mapping_id.indexOf(id);
    expect(p['.mappings'].filename[mappingRow(frames[0]!.mappingId)]).toBe('/tmp/perftry/inl');
    // The program's own DSO is the first mapping (pprof's main binary), though the loader came first.
    expect(p['.mappings'].filename[0]).toBe('/tmp/perftry/inl');
    expect(p['.mappings'].mapping_id[0]).not.toBe(1);
  });

  it('-F +srcline: files and lines, inlined frames marked on their source line', async () => {
    const { profile: p } = await readPerfScriptBytes(fixture('inline-dwarf-srcline.txt'));
    expectValid(p);
    const frames = resolveStack(p, 2, new ProfileIndex(p));
    expect(frames.map((f) => `${f.name}@${f.filename}:${f.line}${f.inlined ? ' (inlined)' : ''}`)).toEqual([
      'leaf@inl.c:2 (inlined)',
      'mid@inl.c:3',
      'main@inl.c:4',
      '__libc_start_call_main@libc-start.c:58',
      '__libc_start_main_impl@libc-start.c:360 (inlined)',
      '_start@:0',
    ]);
  });

  it('without a call graph the ip on the event line is the stack; symbols keep their parentheses, lose their offset', async () => {
    const { profile: p } = await read('x 5/6 [003] 12.5: 100 cycles:  4005b6 Foo::bar(int) const+0x1f (/bin/x)\n');
    const f = resolveStack(p, 0, new ProfileIndex(p));
    expect(f.map((x) => [x.name, x.address])).toEqual([['Foo::bar(int) const', 0x4005b6n]]);
    expect(labelsOf(p, 0)).toEqual({ comm: 'x', pid: 5n, tid: 6n });
    expect((p['.extensions'].perf!.samples!.time_ns as BigInt64Array)[0]).toBe(12_500_000_000n);
  });
});

describe('grammar', () => {
  it('event lines: comm with spaces, pid/tid, cpu, time, period, event; the tid alone by default', () => {
    expect(parseEventLine('V8 WorkerThread 24636/25607 [000] 94564.109216: 100 cycles:u: ')).toEqual({ comm: 'V8 WorkerThread', pid: 24636, tid: 25607, cpu: 0, timeNs: 94564109216000n, period: 100n, event: 'cycles:u', trailer: '' });
    expect(parseEventLine('java 25607 4794564.109216: cycles:')).toEqual({ comm: 'java', tid: 25607, timeNs: 4794564109216000n, event: 'cycles', trailer: '' });
    expect(parseEventLine('swapper 0 [001] 1.000000001: sched:sched_switch: prev_comm=x')).toMatchObject({ comm: 'swapper', event: 'sched:sched_switch', timeNs: 1_000_000_001n, trailer: 'prev_comm=x' });
    expect(parseEventLine('\t4005b6 f (/x)')).toBeUndefined();
    expect(parseEventLine('just words')).toBeUndefined();
  });
  it('frames: the DSO is in the last parentheses; no DSO; (inlined)', () => {
    expect(parseFrame('\t7f00 operator()(int) (/lib/a (b).so)')).toEqual({ address: 0x7f00n, symbol: 'operator()(int)', dso: '/lib/a (b).so', inlined: false });
    expect(parseFrame('\t7f00 f(int)+0x1 (/x)')).toEqual({ address: 0x7f00n, symbol: 'f(int)', dso: '/x', inlined: false });
    expect(parseFrame('\t7f00 f(int)')).toEqual({ address: 0x7f00n, symbol: 'f(int)', dso: '', inlined: false });
    expect(parseFrame('  11b4 leaf+0x24')).toEqual({ address: 0x11b4n, symbol: 'leaf', dso: '', inlined: false });
    expect(parseFrame('  11b4 leaf+0x24 (inlined)')).toEqual({ address: 0x11b4n, symbol: 'leaf', dso: '', inlined: true });
    expect(parseFrame('  inl.c:2 (inlined)')).toBeUndefined();
  });
});

describe('errors and limits', () => {
  it('a frame before any event line, a line that is neither: PROFKIT_E_PARSE naming the line', async () => {
    const e1 = await rejectionOf<ProfkitError>(read('\t4005b6 f (/x)\n'));
    expect([e1.code, e1.detail.line, e1.detail.file]).toEqual(['PROFKIT_E_PARSE', 1, 't.perf']);
    const e2 = await rejectionOf<ProfkitError>(read('a 1 1.0: cycles:\n\t1 f (/x)\n\nthis is not perf\n'));
    expect([e2.code, e2.detail.line]).toEqual(['PROFKIT_E_PARSE', 4]);
    const e3 = await rejectionOf<ProfkitError>(read('a 1 1.0: cycles:\n\t1 f (/x)\n  f.c:1\n  junk here\n'));
    expect([e3.code, e3.detail.line]).toEqual(['PROFKIT_E_PARSE', 4]);
  });
  it('a time or period beyond int64 is PROFKIT_E_RANGE naming the line; an [unknown] frame in an inlined run keeps its own location', async () => {
    for (const text of ['a 1 99999999999999999999.0: c:\n\t1 f (/x)\n', 'a 1 1.0: 99999999999999999999 c:\n\t1 f (/x)\n']) {
      const e = await rejectionOf<ProfkitError>(read(text));
      expect([e.code, e.detail.line]).toEqual(['PROFKIT_E_RANGE', 1]);
    }
    // Millions of digits are refused by their count, before a BigInt conversion that takes seconds.
    const huge = await rejectionOf<ProfkitError>(read(`a 1 1.0: ${'9'.repeat(5_000_000)} c:\n\t1 f (/x)\n`));
    expect([huge.code, huge.detail.line, huge.message]).toEqual(['PROFKIT_E_RANGE', 1, 'line 1: a period of 5000000 digits does not fit in int64']);
    const e19 = await rejectionOf<ProfkitError>(read('a 1 1.0: 9999999999999999999 c:\n\t1 f (/x)\n'));
    expect([e19.code, e19.message]).toEqual(['PROFKIT_E_RANGE', 'line 1: the time or period does not fit in int64']);
    const padded = await read(`a 1 ${'0'.repeat(30)}1.5: ${'0'.repeat(30)}7 c:\n\t1 f (/x)\n`);
    expect(padded.profile.samples.value[0]).toBe(7n);
    const { profile: p } = await read('a 1 1.0: c:\n\t1 [unknown] (inlined)\n\t1 f (/x)\n');
    expectValid(p);
    expect(resolveStack(p, 0, new ProfileIndex(p)).map((f) => [f.name, f.inlined])).toEqual([
      ['0x1', false],
      ['f', false],
    ]);
  });
  it('maxSamples, maxFramesPerStack, maxTotalFrames, maxLineLength, maxStringLength, maxSampleTypes, maxSampleValues', async () => {
    const sample = 'a 1 1.0: cycles:\n\t1 f (/x)\n\t2 g (/x)\n\n';
    const limitOf = async (text: string, limits: Record<string, number>) => {
      const e = await rejectionOf<ProfkitError>(read(text, limits));
      expect(isProfkitError(e)).toBe(true);
      return [e.code, e.detail.option];
    };
    expect(await limitOf(sample.repeat(3), { maxSamples: 2 })).toEqual(['PROFKIT_E_LIMIT', 'maxSamples']);
    expect(await limitOf(sample, { maxFramesPerStack: 1 })).toEqual(['PROFKIT_E_LIMIT', 'maxFramesPerStack']);
    expect(await limitOf(sample.repeat(3), { maxTotalFrames: 5 })).toEqual(['PROFKIT_E_LIMIT', 'maxTotalFrames']);
    expect(await limitOf(`a 1 1.0: cycles:\n\t1 ${'f'.repeat(100)} (/x)\n`, { maxLineLength: 50 })).toEqual(['PROFKIT_E_LIMIT', 'maxLineLength']);
    expect(await limitOf(`a 1 1.0: cycles:\n\t1 ${'f'.repeat(100)} (/x)\n`, { maxStringLength: 50 })).toEqual(['PROFKIT_E_LIMIT', 'maxStringLength']);
    // One sample type per distinct event: bounded, since each is a column of every sample.
    const events = ['e1', 'e2', 'e3'].map((e) => `a 1 1.0: ${e}:\n\t1 f (/x)\n\n`).join('');
    expect(await limitOf(events, { maxSampleTypes: 2 })).toEqual(['PROFKIT_E_LIMIT', 'maxSampleTypes']);
    expect((await read(events, { maxSampleTypes: 3 })).profile.sample_types.type).toEqual(['e1', 'e2', 'e3']);
    // Every sample stores a value for every event: 6 samples × 3 events = 18 values, checked at the
    // sample that brings them over the limit (its line), before finish() allocates the columns.
    const twoEach = ['e1', 'e1', 'e2', 'e2', 'e3', 'e3'].map((e) => `a 1 1.0: ${e}:\n\t1 f (/x)\n\n`).join('');
    const values = await rejectionOf<ProfkitError>(read(twoEach, { maxSampleValues: 17 }));
    expect([values.code, values.detail.option, values.detail.line, values.detail.limit]).toEqual(['PROFKIT_E_LIMIT', 'maxSampleValues', 16, 17]);
    expect((await read(twoEach, { maxSampleValues: 18 })).profile.samples['.values']).toHaveLength(3);
    expect((await read(sample.repeat(3), { maxSamples: 3, maxFramesPerStack: 2, maxTotalFrames: 6 })).profile.samples.value.length).toBe(3);
  });
  it('maxTableEntries: inlined frames are one stack entry each sample but lines of every new location', async () => {
    // Each sample: 3 inlined frames into a distinct outer frame = 1 frame of the stack, a new location of 4 lines.
    const inlined = (outer: number) => `a 1 1.0: cycles:\n\t1 i (inlined)\n\t1 i (inlined)\n\t1 i (inlined)\n\t${outer} f (/x)\n\n`;
    const three = [1, 2, 3].map(inlined).join('');
    const e = await rejectionOf<ProfkitError>(read(three, { maxTableEntries: 11, maxTotalFrames: 3 }));
    expect([e.code, e.detail.option, e.detail.line]).toEqual(['PROFKIT_E_LIMIT', 'maxTableEntries', 13]);
    expect((await read(three, { maxTableEntries: 12, maxTotalFrames: 3 })).profile['.inline_lines'].function_id).toHaveLength(9);
    // A location met again costs nothing more.
    expect((await read(inlined(1).repeat(3), { maxTableEntries: 4 })).profile.samples.value.length).toBe(3);
  });
  it('reads a stream cut anywhere the same as the whole text', async () => {
    const bytes = fixture('inline-dwarf-srcline.txt');
    const whole = await readPerfScriptBytes(bytes);
    const pieces = Array.from({ length: Math.ceil(bytes.length / 7) }, (_, i) => bytes.subarray(i * 7, i * 7 + 7));
    const cut = await readPerfScriptChunks(pieces);
    expect(cut.profile).toEqual(whole.profile);
  });
});

describe('detection', () => {
  const registry = createRegistry([perfAdapter]);
  it('every fixture is detected as perf-script by content', async () => {
    for (const name of ['perf-dd-stacks-01.txt', 'perf-cycles-instructions-01.txt', 'perf-java-stacks-02.txt', 'perf-js-stacks-01.txt', 'perf-funcab-pid-01.txt', 'inline-dwarf.txt', 'inline-dwarf-srcline.txt']) {
      const r = await registry.read(fixture(name), { fileName: 'input' });
      expect(r.format).toBe('perf-script');
    }
  });
  it('other text scores 0', () => {
    for (const t of ['main;f;g 12\n', 'sample.interval=20000\n"f" "g"\n', '{"nodes":[]}', 'a 1 1.0: cycles:\nnot a frame\n']) expect(sniffPerfScript(enc(t))).toBe(0);
  });
});

describe('a large input', () => {
  it('counts every sample of 4000 copies of a FlameGraph output fed one by one', async () => {
    const one = readFileSync(join(fixtures, 'perf-dd-stacks-01.txt'));
    const copies = 4000;
    const chunks = (function* () {
      for (let i = 0; i < copies; i++) yield one;
    })();
    const { profile } = await readPerfScriptChunks(chunks);
    expect(profile.samples.value.length).toBe(11 * copies);
    expect(profile.locations.location_id.length).toBe((await readPerfScriptBytes(one)).profile.locations.location_id.length);
  });
});
