import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { assertValid, ProfileIndex, resolveStack, validate, type ReadInput } from '@profkit/core/node';
import { readRprofBytes, readRprofChunks, readRprofInput } from '../src/index.js';
import { chunked, extCol, fixturesDir, haveShared, sharedFixture, stacks, values } from './helpers.js';

const fixture = (name: string) => readFileSync(join(fixturesDir, name));
const enc = (s: string) => new TextEncoder().encode(s);

describe('hand-written grammar fixture (memory + GC + line profiling)', () => {
  const { profile: p, warnings } = readRprofBytes(fixture('grammar.out'), { fileName: 'grammar.out' });

  it('is valid and warns about nothing', () => {
    assertValid(p, 'grammar.out');
    expect(warnings).toEqual([]);
  });

  it('reads stacks by R’s srcref rule, <GC> as a flag, memory-only lines as empty samples', () => {
    expect(stacks(p)).toEqual([
      ['f@R/a.R:3', 'g@R/a.R:9'],
      ['f@R/a.R:4', 'g@R/a.R:9'],
      [],
      ['x[["a"]]@:0', 'my fun@/abs/b c.R:7', 'pkg::f@:0', 'obj$m@:0', '<Anonymous>@:0'],
      [],
      // frames without srcref get the one file their name was seen with (bug #10 fixed)
      ['f@R/a.R:0', 'g@R/a.R:0'],
      // h is seen in two files: the srcref-less frame stays without file
      ['h@R/a.R:5', 'h@/abs/b c.R:8', 'h@:0', 'größe€@:0'],
    ]);
    expect(extCol(p, 'gc')).toEqual([0, 1, 0, 0, 1, 0, 0]);
    expect(extCol(p, 'run')).toEqual([0, 0, 0, 0, 0, 0, 0]);
  });

  it('keeps the memory columns and derives memory/bytes like summaryRprof', () => {
    expect(extCol(p, 'small')).toEqual([100, 110, 120, 130, 140, 150, 150]);
    expect(extCol(p, 'big')).toEqual([200, 200, 190, 250, 250, 250, 250]);
    expect(extCol(p, 'nodes')).toEqual([3000, 3100, 3050, 3200, 3300, 3300, 3300]);
    expect(extCol(p, 'dups')).toEqual([5, 0, 1, 2, 0, 0, 0]);
    // 8*max(0,Δsmall) + 8*max(0,Δbig) + max(0,Δnodes); first sample 0
    expect(values(p).map((v) => v[2])).toEqual([
      'memory/bytes=0',
      'memory/bytes=180',
      'memory/bytes=80',
      'memory/bytes=710',
      'memory/bytes=180',
      'memory/bytes=80',
      'memory/bytes=0',
    ]);
    expect(values(p)[0]!.slice(0, 2)).toEqual(['samples/count=1', 'time/nanoseconds=10000000']);
  });

  it('keeps header, interval and #File numbers as facts; period is the interval', () => {
    const facts = p['.extensions'].rprof!.facts!;
    expect(facts.runs).toEqual([
      { header: 'memory profiling: GC profiling: line profiling: sample.interval=10000', interval_us: 10000, memory_profiling: true, gc_profiling: true, line_profiling: true, line: 1 },
    ]);
    expect(facts.files).toEqual([
      { run: 0, number: 1, path: 'R/a.R' },
      { run: 0, number: 2, path: '/abs/b c.R' },
    ]);
    expect(p['.profile'].period_type).toEqual({ type: 'cpu', unit: 'nanoseconds' });
    expect(p['.profile'].period).toBe(10_000_000n);
    expect(p.sample_types).toEqual({ type: ['samples', 'time', 'memory'], unit: ['count', 'nanoseconds', 'bytes'] });
  });

  it('assigns ids in order of first appearance and names verbatim', () => {
    expect(p.functions.name).toEqual(['f', 'g', 'x[["a"]]', 'my fun', 'pkg::f', 'obj$m', '<Anonymous>', 'h', 'h', 'h', 'größe€']);
    // `<Anonymous>` has no system name, so that pprof does not demangle it (see names.ts)
    expect(p.functions.system_name).toEqual(p.functions.name.map((n) => (n === '<Anonymous>' ? '<?>' : n)));
    expect(Array.from(p.functions.function_id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(Array.from(p.locations.location_id)).toEqual(Array.from({ length: p.locations.location_id.length }, (_, i) => i + 1));
  });

  it('aggregate: true merges identical stacks (per GC flag) and sums values', () => {
    const text = readFileSync(join(fixturesDir, 'grammar.out'), 'utf8') + ':160:250:3300:0:1#3 "f" 1#9 "g" \n';
    const { profile: a } = readRprofBytes(enc(text), { aggregate: true });
    assertValid(a);
    expect(stacks(a)[0]).toEqual(['f@R/a.R:3', 'g@R/a.R:9']);
    expect(values(a)[0]).toEqual(['samples/count=2', 'time/nanoseconds=20000000', 'memory/bytes=80']);
    expect(a.samples.value.length).toBe(7);
    expect(extCol(a, 'small')).toBeUndefined();
    expect(a['.extensions'].rprof!.facts!.aggregated).toBe(true);
  });

  it('aggregate: true merges across appended runs, summing each run’s time', () => {
    const { profile: a } = readRprofBytes(enc('sample.interval=20000\n"f" \n"g" \nsample.interval=10000\n"f" \n'), { aggregate: true });
    expect(stacks(a)).toEqual([['f@:0'], ['g@:0']]);
    expect(values(a)).toEqual([
      ['samples/count=2', 'time/nanoseconds=30000000'],
      ['samples/count=1', 'time/nanoseconds=20000000'],
    ]);
    expect(extCol(a, 'run')).toBeUndefined();
    expect((a['.extensions'].rprof!.facts!.runs as unknown[]).length).toBe(2);
  });
});

describe('reader proof: the registry\'s read does not check again what finish() built right', () => {
  const codes = (r: ReturnType<typeof validate>) => r.problems.map((x) => x.code);

  it.each(['grammar.out', 'append.out'])('%s: proved rules hold, and only the one validation trusting "rprof" skips them', (name) => {
    const { profile: p } = readRprofBytes(fixture(name), { fileName: name });
    // What is proved holds (a validation trusting nobody checks everything: the 600 mutations of
    // robustness.test.ts do the same on damaged input).
    expect(validate(readRprofBytes(fixture(name)).profile).ok).toBe(true);
    // Broken in place after the read (what the proof cannot see): the stacks' and the locations'
    // checks are skipped by the trusted validation straight after the read...
    p.samples.locations.location_id[0] = 99999;
    p.locations.function_id[0] = 99999;
    expect(codes(validate(p, { trustReader: 'rprof' }))).toEqual([]);
    // ...and by nothing later.
    expect(codes(validate(p, { trustReader: 'rprof' }))).toEqual(['R30_LOCATION_FUNCTION_EXISTS', 'R24_SAMPLE_LOCATION_EXISTS']);
  });

  it('function names are still checked (an empty system name is not vouched for)', () => {
    const { profile: p } = readRprofBytes(fixture('grammar.out'));
    p.functions.system_name[0] = '';
    expect(codes(validate(p, { trustReader: 'rprof' }))).toEqual(['R40_FUNCTION_SYSTEM_NAME_NONEMPTY']);
  });
});

describe('appended runs (Rprof(append = TRUE), R package issue #9)', () => {
  const { profile: p, warnings } = readRprofBytes(fixture('append.out'));
  it('reads every header as a new run with its own interval and #File numbering', () => {
    assertValid(p);
    expect(warnings).toEqual([]);
    expect(stacks(p)).toEqual([
      ['f@one.R:0', 'g@one.R:0'],
      ['f@one.R:0', 'g@one.R:0'],
      ['f@one.R:2', 'g@one.R:7'],
      ['k@two.R:3'],
    ]);
    expect(extCol(p, 'run')).toEqual([0, 0, 1, 2]);
    expect(values(p).map((v) => v[1])).toEqual(['time/nanoseconds=20000000', 'time/nanoseconds=20000000', 'time/nanoseconds=5000000', 'time/nanoseconds=5000000']);
    const runs = p['.extensions'].rprof!.facts!.runs as { interval_us: number; line_profiling: boolean; line: number }[];
    expect(runs.map((r) => [r.interval_us, r.line_profiling, r.line])).toEqual([
      [20000, false, 1],
      [5000, true, 5],
      [5000, true, 8],
    ]);
    expect(p['.extensions'].rprof!.facts!.files).toEqual([
      { run: 1, number: 1, path: 'one.R' },
      { run: 2, number: 1, path: 'two.R' },
    ]);
    expect(p['.profile'].comments[0]).toMatch(/different intervals: 20000, 5000, 5000/);
  });
});

describe('runs with different flags', () => {
  it('memory and GC columns start with the first run that has them; earlier samples get 0', () => {
    const { profile: p } = readRprofBytes(enc('sample.interval=20000\n"f" \nmemory profiling: GC profiling: sample.interval=20000\n:1:2:3:4:"<GC>" "g" \n:2:2:3:0:"g" \n'));
    expect(stacks(p)).toEqual([['f@:0'], ['g@:0'], ['g@:0']]);
    expect(extCol(p, 'small')).toEqual([0, 1, 2]);
    expect(extCol(p, 'dups')).toEqual([0, 4, 0]);
    expect(extCol(p, 'gc')).toEqual([0, 1, 0]);
    expect(extCol(p, 'run')).toEqual([0, 1, 1]);
    expect(values(p).map((v) => v[2])).toEqual(['memory/bytes=0', 'memory/bytes=0', 'memory/bytes=8']);
  });
});

describe('line ends, gzip and streaming', () => {
  const inputs: [string, Uint8Array][] = [
    ['grammar.out', fixture('grammar.out')],
    ['append.out', fixture('append.out')],
  ];
  if (haveShared('r-profile/inst/samples/rprof/1.out')) inputs.push(['1.out', readFileSync(sharedFixture('r-profile/inst/samples/rprof/1.out'))]);

  for (const [name, bytes] of inputs) {
    const whole = readRprofBytes(bytes);
    const text = new TextDecoder().decode(bytes);
    for (const [eol, sep] of [
      ['CRLF', '\r\n'],
      ['CR', '\r'],
    ] as const) {
      it(`${name}: ${eol} line ends read like LF`, () => {
        expect(readRprofBytes(enc(text.replace(/\n/g, sep)))).toEqual(whole);
      });
    }
    it(`${name}: a UTF-8 byte order mark is ignored`, () => {
      expect(readRprofBytes(enc('\uFEFF' + text))).toEqual(whole);
    });
    it(`${name}: gzip input reads like plain`, () => {
      expect(readRprofBytes(gzipSync(bytes))).toEqual(whole);
    });
    it(`${name}: streaming with chunk boundaries anywhere (inside lines, UTF-8 sequences, CRLF) equals the whole-buffer read`, async () => {
      const crlf = enc(text.replace(/\n/g, '\r\n'));
      const wholeCrlf = readRprofBytes(crlf);
      expect(wholeCrlf).toEqual(whole);
      for (const size of [1, 2, 3, 5, 7, 64, 4096]) {
        expect(await readRprofChunks(chunked(bytes, size))).toEqual(whole);
        expect(await readRprofChunks(chunked(crlf, size))).toEqual(whole);
      }
    });
  }

  it('reads through the adapter ReadInput (streaming chunks)', async () => {
    const bytes = fixture('grammar.out');
    const input: ReadInput = {
      fileName: 'grammar.out',
      gzipped: false,
      bytes: async () => bytes,
      chunks: () => chunked(bytes, 10) as unknown as AsyncIterable<Uint8Array>,
    };
    const r = await readRprofInput(input);
    expect(r).toEqual(readRprofBytes(bytes, { fileName: 'grammar.out' }));
  });
});

describe('conformance with the R package on its own samples', () => {
  const cases: [string, string, number][] = [
    ['1.out', 'read_rprof-1.out.json', 0],
    ['incomplete.out', 'read_rprof-incomplete.out.json', 1],
  ];
  for (const [file, derived, nWarnings] of cases) {
    const src = `r-profile/inst/samples/rprof/${file}`;
    const ref = `r-profile/derived/${derived}`;
    describe.skipIf(!haveShared(src) || !haveShared(ref))(file, () => {
      it('reads the same stacks (names, lines; files where R has one) as read_rprof', () => {
        const { profile: p, warnings } = readRprofBytes(readFileSync(sharedFixture(src)), { fileName: file });
        assertValid(p, file);
        expect(warnings.length).toBe(nWarnings);
        const r = JSON.parse(readFileSync(sharedFixture(ref), 'utf8')) as {
          samples: { value: number; locations: number[] }[];
          locations: { location_id: number; function_id: number; line: number }[];
          functions: { function_id: number; system_name: string; filename: string }[];
        };
        const loc = new Map(r.locations.map((l) => [l.location_id, l]));
        const fn = new Map(r.functions.map((f) => [f.function_id, f]));
        const index = new ProfileIndex(p);
        expect(p.samples.value.length).toBe(r.samples.length);
        let resolved = 0;
        r.samples.forEach((s, i) => {
          const ours = resolveStack(p, i, index);
          const theirs = s.locations.map((id) => {
            const l = loc.get(id)!;
            const f = fn.get(l.function_id)!;
            return { name: f.system_name, filename: f.filename, line: l.line };
          });
          expect(ours.map((f) => `${f.name}:${f.line}`)).toEqual(theirs.map((f) => `${f.name}:${f.line}`));
          ours.forEach((f, k) => {
            const t = theirs[k]!;
            // R gives srcref-less frames no file (bug #10); ours may carry the function's file.
            if (t.filename !== '') expect(f.filename).toBe(t.filename);
            else if (f.filename !== '') resolved++;
          });
          expect(Number(p.samples.value[i])).toBe(s.value);
        });
        expect(resolved).toBeGreaterThan(0);
        // R's identity (name, file) splits functions; ours merges the srcref-less frames.
        expect(p.functions.function_id.length).toBeLessThan(r.functions.length);
      });
    });
  }
  it.skipIf(!haveShared('r-profile/inst/samples/rprof/incomplete.out'))('incomplete.out: warns once, names the first cut-off line, keeps the rest of each stack', () => {
    const { profile: p, warnings } = readRprofBytes(readFileSync(sharedFixture('r-profile/inst/samples/rprof/incomplete.out')), { fileName: 'incomplete.out' });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.code).toBe('PROFKIT_W_RPROF_TRUNCATED');
    expect(warnings[0]!.detail).toMatchObject({ file: 'incomplete.out', line: 7, lines: 16 });
    const lengths = stacks(p).map((s) => s.length);
    expect(new Set(lengths)).toEqual(new Set([50, 49]));
  });
  it.skipIf(!haveShared('r-profile/inst/samples/rprof/1.out') || !haveShared('r-profile/derived/write_rprof-1.out.out'))(
    'reads what the R package’s write_rprof wrote (all #File lines first, renumbered) to the same stacks',
    () => {
      const a = stacks(readRprofBytes(readFileSync(sharedFixture('r-profile/inst/samples/rprof/1.out'))).profile);
      const { profile, warnings } = readRprofBytes(readFileSync(sharedFixture('r-profile/derived/write_rprof-1.out.out')));
      expect(warnings).toEqual([]);
      expect(stacks(profile)).toEqual(a);
    },
  );
  it.skipIf(!haveShared('r-profile/inst/samples/rprof/1.out'))('resolveFiles: false reproduces R’s function identity (name, file)', () => {
    const { profile: p } = readRprofBytes(readFileSync(sharedFixture('r-profile/inst/samples/rprof/1.out')), { resolveFiles: false });
    expect(p.functions.function_id.length).toBe(89);
    expect(p.locations.location_id.length).toBe(100);
  });
});

describe('errors name file, line and rule', () => {
  const cases: [string, string, string, number][] = [
    ['no header', '"f" "g" \n', 'PROFKIT_E_PARSE', 1],
    ['garbage token', 'sample.interval=20000\n"f" garbage\n', 'PROFKIT_E_PARSE', 2],
    ['srcref to an undeclared file', 'line profiling: sample.interval=20000\n1#2 "f" \n', 'PROFKIT_E_PARSE', 2],
    ['srcref to a file of an earlier run', 'line profiling: sample.interval=20000\n#File 1: a.R\n1#2 "f" \nline profiling: sample.interval=20000\n1#2 "f" \n', 'PROFKIT_E_PARSE', 5],
    ['memory prefix without memory profiling', 'sample.interval=20000\n:1:2:3:4:"f" \n', 'PROFKIT_E_PARSE', 2],
    ['missing memory prefix', 'memory profiling: sample.interval=20000\n:1:2:3:4:"f" \n"f" \n', 'PROFKIT_E_PARSE', 3],
    ['malformed memory prefix', 'memory profiling: sample.interval=20000\n:1:x:3:4:"f" \n', 'PROFKIT_E_PARSE', 2],
    ['malformed #File line', 'line profiling: sample.interval=20000\n#File x: a.R\n', 'PROFKIT_E_PARSE', 2],
    ['zero interval', 'sample.interval=0\n"f" \n', 'PROFKIT_E_PARSE', 1],
    ['two srcrefs in a row', 'line profiling: sample.interval=20000\n#File 1: a.R\n1#2 1#3 "f" \n', 'PROFKIT_E_PARSE', 3],
    ['empty name', 'sample.interval=20000\n"" "f" \n', 'PROFKIT_E_PARSE', 2],
    ['file number 0', 'line profiling: sample.interval=20000\n#File 1: a.R\n0#3 "f" \n', 'PROFKIT_E_PARSE', 3],
    ['line number beyond 2^53', 'line profiling: sample.interval=20000\n#File 1: a.R\n1#99999999999999999999 "f" \n', 'PROFKIT_E_PARSE', 3],
  ];
  for (const [what, text, code, line] of cases) {
    it(what, async () => {
      let err: unknown;
      try {
        readRprofBytes(enc(text), { fileName: 'bad.out' });
      } catch (e) {
        err = e;
      }
      expect(err).toMatchObject({ code, detail: { file: 'bad.out', line } });
      expect((err as { detail: { rule?: string } }).detail.rule).toBeTruthy();
      // The streaming path fails the same way.
      await expect(readRprofChunks(chunked(enc(text), 3), { fileName: 'bad.out' })).rejects.toMatchObject({ code, detail: { line } });
    });
  }
  it('empty input', () => {
    expect(() => readRprofBytes(new Uint8Array(0), { fileName: 'e.out' })).toThrow(expect.objectContaining({ code: 'PROFKIT_E_EMPTY_INPUT' }));
  });
  it('a line longer than maxLineLength', () => {
    const text = 'sample.interval=20000\n' + '"f" '.repeat(1000) + '\n';
    expect(() => readRprofBytes(enc(text), { maxLineLength: 100 })).toThrow(expect.objectContaining({ code: 'PROFKIT_E_LIMIT', detail: expect.objectContaining({ line: 2, option: 'maxLineLength' }) }));
  });
  it('corrupt gzip', () => {
    const gz = gzipSync(enc('sample.interval=20000\n"f" \n'));
    gz[gz.length - 6] ^= 0xff;
    expect(() => readRprofBytes(gz, { fileName: 'x.out.gz' })).toThrow(expect.objectContaining({ code: 'PROFKIT_E_DECOMPRESS' }));
  });
});

describe('truncated frames warn instead of failing', () => {
  const cases: [string, string[]][] = [
    ['sample.interval=20000\n"f" "g" "ev\n', ['f@:0', 'g@:0']],
    ['sample.interval=20000\n"f" "g" "eval"\n', ['f@:0', 'g@:0']],
    ['line profiling: sample.interval=20000\n#File 1: a.R\n"f" 1#4 "g" 1#5\n', ['f@:0', 'g@a.R:4']],
    ['line profiling: sample.interval=20000\n#File 1: a.R\n"f" 1#4 "g" 1#\n', ['f@:0', 'g@a.R:4']],
    ['line profiling: sample.interval=20000\n#File 1: a.R\n"f" 1#4 "g" 1#9 \n', ['f@:0', 'g@a.R:4']],
  ];
  for (const [text, stack] of cases) {
    it(JSON.stringify(text.split('\n').at(-2)), () => {
      const { profile: p, warnings } = readRprofBytes(enc(text));
      expect(stacks(p)).toEqual([stack]);
      expect(warnings.map((w) => w.code)).toEqual(['PROFKIT_W_RPROF_TRUNCATED']);
    });
  }
  it('a memory prefix cut off at the end of the file drops that sample', () => {
    const { profile: p, warnings } = readRprofBytes(enc('memory profiling: sample.interval=20000\n:1:2:3:4:"f" \n:1:2:3'));
    expect(stacks(p)).toEqual([['f@:0']]);
    expect(warnings).toHaveLength(1);
  });
});
