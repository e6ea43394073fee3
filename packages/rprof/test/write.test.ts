import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { assertValid, createRegistry, ProfileBuilder, type Profile } from '@profkit/core/node';
import rprofAdapter, { readFoldedChunks, readRprofBytes, sniffRprof, writeFolded, writeRprofText } from '../src/index.js';
import { extCol, fixturesDir, haveShared, sharedFixture, stacks, values } from './helpers.js';

const enc = (s: string) => new TextEncoder().encode(s);
const fixture = (name: string) => readFileSync(join(fixturesDir, name));

function runsOf(p: Profile) {
  return (p['.extensions'].rprof!.facts!.runs as Record<string, unknown>[]).map(({ line: _line, ...r }) => r);
}

describe('Rprof → profile → Rprof → profile is identical in meaning', () => {
  const inputs: [string, () => Uint8Array][] = [
    ['grammar.out', () => fixture('grammar.out')],
    ['append.out', () => fixture('append.out')],
  ];
  for (const f of ['1.out', 'incomplete.out']) {
    const rel = `r-profile/inst/samples/rprof/${f}`;
    if (haveShared(rel)) inputs.push([f, () => readFileSync(sharedFixture(rel))]);
  }
  for (const [name, load] of inputs) {
    it(name, async () => {
      const a = readRprofBytes(load()).profile;
      const { text, warnings } = await writeRprofText(a);
      expect(warnings).toEqual([]);
      const b = readRprofBytes(enc(text));
      expect(b.warnings).toEqual([]);
      assertValid(b.profile);
      expect(stacks(b.profile)).toEqual(stacks(a));
      expect(values(b.profile)).toEqual(values(a));
      for (const c of ['run', 'gc', 'small', 'big', 'nodes', 'dups']) expect(extCol(b.profile, c)).toEqual(extCol(a, c));
      expect(runsOf(b.profile)).toEqual(runsOf(a));
      expect(b.profile['.profile'].period).toBe(a['.profile'].period);
      // a second generation is byte-identical
      expect((await writeRprofText(b.profile)).text).toBe(text);
    });
  }
  it.skipIf(!haveShared('r-profile/inst/samples/rprof/1.out'))('1.out is written back byte for byte (header, interleaved #File lines, numbering)', async () => {
    const src = readFileSync(sharedFixture('r-profile/inst/samples/rprof/1.out'), 'utf8');
    expect((await writeRprofText(readRprofBytes(enc(src)).profile)).text).toBe(src);
  });
  it('grammar.out is written back byte for byte except the empty line R never writes', async () => {
    const src = readFileSync(join(fixturesDir, 'grammar.out'), 'utf8');
    expect((await writeRprofText(readRprofBytes(enc(src)).profile)).text).toBe(src.replace('\n\n', '\n'));
  });
});

