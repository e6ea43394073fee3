/**
 * Local symbolization of real binaries compiled here (gcc -g): PIE and non-PIE executables, a
 * shared library, an always_inline function at -O2, and C++ for demangling. Expected names come
 * from the sources, lines from addr2line run directly and from MARK comments in the sources.
 */

import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProfileBuilder, ProfileIndex, assertValid, locationRow, resolveStack, type Profile } from '@profkit/core/node';
import { symbolize, type SymbolizeOptions } from '../src/index.js';
import { C_DIR, addr2lineOracle, compile, execMapping, haveTool, markers, nmSymbols, readelfBuildId, tmp } from './helpers.js';
import { rmSync } from 'node:fs';

const haveGcc = haveTool('gcc', 'gcc') && haveTool('addr2line', 'binutils');
const haveGxx = haveTool('g++', 'g++');
const haveLlvm = haveTool('llvm-symbolizer', 'llvm');

const PROG = join(C_DIR, 'prog.c');
const SHARED = join(C_DIR, 'shared.c');
const WIDGET = join(C_DIR, 'widget.cc');

let work = '';
let pie = '';
let nopie = '';
let lib = '';
let cxx = '';
const marks = markers(PROG);
const sharedMarks = markers(SHARED);

beforeAll(() => {
  if (!haveGcc) return;
  work = tmp();
  pie = join(work, 'prog-pie');
  nopie = join(work, 'prog-nopie');
  lib = join(work, 'libshared.so');
  compile('gcc', ['-g', '-O2', '-fPIE', '-pie', '-o', pie, PROG]);
  compile('gcc', ['-g', '-O2', '-fno-pie', '-no-pie', '-o', nopie, PROG]);
  compile('gcc', ['-g', '-O1', '-fPIC', '-shared', '-o', lib, SHARED]);
  if (haveGxx) {
    cxx = join(work, 'widget');
    compile('g++', ['-g', '-O1', '-o', cxx, WIDGET]);
  }
});
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

/** An address inside `fn` whose addr2line answer has an inline frame of `inlined`. */
function inlinedAddress(bin: string, fn: string, inlined: string): bigint {
  const s = nmSymbols(bin).get(fn)!;
  for (let o = 0n; o < s.size; o++) {
    const fr = addr2lineOracle(bin, s.addr + o);
    if (fr.length === 2 && fr[0]!.func === inlined && fr[1]!.func === fn) return s.addr + o;
  }
  throw new Error(`no address of ${fn} in ${bin} has ${inlined} inlined`);
}

interface Built {
  profile: Profile;
  /** link-time addresses of the sampled frames, per sample (leaf first) */
  stacks: bigint[][];
}

/** A profile with one mapping (the binary's executable segment at `bias`) and given stacks. */
function profileFor(bin: string, bias: bigint, stacks: bigint[][], opts: { filename?: string; buildId?: string } = {}): Built {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
  const m = execMapping(bin, bias);
  const mid = b.internMapping({ memoryStart: m.start, memoryLimit: m.limit, fileOffset: m.offset, filename: opts.filename ?? bin, buildId: opts.buildId ?? readelfBuildId(bin) });
  for (const st of stacks) b.addSample(st.map((a) => b.internLocation({ address: m.runtime(a), mappingId: mid })), [1]);
  return { profile: b.build(), stacks };
}

const PIE_BIAS = 0x555555554000n;

function frameSummary(p: Profile, sample: number) {
  return resolveStack(p, sample, new ProfileIndex(p)).map((f) => ({ name: f.name, file: f.filename, line: f.line, symbolized: f.symbolized }));
}

const tools: { name: string; opts: SymbolizeOptions; enabled: () => boolean }[] = [
  { name: 'llvm-symbolizer', opts: { tool: 'llvm-symbolizer' }, enabled: () => haveLlvm },
  { name: 'addr2line', opts: { tool: 'addr2line' }, enabled: () => true },
];

