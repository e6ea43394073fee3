/** `profkit symbolize` end to end through the CLI (spawned), with the adapter registered by config. */

import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { haveCli as cliBuilt, runCli } from '@profkit/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProfileBuilder, createRegistry } from '@profkit/core/node';
import { writeCpuProfile } from '@profkit/gperftools-heap';
import symbolizeAdapter from '../src/index.js';
import { C_DIR, compile, execMapping, haveTool, nmSymbols, readelfBuildId, tmp } from './helpers.js';

const haveCli = cliBuilt('symbolize CLI tests');
const haveGcc = haveTool('gcc', 'gcc') && haveTool('addr2line', 'binutils');

let work = '';
let prog = '';
let input = '';
beforeAll(() => {
  if (!haveGcc) return;
  work = tmp();
  prog = join(work, 'prog');
  compile('gcc', ['-g', '-O2', '-fPIE', '-pie', '-o', prog, join(C_DIR, 'prog.c')]);
  const syms = nmSymbols(prog);
  const m = execMapping(prog, 0x555555554000n);
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }, { type: 'cpu', unit: 'nanoseconds' }], facts: { period_type: { type: 'cpu', unit: 'nanoseconds' }, period: 10_000_000n } });
  const mid = b.internMapping({ memoryStart: m.start, memoryLimit: m.limit, fileOffset: m.offset, filename: prog, buildId: readelfBuildId(prog) });
  const loc = (name: string, off: bigint) => b.internLocation({ address: m.runtime(syms.get(name)!.addr + off), mappingId: mid });
  b.addSample([loc('leaf_fn', 4n), loc('mid_fn', 0x3an), loc('main', 0x28n)], [3, 30_000_000]);
  b.addSample([loc('mid_fn', 0x3an), loc('main', 0x28n)], [1, 10_000_000]);
  input = join(work, 'in.cpu');
  writeFileSync(input, writeCpuProfile(b.build()).bytes);
});
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

const cli = (args: string[]) => runCli(args);

describe('the adapter object', () => {
  it('registers in a core registry and contributes the symbolize command', () => {
    const reg = createRegistry();
    reg.register(symbolizeAdapter);
    expect(reg.commands().map((c) => c.command.name)).toEqual(['symbolize']);
    expect(symbolizeAdapter.sniff(new Uint8Array([0x7f, 0x45, 0x4c, 0x46]), {})).toBe(0);
  });
});

describe.skipIf(!haveCli || !haveGcc)('profkit symbolize', () => {
  it('symbolizes a legacy CPU profile into folded stacks with names', () => {
    const out = join(work, 'out.folded');
    const r = cli(['symbolize', input, out]);
    expect(r.stderr).toContain('mapping 1');
    expect(r.code).toBe(0);
    const folded = readFileSync(out, 'utf8').trim().split('\n').sort();
    // mid_fn+0x3a is not inside the inlined helper in every build: compare only named frames we
    // know are there, in order (root first in folded stacks).
    expect(folded.some((l) => /^main;mid_fn;.*leaf_fn 3$/.test(l) || /^main;mid_fn;leaf_fn 3$/.test(l))).toBe(true);
    expect(folded.some((l) => /^main;mid_fn(;inl_helper)? 1$/.test(l))).toBe(true);
  });

  it('--json reports each mapping', () => {
    const out = join(work, 'out2.folded');
    const r = cli(['symbolize', input, out, '--json', '--mode', 'names']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.schema).toBe('profkit.symbolize/1');
    expect(doc.mappings[0]).toMatchObject({ mappingId: 1, status: 'symbolized', tool: 'nm', binary: prog, symbolized: 3, base: '0x555555554000' });
  });

  it('a --binary that cannot be verified (no build id recorded, another name) is warned about', () => {
    const other = join(work, 'other');
    compile('gcc', ['-g', '-O0', '-o', other, join(C_DIR, 'shared.c'), '-shared', '-fPIC']);
    const out = join(work, 'out3.folded');
    const r = cli(['symbolize', input, out, '--binary', other]);
    expect(r.code).toBe(0);
    // The legacy CPU format records no build ids: the binary cannot be checked, and we say so.
    expect(r.stderr).toContain('no build id recorded, binary not verified');
    expect(r.stderr).toContain('PROFKIT_W_SYMBOLIZE_UNVERIFIED_BINARY');
  });

  it('usage errors exit 2 with a PROFKIT_E_USAGE message', () => {
    const r = cli(['symbolize', input, join(work, 'x.folded'), '--tool', 'gdb']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('PROFKIT_E_USAGE');
    expect(cli(['symbolize', input]).code).toBe(2);
  });
});