describe('writing profiles from elsewhere', () => {
  function foreign(): Profile {
    const b = new ProfileBuilder({
      sampleTypes: [
        { type: 'samples', unit: 'count' },
        { type: 'cpu', unit: 'nanoseconds' },
      ],
      facts: { period_type: { type: 'cpu', unit: 'nanoseconds' }, period: 10_000_000n },
    });
    const main = b.internFunction({ name: 'main', filename: 'm.go' });
    const work = b.internFunction({ name: 'work', systemName: 'pkg.work' });
    const l1 = b.internLocation({ functionId: main, line: 10 });
    const l2 = b.internLocation({ functionId: work, line: 5 });
    const l3 = b.internLocation({ address: 0x1234 });
    const l4 = b.internLocation({});
    b.addSample([l1], [3, 30_000_000]);
    b.addSample([], [1, 10_000_000]);
    b.addSample([l3, l4, l1], [1, 10_000_000]);
    b.addSample([l2, l1], [1, 10_000_000]);
    b.addSample([l1], [0, 0]);
    return b.build();
  }

  it('repeats lines by the count, uses the period as interval, says what it drops', async () => {
    const { text, warnings } = await writeRprofText(foreign());
    expect(text).toBe(
      [
        'line profiling: sample.interval=10000',
        '#File 1: m.go',
        '1#10 "main" ',
        '1#10 "main" ',
        '1#10 "main" ',
        '"0x1234" 1#10 "main" ',
        '#File 2: ',
        '2#5 "work" 1#10 "main" ',
        '',
      ].join('\n'),
    );
    expect(warnings.map((w) => w.code).sort()).toEqual(['PROFKIT_W_RPROF_FRAME_DROPPED', 'PROFKIT_W_RPROF_SAMPLE_DROPPED', 'PROFKIT_W_RPROF_SAMPLE_DROPPED']);
    // what we wrote reads back
    const back = readRprofBytes(enc(text));
    expect(back.warnings).toEqual([]);
    expect(stacks(back.profile)).toEqual([['main@m.go:10'], ['main@m.go:10'], ['main@m.go:10'], ['0x1234@:0', 'main@m.go:10'], ['work@:5', 'main@m.go:10']]);
  });

  it('without a count type derives lines from nanoseconds ÷ interval', async () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }], facts: { period_type: { type: 'cpu', unit: 'nanoseconds' }, period: 5_000_000n } });
    const f = b.internLocation({ functionId: b.internFunction({ name: 'f' }) });
    b.addSample([f], [14_000_000]);
    const { text, warnings } = await writeRprofText(b.build());
    expect(text).toBe('sample.interval=5000\n"f" \n"f" \n"f" \n');
    expect(warnings.map((w) => w.code)).toEqual(['PROFKIT_W_RPROF_DERIVED_COUNT']);
  });

  it('names that would not read back are changed, with a warning', async () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }], facts: { period_type: { type: 'cpu', unit: 'nanoseconds' }, period: 20_000_000n } });
    const bad = b.internLocation({ functionId: b.internFunction({ name: 'a" "b' }) });
    const nl = b.internLocation({ functionId: b.internFunction({ name: 'x\ny' }) });
    const ok = b.internLocation({ functionId: b.internFunction({ name: 'x[["k"]]' }) });
    b.addSample([bad, nl, ok], [1]);
    const { text, warnings } = await writeRprofText(b.build());
    expect(text).toBe('sample.interval=20000\n"a\' \'b" "x y" "x[["k"]]" \n');
    expect(warnings.map((w) => w.code)).toEqual(['PROFKIT_W_RPROF_NAME_CHANGED']);
  });

  it('refuses to write more lines than maxLines', async () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    b.addSample([b.internLocation({ functionId: b.internFunction({ name: 'f' }) })], [1n << 40n]);
    await expect(writeRprofText(b.build(), { maxLines: 1000 })).rejects.toMatchObject({ code: 'PROFKIT_E_LIMIT', detail: { option: 'maxLines' } });
  });

  it('aggregated profiles lose the memory columns: header without memory profiling, warned', async () => {
    const { profile } = readRprofBytes(fixture('grammar.out'), { aggregate: true });
    const { text, warnings } = await writeRprofText(profile);
    expect(text.split('\n')[0]).toBe('GC profiling: line profiling: sample.interval=10000');
    expect(warnings.map((w) => w.code)).toEqual(['PROFKIT_W_RPROF_MEMORY_DROPPED', 'PROFKIT_W_RPROF_SAMPLE_DROPPED']);
    const back = readRprofBytes(enc(text)).profile;
    // counts survive as repeated lines; the empty memory-only sample cannot be written
    expect(back.samples.value.length).toBe(6);
  });
});

describe('folded stacks', () => {
  it('writes root-first stacks, merges identical ones, adds <GC> leaves', () => {
    const { profile } = readRprofBytes(fixture('grammar.out'));
    const { text, warnings } = writeFolded(profile);
    // core's toFolded: lines in code-unit order of the stack text
    expect(text).toBe(['<Anonymous>;obj$m;pkg::f;my fun;x[["a"]] 1', '<GC> 1', 'g;f 2', 'g;f;<GC> 1', 'größe€;h;h;h 1', ''].join('\n'));
    expect(warnings.map((w) => w.code)).toEqual(['PROFKIT_W_FOLDED_EMPTY_STACK']);
    expect(writeFolded(profile, { sampleType: 'time', gcFrame: false }).text.split('\n')).toContain('g;f 30000000');
    expect(() => writeFolded(profile, { sampleType: 'nope' })).toThrow(expect.objectContaining({ code: 'PROFKIT_E_USAGE' }));
  });

  it('reads folded stacks back to the same stacks and values', async () => {
    const text = 'main;a;b 3\nmain;a 2\r\n\nmain;a;b 1\n';
    const { profile } = await readFoldedChunks([enc(text)]);
    assertValid(profile);
    expect(stacks(profile)).toEqual([['b@:0', 'a@:0', 'main@:0'], ['a@:0', 'main@:0'], ['b@:0', 'a@:0', 'main@:0']]);
    expect(Array.from(profile.samples.value)).toEqual([3n, 2n, 1n]);
    expect(writeFolded(profile).text).toBe('main;a 2\nmain;a;b 4\n');
  });

  it('rejects malformed folded lines with the line number', async () => {
    await expect(readFoldedChunks([enc('a;b 1\na;b\n')], { fileName: 'x.folded' })).rejects.toMatchObject({ code: 'PROFKIT_E_PARSE', detail: { file: 'x.folded', line: 2 } });
    await expect(readFoldedChunks([enc('a;;b 1\n')])).rejects.toMatchObject({ code: 'PROFKIT_E_PARSE', detail: { line: 1 } });
    await expect(readFoldedChunks([enc('a 99999999999999999999\n')])).rejects.toMatchObject({ code: 'PROFKIT_E_RANGE', detail: { line: 1 } });
  });
});

