/**
 * The ELF reader: real binaries (checked against readelf) and hand-built images for 32-bit,
 * big-endian and malformed files (every error path has a code, the file and the offset).
 */

import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isProfkitError } from '@profkit/core/node';
import { ET_DYN, ET_EXEC, PT_LOAD, PT_NOTE, findTextProgramHeader, parseElf, readElf } from '../src/index.js';
import { C_DIR, compile, haveTool, loadSegments, readelfBuildId, readelfType, tmp } from './helpers.js';

interface Ph {
  type: number;
  flags: number;
  offset: number;
  vaddr: number;
  filesz: number;
  memsz: number;
  align: number;
}

/**
 * Builds a minimal ELF image: header, program headers, then a GNU build-id note (referenced by a
 * PT_NOTE header when `buildId` is given). No section headers.
 */
function buildElf(o: { bits: 32 | 64; le: boolean; type: number; loads: Ph[]; buildId?: number[] }): Uint8Array {
  const is64 = o.bits === 64;
  const ehsize = is64 ? 64 : 52;
  const phentsize = is64 ? 56 : 32;
  const phs = [...o.loads];
  const noteOff = ehsize + phentsize * (phs.length + (o.buildId ? 1 : 0));
  const note = o.buildId ? 16 + o.buildId.length : 0;
  if (o.buildId) phs.push({ type: PT_NOTE, flags: 4, offset: noteOff, vaddr: noteOff, filesz: note, memsz: note, align: 4 });
  const buf = new ArrayBuffer(noteOff + note);
  const v = new DataView(buf);
  const b = new Uint8Array(buf);
  b.set([0x7f, 0x45, 0x4c, 0x46, is64 ? 2 : 1, o.le ? 1 : 2, 1]);
  const le = o.le;
  v.setUint16(16, o.type, le);
  v.setUint16(18, is64 ? 62 : 3, le);
  v.setUint32(20, 1, le);
  if (is64) {
    v.setBigUint64(32, BigInt(ehsize), le);
    v.setUint16(52, ehsize, le);
    v.setUint16(54, phentsize, le);
    v.setUint16(56, phs.length, le);
    v.setUint16(58, 64, le);
  } else {
    v.setUint32(28, ehsize, le);
    v.setUint16(40, ehsize, le);
    v.setUint16(42, phentsize, le);
    v.setUint16(44, phs.length, le);
    v.setUint16(46, 40, le);
  }
  phs.forEach((p, i) => {
    const at = ehsize + i * phentsize;
    if (is64) {
      v.setUint32(at, p.type, le);
      v.setUint32(at + 4, p.flags, le);
      v.setBigUint64(at + 8, BigInt(p.offset), le);
      v.setBigUint64(at + 16, BigInt(p.vaddr), le);
      v.setBigUint64(at + 24, BigInt(p.vaddr), le);
      v.setBigUint64(at + 32, BigInt(p.filesz), le);
      v.setBigUint64(at + 40, BigInt(p.memsz), le);
      v.setBigUint64(at + 48, BigInt(p.align), le);
    } else {
      v.setUint32(at, p.type, le);
      v.setUint32(at + 4, p.offset, le);
      v.setUint32(at + 8, p.vaddr, le);
      v.setUint32(at + 12, p.vaddr, le);
      v.setUint32(at + 16, p.filesz, le);
      v.setUint32(at + 20, p.memsz, le);
      v.setUint32(at + 24, p.flags, le);
      v.setUint32(at + 28, p.align, le);
    }
  });
  if (o.buildId) {
    v.setUint32(noteOff, 4, le);
    v.setUint32(noteOff + 4, o.buildId.length, le);
    v.setUint32(noteOff + 8, 3, le);
    b.set([0x47, 0x4e, 0x55, 0], noteOff + 12);
    b.set(o.buildId, noteOff + 16);
  }
  return b;
}

const load = (offset: number, vaddr: number, size: number, flags = 5): Ph => ({ type: PT_LOAD, flags, offset, vaddr, filesz: size, memsz: size, align: 0x1000 });

