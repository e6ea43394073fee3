/**
 * Mappings that carry a build id but no file name (Fuchsia's sampler, embedded profilers) are
 * looked up by build id alone: `<dir>/.build-id/xx/rest.debug` (GDB), `<dir>/xx/rest.debug`
 * (LLVM) and `<dir>/<buildid>/<any file>`. google/pprof treats an empty file name as
 * unsymbolizable; we deliberately differ when a build id exists (docs/symbolization.md).
 *
 * The binary is compiled here with `gcc -g -Wl,--build-id=sha1`; its build id is read with our
 * ELF reader (and checked against `readelf -n`); mappings are laid out as the fuchsia-sampler
 * adapter produces them (`memory_start` = segment start, `file_offset` = the segment's relative
 * (link-time) address, no file name). Expected names and lines come from `addr2line` run on the
 * binary directly.
 */

import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProfileBuilder, ProfileIndex, assertValid, resolveStack, type Profile } from '@profkit/core/node';
import { haveCli as cliBuilt, runCli } from '@profkit/test-utils';
import { readElf, symbolize, unsymbolizableReason } from '../src/index.js';
import { C_DIR, addr2lineOracle, compile, haveTool, loadSegments, nmSymbols, readelfBuildId, tmp } from './helpers.js';

const haveGcc = haveTool('gcc', 'gcc') && haveTool('addr2line', 'binutils') && haveTool('readelf', 'binutils');
const haveCli = cliBuilt('symbolize build-id CLI tests');

const PROG = join(C_DIR, 'prog.c');
/** Where the "device" loaded the executable segment (page aligned, as a loader would). */
const SEGMENT_START = 0x2a5c3f7000n;

let work = '';
let bin = '';
let buildId = '';
/** The executable segment: link-time address and size (what Fuchsia's module map reports). */
let seg = { vaddr: 0n, memsz: 0n };
/** Link-time addresses of the frames sampled (leaf first). */
let stack: bigint[] = [];

beforeAll(() => {
  if (!haveGcc) return;
  work = tmp('profkit-symbolize-buildid-');
  bin = join(work, 'prog');
  compile('gcc', ['-g', '-O2', '-fPIE', '-pie', '-Wl,--build-id=sha1', '-o', bin, PROG]);
  buildId = readElf(bin).buildId;
  const x = loadSegments(bin).find((s) => s.flags.includes('E'))!;
  seg = { vaddr: x.vaddr, memsz: x.memsz };
  const syms = nmSymbols(bin);
  stack = [syms.get('leaf_fn')!.addr + 4n, syms.get('mid_fn')!.addr + 8n, syms.get('main')!.addr + 1n];
});
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

const runtime = (linkAddr: bigint) => SEGMENT_START + (linkAddr - seg.vaddr);

/** A fuchsia-style profile: one mapping with a build id and no file name. */
function fuchsiaStyleProfile(id: string): Profile {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'allocated_space', unit: 'bytes' }] });
  const mid = b.internMapping({ memoryStart: SEGMENT_START, memoryLimit: SEGMENT_START + seg.memsz, fileOffset: seg.vaddr, filename: '', buildId: id });
  b.addSample(stack.map((a) => b.internLocation({ address: runtime(a), mappingId: mid })), [4096]);
  return b.build();
}

/** Places the binary in a fresh search directory under `rel(buildId)`; returns the directory. */
function place(name: string, rel: (id: string) => string): string {
  const dir = join(work, name);
  const dest = join(dir, rel(buildId));
  mkdirSync(join(dest, '..'), { recursive: true });
  copyFileSync(bin, dest);
  return dir;
}

/** The build-id layouts of a search directory. */
const layouts: [string, (id: string) => string][] = [
  ['GDB .build-id/xx/rest.debug', (id) => join('.build-id', id.slice(0, 2), id.slice(2) + '.debug')],
  ['LLVM xx/rest.debug', (id) => join(id.slice(0, 2), id.slice(2) + '.debug')],
  ['<buildid>/<any file>', (id) => join(id, 'whatever-name')],
];