describe.skipIf(!haveGcc)('local symbolization of compiled binaries', () => {
  for (const t of tools) {
    describe.skipIf(!t.enabled())(`with ${t.name}`, () => {
      for (const kind of ['PIE', 'non-PIE'] as const) {
        it(`${kind}: names, files, lines and inline frames match the sources and addr2line`, async () => {
          const bin = kind === 'PIE' ? pie : nopie;
          const bias = kind === 'PIE' ? PIE_BIAS : 0n;
          const syms = nmSymbols(bin);
          const leaf = syms.get('leaf_fn')!.addr + 4n;
          const inl = inlinedAddress(bin, 'mid_fn', 'inl_helper');
          const main = syms.get('main')!.addr + 1n;
          const { profile } = profileFor(bin, bias, [[leaf, inl, main], [inl, main]]);
          const { profile: out, reports } = await symbolize(profile, { ...t.opts, searchPath: [] });
          assertValid(out);
          expect(reports).toHaveLength(1);
          expect(reports[0]!.status).toBe('symbolized');
          expect(reports[0]!.tool).toBe(t.name);
          expect(reports[0]!.symbolized).toBe(3);
          const got = frameSummary(out, 0);
          // names from the source; inlined helper first, then the function it was inlined into
          expect(got.map((f) => f.name).slice(0, 4)).toEqual(['leaf_fn', 'inl_helper', 'mid_fn', 'main']);
          for (const f of got) expect(f.file).toBe(PROG);
          // lines: as addr2line says for the same link-time addresses
          const oracle = [leaf, inl, main].flatMap((a) => addr2lineOracle(bin, a));
          expect(got.map((f) => [f.name, f.line])).toEqual(oracle.map((f) => [f.func, f.line]));
          // and within the functions' source ranges (MARK comments)
          expect(got[0]!.line).toBeGreaterThanOrEqual(marks.get('leaf_start')!);
          expect(got[0]!.line).toBeLessThanOrEqual(marks.get('leaf_loop')! + 1);
          expect([marks.get('inl_body'), marks.get('inl_body2'), marks.get('inl_body2')! + 1]).toContain(got[1]!.line);
          expect(got[2]!.line).toBe(marks.get('mid_call_inl'));
          // the inline frame lives in .inline_lines
          const idx = new ProfileIndex(out);
          const inlRow = locationRow(out, idx.locations.get(out.samples.locations.location_id[1]!));
          expect(inlRow.lines).toHaveLength(2);
          const m = out['.mappings'];
          expect([m.has_functions[0], m.has_filenames[0], m.has_line_numbers[0], m.has_inline_frames[0]]).toEqual([1, 1, 1, 1]);
          // the input profile is untouched
          expect(profile.locations.function_id.every((x) => x === 0)).toBe(true);
          expect(profile['.mappings'].has_functions[0]).toBe(0);
        });
      }

      it('shared library mapped at a random address: names and lines', async () => {
        const bias = 0x7f1234500000n;
        const syms = nmSymbols(lib);
        const a = syms.get('shared_fn')!.addr + 6n;
        const c = syms.get('shared_other')!.addr + 4n;
        const { profile } = profileFor(lib, bias, [[a, c]]);
        const { profile: out, reports } = await symbolize(profile, { ...t.opts, searchPath: [] });
        expect(reports[0]!.status).toBe('symbolized');
        const got = frameSummary(out, 0);
        expect(got.map((f) => f.name)).toEqual(['shared_fn', 'shared_other']);
        expect(got.map((f) => f.line)).toEqual([a, c].flatMap((x) => addr2lineOracle(lib, x)).map((f) => f.line));
        expect(got[0]!.line).toBeGreaterThanOrEqual(sharedMarks.get('shared_start')!);
        expect(got[0]!.line).toBeLessThanOrEqual(sharedMarks.get('shared_loop')!);
        for (const f of got) expect(f.file).toBe(SHARED);
      });
    });
  }

  it('names mode (nm): function names only, no files or lines; flags say so', async () => {
    const syms = nmSymbols(pie);
    const leaf = syms.get('leaf_fn')!.addr + 4n;
    const inl = inlinedAddress(pie, 'mid_fn', 'inl_helper');
    const { profile } = profileFor(pie, PIE_BIAS, [[leaf, inl]]);
    const { profile: out, reports } = await symbolize(profile, { mode: 'names', searchPath: [] });
    assertValid(out);
    expect(reports[0]!.tool).toBe('nm');
    expect(frameSummary(out, 0)).toEqual([
      { name: 'leaf_fn', file: '', line: 0, symbolized: true },
      { name: 'mid_fn', file: '', line: 0, symbolized: true },
    ]);
    const m = out['.mappings'];
    expect([m.has_functions[0], m.has_filenames[0], m.has_line_numbers[0], m.has_inline_frames[0]]).toEqual([1, 0, 0, 0]);
  });

  it('a build-id mismatch is reported with a hint and leaves the addresses alone', async () => {
    const syms = nmSymbols(pie);
    const wrong = 'ab' + readelfBuildId(pie).slice(2).split('').reverse().join('');
    const { profile } = profileFor(pie, PIE_BIAS, [[syms.get('leaf_fn')!.addr]], { buildId: wrong });
    const { profile: out, reports } = await symbolize(profile, { searchPath: [] });
    expect(reports[0]!.status).toBe('build-id-mismatch');
    expect(reports[0]!.message).toContain(wrong);
    expect(reports[0]!.message).toContain(readelfBuildId(pie));
    expect(reports[0]!.hint).toMatch(/--binary|--search-path/);
    expect(out.locations.function_id[0]).toBe(0);
    expect(frameSummary(out, 0)[0]!.symbolized).toBe(false);
    expect(out['.mappings'].has_functions[0]).toBe(0);
  });

  it('--binary with the wrong build id is refused, not used', async () => {
    const { profile } = profileFor(pie, PIE_BIAS, [[nmSymbols(pie).get('leaf_fn')!.addr]]);
    const { reports, profile: out } = await symbolize(profile, { binary: nopie, searchPath: [] });
    expect(reports[0]!.status).toBe('build-id-mismatch');
    expect(reports[0]!.binary).toBe(nopie);
    expect(out.locations.function_id[0]).toBe(0);
  });

  it('a missing binary is reported per mapping with a PPROF_BINARY_PATH hint', async () => {
    const { profile } = profileFor(pie, PIE_BIAS, [[nmSymbols(pie).get('leaf_fn')!.addr]], { filename: '/nonexistent/dir/prog-pie' });
    const { reports, profile: out } = await symbolize(profile, { searchPath: [join(work, 'empty')] });
    expect(reports[0]!.status).toBe('missing-binary');
    expect(reports[0]!.message).toContain('/nonexistent/dir/prog-pie');
    expect(reports[0]!.hint).toContain('PPROF_BINARY_PATH');
    expect(out.locations.function_id[0]).toBe(0);
  });

  describe('search path layouts', () => {
    const layouts: [string, (dir: string, id: string) => string][] = [
      ['<dir>/<id[0:2]>/<id[2:]>.debug', (d, id) => join(d, id.slice(0, 2), id.slice(2) + '.debug')],
      ['<dir>/.build-id/<id[0:2]>/<id[2:]>.debug', (d, id) => join(d, '.build-id', id.slice(0, 2), id.slice(2) + '.debug')],
      ['<dir>/<buildid>/<basename>', (d, id) => join(d, id, 'prog-pie')],
      ['<dir>/<buildid>/<any file>', (d, id) => join(d, id, 'whatever')],
      ['<dir>/<basename>', (d) => join(d, 'prog-pie')],
    ];
    layouts.forEach(([name, place], k) => {
      it(`finds the binary at ${name}`, async () => {
        const dir = join(work, `sp${k}`);
        const id = readelfBuildId(pie);
        const target = place(dir, id);
        mkdirSync(join(target, '..'), { recursive: true });
        copyFileSync(pie, target);
        const { profile } = profileFor(pie, PIE_BIAS, [[nmSymbols(pie).get('leaf_fn')!.addr + 4n]], { filename: '/gone/bin/prog-pie' });
        const { reports, profile: out } = await symbolize(profile, { searchPath: [join(work, 'nothing-here'), dir], tool: 'addr2line' });
        expect(reports[0]!.status).toBe('symbolized');
        expect(reports[0]!.binary).toBe(target);
        expect(frameSummary(out, 0)[0]!.name).toBe('leaf_fn');
        // the environment variable works the same way
        const viaEnv = await symbolize(profile, { env: { PPROF_BINARY_PATH: dir }, tool: 'addr2line' });
        expect(viaEnv.reports[0]!.binary).toBe(target);
      });
    });
  });

  it('a profile without mappings gets a fake mapping for --binary (non-PIE)', async () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const syms = nmSymbols(nopie);
    b.addSample([b.internLocation({ address: syms.get('leaf_fn')!.addr + 4n }), b.internLocation({ address: syms.get('main')!.addr + 1n })], [1]);
    const { profile: out, reports } = await symbolize(b.build(), { binary: nopie, tool: 'addr2line' });
    assertValid(out);
    expect(reports[0]!.status).toBe('symbolized');
    expect(frameSummary(out, 0).map((f) => f.name)).toEqual(['leaf_fn', 'main']);
  });

  // pprof (internal/driver locateBinaries): "Assumes the executable is the first Mapping entry"
  // and sets p.Mapping[0].File = execName, whether or not symbolization then succeeds.
  it('--binary becomes the first mapping\'s file, as pprof\'s command-line binary; other mappings keep theirs', async () => {
    const syms = nmSymbols(nopie);
    const m = execMapping(nopie, 0n);
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const main = b.internMapping({ memoryStart: m.start, memoryLimit: m.limit, fileOffset: m.offset, filename: '' });
    const other = b.internMapping({ memoryStart: 0x7f0000000000n, memoryLimit: 0x7f0000001000n, fileOffset: 0n, filename: '/nonexistent/libother.so' });
    b.addSample([b.internLocation({ address: syms.get('leaf_fn')!.addr + 4n, mappingId: main }), b.internLocation({ address: 0x7f0000000100n, mappingId: other })], [1]);
    const profile = b.build();
    const renamed = join(work, 'renamed-prog');
    copyFileSync(nopie, renamed);
    const { profile: out, reports } = await symbolize(profile, { binary: renamed, tool: 'addr2line', searchPath: [] });
    assertValid(out);
    expect(out['.mappings'].filename).toEqual([renamed, '/nonexistent/libother.so']);
    expect(reports[0]!.status).toBe('symbolized');
    expect(frameSummary(out, 0)[0]!.name).toBe('leaf_fn');
    // the input is not changed
    expect(profile['.mappings'].filename).toEqual(['', '/nonexistent/libother.so']);
    // also when the binary cannot be used (pprof renames before it symbolizes)
    const missing = await symbolize(profile, { binary: join(work, 'no-such-prog'), searchPath: [] });
    expect(missing.reports[0]!.status).toBe('bad-binary'); // --binary names a file that cannot be read
    expect(missing.profile['.mappings'].filename[0]).toBe(join(work, 'no-such-prog'));
  });

  it('already symbolized locations are kept; --force redoes them', async () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const m = execMapping(nopie, 0n);
    const mid = b.internMapping({ memoryStart: m.start, memoryLimit: m.limit, fileOffset: m.offset, filename: nopie, hasFunctions: true });
    const fn = b.internFunction({ name: 'given_name' });
    const syms = nmSymbols(nopie);
    b.addSample([b.internLocation({ address: syms.get('leaf_fn')!.addr + 4n, mappingId: mid, functionId: fn }), b.internLocation({ address: syms.get('main')!.addr + 1n, mappingId: mid })], [1]);
    const p = b.build();
    const once = await symbolize(p, { tool: 'addr2line', searchPath: [] });
    expect(frameSummary(once.profile, 0).map((f) => f.name)).toEqual(['given_name', 'main']);
    const forced = await symbolize(p, { tool: 'addr2line', searchPath: [], force: true });
    expect(frameSummary(forced.profile, 0).map((f) => f.name)).toEqual(['leaf_fn', 'main']);
  });

  it('unsymbolizable mappings ([vdso], anonymous) are reported and skipped', async () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const m1 = b.internMapping({ memoryStart: 0x7fff0000n, memoryLimit: 0x7fff2000n, filename: '[vdso]' });
    const m2 = b.internMapping({ memoryStart: 0x10000n, memoryLimit: 0x20000n, filename: '' });
    b.addSample([b.internLocation({ address: 0x7fff0100n, mappingId: m1 }), b.internLocation({ address: 0x10100n, mappingId: m2 })], [1]);
    const { reports } = await symbolize(b.build(), { searchPath: [] });
    expect(reports.map((r) => r.status)).toEqual(['unsymbolizable', 'unsymbolizable']);
  });

  describe.skipIf(!haveGxx)('C++ demangling', () => {
    const cases: [string, string, string][] = [
      ['default', 'ns::Widget::compute', 'ns::twice'],
      ['templates', 'ns::Widget::compute', 'ns::twice<long>'],
      ['full', 'ns::Widget::compute(int) const', 'long ns::twice<long>(long)'],
    ];
    for (const [mode, compute, twice] of cases) {
      it(`demangle=${mode}: ${compute}, ${twice}; system names stay mangled`, async () => {
        const syms = nmSymbols(cxx);
        const c = syms.get('_ZNK2ns6Widget7computeEi')!.addr;
        const t = syms.get('_ZN2ns5twiceIlEET_S1_')!.addr;
        const { profile } = profileFor(cxx, PIE_BIAS, [[c, t]]);
        const { profile: out } = await symbolize(profile, { demangle: mode as 'default', searchPath: [] });
        const fr = resolveStack(out, 0);
        expect(fr.map((f) => f.name)).toEqual([compute, twice]);
        expect(fr.map((f) => f.systemName)).toEqual(['_ZNK2ns6Widget7computeEi', '_ZN2ns5twiceIlEET_S1_']);
        expect(fr[0]!.filename).toBe(WIDGET);
        expect(fr[0]!.line).toBe(addr2lineOracle(cxx, c)[0]!.line);
      });
    }
    it('demangle=none keeps mangled names', async () => {
      const c = nmSymbols(cxx).get('_ZNK2ns6Widget7computeEi')!.addr;
      const { profile } = profileFor(cxx, PIE_BIAS, [[c]]);
      const { profile: out } = await symbolize(profile, { demangle: 'none', searchPath: [] });
      expect(resolveStack(out, 0)[0]!.name).toBe('_ZNK2ns6Widget7computeEi');
    });
  });
});

describe('option checks', () => {
  const p = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] }).build();
  const bad: [string, SymbolizeOptions][] = [
    ['mode', { mode: 'fast' as 'full' }],
    ['tool', { tool: 'gdb' as 'auto' }],
    ['demangle', { demangle: 'pretty' as 'full' }],
    ['batchSize', { batchSize: 0 }],
    ['timeoutMs', { timeoutMs: -1 }],
  ];
  for (const [option, opts] of bad) {
    it(`a bad ${option} is PROFKIT_E_USAGE naming the option`, async () => {
      await expect(symbolize(p, opts)).rejects.toMatchObject({ code: 'PROFKIT_E_USAGE', detail: { option } });
    });
  }
});