describe('adapter and registry', () => {
  it('sniffs Rprof headers and folded stacks, nothing else', () => {
    expect(sniffRprof(enc('memory profiling: line profiling: sample.interval=20000\n:1:2:3:4:'), {})).toMatchObject({ format: 'rprof' });
    expect(sniffRprof(enc('sample.interval=20000\r\n"f" '), {})).toMatchObject({ format: 'rprof' });
    expect(sniffRprof(enc('main;a;b 3\nmain;a 2\n'), {})).toMatchObject({ format: 'folded' });
    expect(sniffRprof(enc('{"traceEvents": []}'), {})).toBe(0);
    expect(sniffRprof(enc('sample.interval=abc\n'), {})).toBe(0);
  });

  it('sniffs folded stacks whose first line is longer than the sniffed head (deep stacks), and reads them', async () => {
    const deep = enc(`main;${'recurse;'.repeat(2000)}leaf 7\nmain;other 3\n`);
    const head = deep.subarray(0, 4096);
    expect(sniffRprof(head, { fileName: 'deep.folded' })).toMatchObject({ format: 'folded', score: 0.9 });
    // Unnamed, a long line with semicolons could be anything; not a frame list; an empty frame.
    expect(sniffRprof(head, {})).toBe(0);
    expect(sniffRprof(enc('x'.repeat(5000)), { fileName: 'a.folded' })).toBe(0);
    expect(sniffRprof(enc(`a;;${'b;'.repeat(3000)}`), { fileName: 'a.folded' })).toBe(0);
    const r = await createRegistry([rprofAdapter]).read(deep, { fileName: 'deep.folded' });
    expect(r.format).toBe('folded');
    expect(r.profile.samples.value.length).toBe(2);
  });

  it('reads gzip-compressed Rprof through the registry, validated, and writes both formats', async () => {
    const registry = createRegistry([rprofAdapter]);
    const bytes = fixture('grammar.out');
    const r = await registry.read(gzipSync(bytes), { fileName: 'grammar.out.gz' });
    expect(r.format).toBe('rprof');
    expect(r.gzipped).toBe(true);
    expect(stacks(r.profile)).toEqual(stacks(readRprofBytes(bytes).profile));
    const out = await registry.serialize(r.profile, { format: 'rprof' });
    const chunks: Uint8Array[] = [];
    for await (const c of out.data as AsyncIterable<Uint8Array>) chunks.push(c);
    expect(Buffer.concat(chunks).toString('utf8')).toBe(bytes.toString('utf8').replace('\n\n', '\n'));
    const folded = await registry.serialize(r.profile, { format: 'folded' });
    expect(new TextDecoder().decode(folded.data as Uint8Array)).toBe(writeFolded(r.profile).text);
    const f = await registry.read(enc('main;a;b 3\nmain;a 2\n'), { fileName: 'x.folded' });
    expect(f.format).toBe('folded');
    expect(stacks(f.profile)).toEqual([['b@:0', 'a@:0', 'main@:0'], ['a@:0', 'main@:0']]);
    const agg = await registry.read(bytes, { fileName: 'grammar.out', options: { aggregate: true } });
    // grammar.out has no two identical stacks: nothing merges, but the memory columns are gone
    expect(agg.profile.samples.value.length).toBe(7);
    expect(agg.profile['.extensions'].rprof!.facts!.aggregated).toBe(true);
    expect(extCol(agg.profile, 'small')).toBeUndefined();
  });
});