describe('hand-built ELF images', () => {
  for (const bits of [32, 64] as const) {
    for (const le of [true, false]) {
      it(`${bits}-bit ${le ? 'little' : 'big'}-endian: class, byte order, type, segments and build id`, () => {
        const id = [0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04];
        const img = buildElf({ bits, le, type: ET_EXEC, loads: [load(0, 0x8048000, 0x2000), load(0x2000, 0x804a000, 0x100, 6)], buildId: id });
        const e = parseElf(img, 'img');
        expect(e.bits).toBe(bits);
        expect(e.littleEndian).toBe(le);
        expect(e.type).toBe(ET_EXEC);
        expect(e.programs.filter((p) => p.type === PT_LOAD).map((p) => [p.offset, p.vaddr, p.memsz, p.flags])).toEqual([
          [0n, 0x8048000n, 0x2000n, 5],
          [0x2000n, 0x804a000n, 0x100n, 6],
        ]);
        expect(e.buildId).toBe('deadbeef01020304');
        expect(e.sections).toEqual([]);
      });
    }
  }

  it('a file without a build id note has buildId ""', () => {
    expect(parseElf(buildElf({ bits: 64, le: true, type: ET_DYN, loads: [load(0, 0, 0x1000)] })).buildId).toBe('');
  });

  const good = () => buildElf({ bits: 64, le: true, type: ET_DYN, loads: [load(0, 0, 0x1000)], buildId: [1, 2, 3, 4] });
  const cases: [string, () => Uint8Array, string, number, RegExp][] = [
    ['empty file', () => new Uint8Array(0), 'PROFKIT_E_TRUNCATED', 0, /shorter than the ELF identification/],
    ['bad magic', () => Uint8Array.from([0x7f, 0x45, 0x4c, 0x47, ...new Array(60).fill(0)]), 'PROFKIT_E_PARSE', 0, /magic/],
    ['bad class', () => { const b = good(); b[4] = 3; return b; }, 'PROFKIT_E_PARSE', 4, /class 3/],
    ['bad data encoding', () => { const b = good(); b[5] = 0; return b; }, 'PROFKIT_E_PARSE', 5, /data encoding/],
    ['bad version', () => { const b = good(); b[6] = 2; return b; }, 'PROFKIT_E_PARSE', 6, /version/],
    ['header cut short', () => good().slice(0, 40), 'PROFKIT_E_TRUNCATED', 0, /ELF header/],
    ['program headers past the end', () => good().slice(0, 100), 'PROFKIT_E_TRUNCATED', 64, /program headers/],
    ['tiny e_phentsize', () => { const b = good(); new DataView(b.buffer).setUint16(54, 20, true); return b; }, 'PROFKIT_E_PARSE', 54, /program header size 20/],
    ['e_phoff beyond the file', () => { const b = good(); new DataView(b.buffer).setBigUint64(32, 1n << 40n, true); return b; }, 'PROFKIT_E_TRUNCATED', 32, /e_phoff/],
    ['note descriptor past its segment', () => { const b = good(); new DataView(b.buffer).setUint32(64 + 2 * 56 + 4, 4000, true); return b; }, 'PROFKIT_E_TRUNCATED', 176, /note at offset 176/],
    ['section headers past the end', () => { const b = good(); const v = new DataView(b.buffer); v.setBigUint64(40, 100n, true); v.setUint16(60, 50, true); return b; }, 'PROFKIT_E_TRUNCATED', 100, /section header/],
  ];
  for (const [name, make, code, offset, msg] of cases) {
    it(`malformed: ${name} → ${code} at offset ${offset}`, () => {
      let err: unknown;
      try {
        parseElf(make(), 'bad.elf');
      } catch (e) {
        err = e;
      }
      expect(isProfkitError(err)).toBe(true);
      const e = err as { code: string; detail: { file: string; offset: number; rule: string }; message: string };
      expect(e.code).toBe(code);
      expect(e.detail.file).toBe('bad.elf');
      expect(e.detail.offset).toBe(offset);
      expect(e.detail.rule).toBeTruthy();
      expect(e.message).toMatch(msg);
    });
  }

  it('random corruptions never throw anything but a ProfkitError', () => {
    const base = good();
    let seed = 12345;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
    for (let k = 0; k < 2000; k++) {
      const b = base.slice(0, Math.max(16, Math.floor(rnd() * base.length) + 1));
      for (let j = 0; j < 4; j++) b[Math.floor(rnd() * b.length)] = Math.floor(rnd() * 256);
      b.set([0x7f, 0x45, 0x4c, 0x46]);
      try {
        parseElf(b, 'fuzz');
      } catch (e) {
        expect(isProfkitError(e)).toBe(true);
      }
    }
  });

  it('readElf on a missing file or a directory is an I/O error naming it', () => {
    expect(() => readElf('/nonexistent/file')).toThrow(expect.objectContaining({ code: 'PROFKIT_E_IO', detail: expect.objectContaining({ file: '/nonexistent/file' }) }));
    const d = tmp();
    try {
      expect(() => readElf(d)).toThrow(expect.objectContaining({ code: 'PROFKIT_E_IO' }));
      const f = join(d, 'text');
      writeFileSync(f, 'hello, not an ELF file\n');
      expect(() => readElf(f)).toThrow(expect.objectContaining({ code: 'PROFKIT_E_PARSE', detail: expect.objectContaining({ file: f, offset: 0 }) }));
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!(haveTool('gcc', 'gcc') && haveTool('readelf', 'binutils')))('compiled binaries, checked against readelf', () => {
  const work = tmp();
  afterAll(() => rmSync(work, { recursive: true, force: true }));
  const bins: [string, string[]][] = [
    ['pie', ['-g', '-O2', '-fPIE', '-pie']],
    ['nopie', ['-g', '-O2', '-fno-pie', '-no-pie']],
    ['lib.so', ['-g', '-O1', '-fPIC', '-shared']],
  ];
  for (const [name, flags] of bins) {
    it(`${name}: type, build id, PT_LOAD segments, .text segment`, () => {
      const out = join(work, name);
      compile('gcc', [...flags, '-o', out, join(C_DIR, name === 'lib.so' ? 'shared.c' : 'prog.c')]);
      const e = readElf(out);
      expect(e.type).toBe(readelfType(out) === 'EXEC' ? ET_EXEC : ET_DYN);
      expect(e.type).toBe(name === 'nopie' ? ET_EXEC : ET_DYN);
      expect(e.buildId).toBe(readelfBuildId(out));
      expect(e.buildId).toMatch(/^[0-9a-f]{40}$/);
      const loads = e.programs.filter((p) => p.type === PT_LOAD).map((p) => ({ offset: p.offset, vaddr: p.vaddr, filesz: p.filesz, memsz: p.memsz }));
      expect(loads).toEqual(loadSegments(out).map(({ flags: _f, ...s }) => s));
      const text = findTextProgramHeader(e)!;
      expect(loadSegments(out).find((s) => s.flags.includes('E'))!.vaddr).toBe(text.vaddr);
      expect(e.sections.map((s) => s.name)).toEqual(expect.arrayContaining(['.text', '.note.gnu.build-id', '.debug_info', '.symtab']));
    });
  }
});