describe.skipIf(!haveGcc)('mappings with a build id and no file name', () => {
  it('our ELF reader reads the build id readelf shows (sha1: 20 bytes)', () => {
    expect(buildId).toMatch(/^[0-9a-f]{40}$/);
    expect(buildId).toBe(readelfBuildId(bin));
  });

  for (const [name, rel] of layouts) {
    it(`found by build id in the ${name} layout; names and lines match addr2line`, async () => {
      const dir = place(name.replace(/\W+/g, '-'), rel);
      const profile = fuchsiaStyleProfile(buildId.toUpperCase());
      const { profile: out, reports } = await symbolize(profile, { searchPath: [dir], tool: 'addr2line' });
      assertValid(out);
      expect(reports).toHaveLength(1);
      expect(reports[0]).toMatchObject({ status: 'symbolized', binary: join(dir, rel(buildId)), binaryBuildId: buildId, addresses: 3, symbolized: 3, base: SEGMENT_START - seg.vaddr });
      expect(reports[0]!.message).toContain(`build id ${buildId} verified`);
      const got = resolveStack(out, 0, new ProfileIndex(out)).map((f) => [f.name, f.filename, f.line]);
      const oracle = stack.flatMap((a) => addr2lineOracle(bin, a)).map((f) => [f.func, f.file, f.line]);
      expect(got).toEqual(oracle);
      expect(got.map((f) => f[0])).toContain('leaf_fn');
      expect(got.map((f) => f[0])).toContain('main');
      // the profile keeps its (empty) file name: the located binary is only in the report
      expect(out['.mappings'].filename[0]).toBe('');
      expect(out['.mappings'].has_functions[0]).toBe(1);
    });
  }

  it('llvm-symbolizer gives the same names and lines, when installed', async (ctx) => {
    if (!haveTool('llvm-symbolizer', 'llvm')) return ctx.skip();
    const dir = place('llvm-run', layouts[0]![1]);
    const { profile: out, reports } = await symbolize(fuchsiaStyleProfile(buildId), { searchPath: [dir], tool: 'llvm-symbolizer' });
    expect(reports[0]).toMatchObject({ status: 'symbolized', tool: 'llvm-symbolizer', symbolized: 3 });
    const got = resolveStack(out, 0, new ProfileIndex(out)).map((f) => [f.name, f.line]);
    expect(got).toEqual(stack.flatMap((a) => addr2lineOracle(bin, a)).map((f) => [f.func, f.line]));
  });

  it('a file with another build id in the layout is rejected as a mismatch', async () => {
    const other = join(work, 'other');
    compile('gcc', ['-g', '-O0', '-fPIE', '-pie', '-Wl,--build-id=sha1', '-o', other, PROG]);
    const otherId = readElf(other).buildId;
    expect(otherId).not.toBe(buildId);
    const dir = join(work, 'mismatch');
    mkdirSync(join(dir, buildId), { recursive: true });
    copyFileSync(other, join(dir, buildId, 'prog'));
    const { profile: out, reports } = await symbolize(fuchsiaStyleProfile(buildId), { searchPath: [dir] });
    expect(reports[0]).toMatchObject({ status: 'build-id-mismatch', binaryBuildId: otherId });
    expect(out.locations.function_id.every((x) => x === 0)).toBe(true);
  });

  it('missing: reported with a hint naming the build-id layouts; no build id and no name: unsymbolizable', async () => {
    const empty = join(work, 'empty');
    mkdirSync(empty, { recursive: true });
    const { reports } = await symbolize(fuchsiaStyleProfile(buildId), { searchPath: [empty] });
    expect(reports[0]!.status).toBe('missing-binary');
    expect(reports[0]!.message).toContain(`no binary with build id ${buildId}`);
    expect(reports[0]!.hint).toContain(`.build-id/${buildId.slice(0, 2)}/${buildId.slice(2)}.debug`);
    const { reports: r2 } = await symbolize(fuchsiaStyleProfile(''), { searchPath: [place('noid', layouts[0]![1])] });
    expect(r2[0]!.status).toBe('unsymbolizable');
    expect(r2[0]!.message).toContain('neither a file name nor a build id');
    expect(unsymbolizableReason('', 'ab12')).toBeUndefined();
    expect(unsymbolizableReason('')).toBeDefined();
  });
});

describe.skipIf(!haveGcc || !haveCli)('profkit symbolize on a fuchsia-sampler recording (module map with build ids only)', () => {
  it('finds the binary in --search-path by build id and names the frames', () => {
    const dir = place('cli', layouts[0]![1]);
    const hex = (v: bigint) => '0x' + v.toString(16);
    // A JSON Lines recording (docs/formats/fuchsia-sampler.md): one module with one executable
    // segment, two allocations whose stacks are return addresses inside that segment.
    const rec = [
      JSON.stringify({ method: 'SetProcessInfo', process_name: 'buildid-test', module_map: [{ build_id: buildId, executable_segments: [{ start_address: hex(SEGMENT_START), size: hex(seg.memsz), relative_address: hex(seg.vaddr) }] }] }),
      JSON.stringify({ method: 'RecordAllocation', address: '0x1000', stack_trace: stack.map((a) => hex(runtime(a))), size: 64 }),
      JSON.stringify({ method: 'RecordAllocation', address: '0x2000', stack_trace: stack.slice(1).map((a) => hex(runtime(a))), size: 32 }),
    ].join('\n');
    const input = join(work, 'rec.fsrec.jsonl');
    writeFileSync(input, rec + '\n');
    const out = join(work, 'out.folded');
    const r = runCli(['symbolize', input, out, '--search-path', dir, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    const m = doc.mappings.find((x: { buildId: string }) => x.buildId === buildId);
    expect(m).toMatchObject({ status: 'symbolized', filename: '', binary: join(dir, '.build-id', buildId.slice(0, 2), buildId.slice(2) + '.debug'), symbolized: 3 });
    const names = (a: bigint) => addr2lineOracle(bin, a).map((f) => f.func).reverse();
    // folded stacks are root first; each frame expands to its inline chain (outermost first)
    const want1 = [...stack].reverse().flatMap(names).join(';');
    const want2 = stack.slice(1).reverse().flatMap(names).join(';');
    const folded = readFileSync(out, 'utf8').trim().split('\n');
    expect(folded.map((l) => l.slice(0, l.lastIndexOf(' '))).sort()).toEqual([want1, want2].sort());
  });
});
