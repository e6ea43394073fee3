/** Base addresses as google/pprof computes them (expected values worked out by hand). */

import { describe, expect, it } from 'vitest';
import { ET_DYN, ET_EXEC, ET_REL, PT_LOAD, findProgramHeaderForMapping, getBase, type ElfFile, type ElfProgramHeader } from '../src/index.js';

const seg = (offset: bigint, vaddr: bigint, memsz: bigint, flags = 5): ElfProgramHeader => ({ type: PT_LOAD, flags, offset, vaddr, paddr: vaddr, filesz: memsz, memsz, align: 0x1000n });
const elf = (type: number, programs: ElfProgramHeader[]): ElfFile => ({ file: 'bin', bits: 64, littleEndian: true, type, machine: 62, entry: 0n, programs, sections: [], buildId: '', size: 1 << 20 });

// A typical PIE / shared library: R segment at 0, R E at 0x1000, R at 0x2000, RW at 0x3dd0.
const pieSegs = [seg(0n, 0n, 0x618n, 4), seg(0x1000n, 0x1000n, 0x1a1n), seg(0x2000n, 0x2000n, 0xf8n, 4), seg(0x2dd0n, 0x3dd0n, 0x250n, 6)];
// A typical non-PIE executable linked at 0x400000.
const exeSegs = [seg(0n, 0x400000n, 0x5a0n, 4), seg(0x1000n, 0x401000n, 0x1b5n), seg(0x2000n, 0x402000n, 0x100n, 4)];

describe('getBase', () => {
  it('fake mappings (start 0, offset 0, limit 0 or max) have base 0', () => {
    expect(getBase(elf(ET_DYN, pieSegs), { start: 0n, limit: 0n, offset: 0n })).toBe(0n);
    expect(getBase(elf(ET_DYN, pieSegs), { start: 0n, limit: (1n << 64n) - 1n, offset: 0n })).toBe(0n);
  });
  it('ET_DYN text mapping: start - offset + seg.off - seg.vaddr', () => {
    // /proc/maps: 555555555000-555555556000 r-xp 00001000 → base 0x555555554000
    expect(getBase(elf(ET_DYN, pieSegs), { start: 0x555555555000n, limit: 0x555555556000n, offset: 0x1000n })).toBe(0x555555554000n);
  });
  it('ET_DYN whose data segment has vaddr != offset: the mapping picks the segment', () => {
    // RW segment: offset 0x2dd0 vaddr 0x3dd0, mapped 555555557000-555555558000 at file offset 0x2000
    expect(getBase(elf(ET_DYN, pieSegs), { start: 0x555555557000n, limit: 0x555555559000n, offset: 0x2000n })).toBe(0x555555554000n);
  });
  it('ET_DYN without program headers: start - offset', () => {
    expect(getBase(elf(ET_DYN, []), { start: 0x7f0000001000n, limit: 0x7f0000002000n, offset: 0x1000n })).toBe(0x7f0000000000n);
  });
  it('ET_EXEC mapped where it was linked: base 0', () => {
    expect(getBase(elf(ET_EXEC, exeSegs), { start: 0x401000n, limit: 0x402000n, offset: 0x1000n })).toBe(0n);
  });
  it('ET_EXEC whole-file mapping (gperftools/old kernels: one r-xp mapping at 0x400000 offset 0): base 0', () => {
    expect(getBase(elf(ET_EXEC, exeSegs), { start: 0x400000n, limit: 0x403000n, offset: 0n })).toBe(0n);
  });
  it('ET_EXEC without a load segment: 0', () => {
    expect(getBase(elf(ET_EXEC, []), { start: 0x401000n, limit: 0x402000n, offset: 0x1000n })).toBe(0n);
  });
  it('ET_REL: start; a nonzero offset is an error with a code', () => {
    expect(getBase(elf(ET_REL, []), { start: 0xffffffffc0000000n, limit: 0xffffffffc0010000n, offset: 0n })).toBe(0xffffffffc0000000n);
    expect(() => getBase(elf(ET_REL, []), { start: 0x1000n, limit: 0x2000n, offset: 0x1000n })).toThrow(expect.objectContaining({ code: 'PROFKIT_E_SYMBOLIZE_BASE' }));
  });
  it('ET_CORE is refused with a code naming the file', () => {
    expect(() => getBase(elf(4, exeSegs), { start: 0x1000n, limit: 0x2000n, offset: 0n })).toThrow(expect.objectContaining({ code: 'PROFKIT_E_SYMBOLIZE_BASE', detail: expect.objectContaining({ file: 'bin' }) }));
  });
});

describe('findProgramHeaderForMapping', () => {
  it('picks the one segment inside the mapping', () => {
    expect(findProgramHeaderForMapping(elf(ET_DYN, pieSegs), 0x1000n, 0x1000n)!.vaddr).toBe(0x1000n);
  });
  it('uses the mapping size to choose between segments sharing a page (pprof heuristic)', () => {
    const segs = [seg(0n, 0x400000n, 0x6fcn), seg(0xe10n, 0x600e10n, 0x238n, 6)];
    expect(findProgramHeaderForMapping(elf(ET_EXEC, segs), 0n, 0x1000n)!.vaddr).toBe(0x400000n);
    expect(findProgramHeaderForMapping(elf(ET_EXEC, segs), 0n, 0x2000n)).toBeDefined();
  });
  it('no loadable segments → undefined; none matching → error', () => {
    expect(findProgramHeaderForMapping(elf(ET_DYN, []), 0n, 0x1000n)).toBeUndefined();
    expect(() => findProgramHeaderForMapping(elf(ET_DYN, pieSegs), 0x9000n, 0x1000n)).toThrow(/no program header/);
  });
});
