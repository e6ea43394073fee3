/**
 * A small ELF reader of our own: the file header, program headers, section headers (with their
 * names) and the GNU build id note, for 32- and 64-bit files in either byte order. It reads only
 * the parts it needs (with positional reads), so opening a large binary costs a few kilobytes.
 *
 * Every malformed input is a `ProfkitError` (`PROFKIT_E_PARSE` or `PROFKIT_E_TRUNCATED`) naming
 * the file, the byte offset and the rule broken; nothing here throws anything else on bad bytes.
 */

import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { ErrorCodes, ProfkitError, ioError, type ErrorCode } from '@profkit/core/node';

export const ET_REL = 1;
export const ET_EXEC = 2;
export const ET_DYN = 3;
export const ET_CORE = 4;
export const PT_LOAD = 1;
export const PT_NOTE = 4;
export const PF_X = 1;
export const PF_W = 2;
export const PF_R = 4;
export const SHT_NOTE = 7;
export const SHT_NOBITS = 8;
export const NT_GNU_BUILD_ID = 3;

export interface ElfProgramHeader {
  type: number;
  flags: number;
  offset: bigint;
  vaddr: bigint;
  paddr: bigint;
  filesz: bigint;
  memsz: bigint;
  align: bigint;
}

export interface ElfSectionHeader {
  name: string;
  type: number;
  flags: bigint;
  addr: bigint;
  offset: bigint;
  size: bigint;
  link: number;
  info: number;
  addralign: bigint;
  entsize: bigint;
}

export interface ElfFile {
  file: string;
  /** 32 or 64. */
  bits: 32 | 64;
  littleEndian: boolean;
  /** `e_type`: ET_REL 1, ET_EXEC 2, ET_DYN 3, ET_CORE 4. */
  type: number;
  machine: number;
  entry: bigint;
  programs: ElfProgramHeader[];
  sections: ElfSectionHeader[];
  /** Lower-case hex of the `.note.gnu.build-id` descriptor, `''` when the file has none. */
  buildId: string;
  size: number;
}

/** Names of `e_type` values for messages. */
export function elfTypeName(t: number): string {
  return ({ 0: 'ET_NONE', 1: 'ET_REL', 2: 'ET_EXEC', 3: 'ET_DYN', 4: 'ET_CORE' } as Record<number, string>)[t] ?? `type ${t}`;
}

/** Anything that can hand out bytes at an offset: a file descriptor or an in-memory buffer. */
interface Source {
  size: number;
  read(offset: number, length: number): Uint8Array;
}

/** Limits that keep a hostile file from making us allocate without bound. */
const MAX_HEADERS = 65535 + 1;
const MAX_NOTE_BYTES = 1 << 20;
const MAX_SHSTRTAB_BYTES = 16 << 20;

function bad(file: string, offset: number, rule: string, message: string, code: ErrorCode = ErrorCodes.PARSE): ProfkitError {
  return new ProfkitError(code, `${file}: not a valid ELF file: ${message}`, { file, offset, rule });
}

class Reader {
  constructor(
    readonly file: string,
    readonly src: Source,
    readonly le: boolean,
    readonly is64: boolean,
  ) {}

  bytes(offset: number, length: number, what: string): DataView {
    if (offset < 0 || length < 0 || offset + length > this.src.size) {
      throw bad(this.file, offset, `${what} must lie inside the file (${this.src.size} bytes)`, `${what} at offset ${offset} (+${length} bytes) runs past the end of the file`, ErrorCodes.TRUNCATED);
    }
    const b = this.src.read(offset, length);
    return new DataView(b.buffer, b.byteOffset, b.byteLength);
  }
}

/** Converts a 64-bit file offset to a JS number, rejecting offsets past the end of the file. */
function off(r: Reader, v: bigint, at: number, what: string): number {
  if (v > BigInt(r.src.size)) {
    throw bad(r.file, at, `${what} must lie inside the file`, `${what} 0x${v.toString(16)} is past the end of the file (${r.src.size} bytes)`, ErrorCodes.TRUNCATED);
  }
  return Number(v);
}

function parse(file: string, src: Source): ElfFile {
  if (src.size < 16) throw bad(file, 0, 'ELF identification is 16 bytes', `file is ${src.size} bytes, shorter than the ELF identification`, ErrorCodes.TRUNCATED);
  const ident = src.read(0, 16);
  if (ident[0] !== 0x7f || ident[1] !== 0x45 || ident[2] !== 0x4c || ident[3] !== 0x46) {
    throw bad(file, 0, 'ELF magic \\x7fELF', 'missing the ELF magic number \\x7fELF');
  }
  const cls = ident[4];
  if (cls !== 1 && cls !== 2) throw bad(file, 4, 'EI_CLASS is 1 (32-bit) or 2 (64-bit)', `unknown ELF class ${cls}`);
  const data = ident[5];
  if (data !== 1 && data !== 2) throw bad(file, 5, 'EI_DATA is 1 (little-endian) or 2 (big-endian)', `unknown ELF data encoding ${data}`);
  if (ident[6] !== 1) throw bad(file, 6, 'EI_VERSION is 1', `unknown ELF version ${ident[6]}`);
  const is64 = cls === 2;
  const le = data === 1;
  const r = new Reader(file, src, le, is64);
  const ehsize = is64 ? 64 : 52;
  const h = r.bytes(0, ehsize, 'ELF header');
  const u16 = (o: number) => h.getUint16(o, le);
  const u32 = (o: number) => h.getUint32(o, le);
  const addr = (o: number) => (is64 ? h.getBigUint64(o, le) : BigInt(h.getUint32(o, le)));
  const type = u16(16);
  const machine = u16(18);
  const entry = addr(24);
  const phoff = addr(is64 ? 32 : 28);
  const shoff = addr(is64 ? 40 : 32);
  const phentsize = u16(is64 ? 54 : 42);
  let phnum = u16(is64 ? 56 : 44);
  const shentsize = u16(is64 ? 58 : 46);
  let shnum = u16(is64 ? 60 : 48);
  let shstrndx = u16(is64 ? 62 : 50);
  const phWant = is64 ? 56 : 32;
  const shWant = is64 ? 64 : 40;

  // Section headers (first, because extended numbering keeps counts in section 0).
  const sections: ElfSectionHeader[] = [];
  const rawNames: number[] = [];
  if (shoff !== 0n) {
    if (shentsize < shWant) throw bad(file, is64 ? 58 : 46, `e_shentsize is at least ${shWant}`, `section header size ${shentsize} is below ${shWant}`);
    const shBase = off(r, shoff, is64 ? 40 : 32, 'e_shoff');
    const readSh = (i: number): { nameOff: number; s: Omit<ElfSectionHeader, 'name'> } => {
      const at = shBase + i * shentsize;
      const v = r.bytes(at, shWant, `section header ${i}`);
      const w = (o: number) => (is64 ? v.getBigUint64(o, le) : BigInt(v.getUint32(o, le)));
      return is64
        ? { nameOff: v.getUint32(0, le), s: { type: v.getUint32(4, le), flags: w(8), addr: w(16), offset: w(24), size: w(32), link: v.getUint32(40, le), info: v.getUint32(44, le), addralign: w(48), entsize: w(56) } }
        : { nameOff: v.getUint32(0, le), s: { type: v.getUint32(4, le), flags: w(8), addr: w(12), offset: w(16), size: w(20), link: v.getUint32(24, le), info: v.getUint32(28, le), addralign: w(32), entsize: w(36) } };
    };
    const first = readSh(0);
    if (shnum === 0) {
      // Extended numbering: the real count is section 0's sh_size.
      if (first.s.size > BigInt(MAX_HEADERS * 4) || first.s.size * BigInt(shentsize) > BigInt(src.size)) {
        throw bad(file, shBase + (is64 ? 32 : 20), 'extended section count fits in the file', `section count ${first.s.size} does not fit in the file`, ErrorCodes.TRUNCATED);
      }
      shnum = Number(first.s.size);
    }
    if (shstrndx === 0xffff) shstrndx = first.s.link;
    if (phnum === 0xffff) phnum = first.s.info;
    if (shBase + shnum * shentsize > src.size) {
      throw bad(file, shBase, 'section header table lies inside the file', `${shnum} section headers at offset ${shBase} run past the end of the file`, ErrorCodes.TRUNCATED);
    }
    for (let i = 0; i < shnum; i++) {
      const { nameOff, s } = i === 0 ? first : readSh(i);
      rawNames.push(nameOff);
      sections.push({ name: '', ...s });
    }
    if (shnum > 0 && shstrndx !== 0) {
      if (shstrndx >= shnum) throw bad(file, is64 ? 62 : 50, 'e_shstrndx names an existing section', `section name table index ${shstrndx} is not below the section count ${shnum}`);
      const st = sections[shstrndx]!;
      if (st.type !== SHT_NOBITS && st.size > 0n) {
        if (st.size > BigInt(MAX_SHSTRTAB_BYTES)) throw bad(file, shBase + shstrndx * shentsize, 'section name table is at most 16 MiB', `section name table of ${st.size} bytes`);
        const at = off(r, st.offset, shBase + shstrndx * shentsize, 'section name table offset');
        const strtab = r.bytes(at, Number(st.size), 'section name table');
        const bytes = new Uint8Array(strtab.buffer, strtab.byteOffset, strtab.byteLength);
        const dec = new TextDecoder('latin1');
        sections.forEach((s, i) => {
          const o = rawNames[i]!;
          if (o >= bytes.length) throw bad(file, shBase + i * shentsize, 'sh_name indexes the section name table', `section ${i} name offset ${o} is past the name table (${bytes.length} bytes)`);
          let e = o;
          while (e < bytes.length && bytes[e] !== 0) e++;
          s.name = dec.decode(bytes.subarray(o, e));
        });
      }
    }
  }

  // Program headers.
  const programs: ElfProgramHeader[] = [];
  if (phoff !== 0n && phnum > 0) {
    if (phentsize < phWant) throw bad(file, is64 ? 54 : 42, `e_phentsize is at least ${phWant}`, `program header size ${phentsize} is below ${phWant}`);
    const base = off(r, phoff, is64 ? 32 : 28, 'e_phoff');
    if (base + phnum * phentsize > src.size) {
      throw bad(file, base, 'program header table lies inside the file', `${phnum} program headers at offset ${base} run past the end of the file`, ErrorCodes.TRUNCATED);
    }
    for (let i = 0; i < phnum; i++) {
      const v = r.bytes(base + i * phentsize, phWant, `program header ${i}`);
      if (is64) {
        programs.push({ type: v.getUint32(0, le), flags: v.getUint32(4, le), offset: v.getBigUint64(8, le), vaddr: v.getBigUint64(16, le), paddr: v.getBigUint64(24, le), filesz: v.getBigUint64(32, le), memsz: v.getBigUint64(40, le), align: v.getBigUint64(48, le) });
      } else {
        const w = (o: number) => BigInt(v.getUint32(o, le));
        programs.push({ type: v.getUint32(0, le), offset: w(4), vaddr: w(8), paddr: w(12), filesz: w(16), memsz: w(20), flags: v.getUint32(24, le), align: w(28) });
      }
    }
  }

  const elf: ElfFile = { file, bits: is64 ? 64 : 32, littleEndian: le, type, machine, entry, programs, sections, buildId: '', size: src.size };
  elf.buildId = findBuildId(r, elf);
  return elf;
}

/** Walks notes in `[at, at+size)`; returns the GNU build id descriptor as hex, or ''. */
function scanNotes(r: Reader, at: number, size: number, align: number): string {
  if (size > MAX_NOTE_BYTES) size = MAX_NOTE_BYTES;
  const v = r.bytes(at, size, 'note');
  const pad = (n: number) => (n + align - 1) & ~(align - 1);
  let p = 0;
  while (p + 12 <= size) {
    const namesz = v.getUint32(p, r.le);
    const descsz = v.getUint32(p + 4, r.le);
    const type = v.getUint32(p + 8, r.le);
    const nameAt = p + 12;
    // Padding is to the alignment of the position within the note area (4, or 8 for
    // 8-aligned notes such as .note.gnu.property), as in the gABI.
    const descAt = pad(nameAt + namesz);
    const end = pad(descAt + descsz);
    if (namesz > size || descsz > size || descAt + descsz > size) {
      throw bad(r.file, at + p, 'note name and descriptor lie inside the note', `note at offset ${at + p} (namesz ${namesz}, descsz ${descsz}) runs past its section`, ErrorCodes.TRUNCATED);
    }
    const name = String.fromCharCode(...new Uint8Array(v.buffer, v.byteOffset + nameAt, namesz)).replace(/\0+$/, '');
    if (type === NT_GNU_BUILD_ID && name === 'GNU') {
      let hex = '';
      for (let i = 0; i < descsz; i++) hex += v.getUint8(descAt + i).toString(16).padStart(2, '0');
      return hex;
    }
    p = end;
  }
  return '';
}

function findBuildId(r: Reader, elf: ElfFile): string {
  // Like google/pprof's elfexec.GetBuildID: PT_NOTE segments first, then SHT_NOTE sections.
  for (const ph of elf.programs) {
    if (ph.type !== PT_NOTE || ph.filesz === 0n) continue;
    const id = scanNotes(r, off(r, ph.offset, 0, 'PT_NOTE offset'), Number(ph.filesz > BigInt(r.src.size) ? BigInt(r.src.size) : ph.filesz), ph.align === 8n ? 8 : 4);
    if (id) return id;
  }
  for (const s of elf.sections) {
    if (s.type !== SHT_NOTE || s.size === 0n) continue;
    const id = scanNotes(r, off(r, s.offset, 0, `section ${s.name} offset`), Number(s.size > BigInt(r.src.size) ? BigInt(r.src.size) : s.size), s.addralign === 8n ? 8 : 4);
    if (id) return id;
  }
  return '';
}

/** Parses an ELF image held in memory. */
export function parseElf(bytes: Uint8Array, file = '<memory>'): ElfFile {
  return parse(file, { size: bytes.length, read: (o, n) => bytes.subarray(o, o + n) });
}

/** Whether `head` starts with the ELF magic. */
export function isElf(head: Uint8Array): boolean {
  return head.length >= 4 && head[0] === 0x7f && head[1] === 0x45 && head[2] === 0x4c && head[3] === 0x46;
}

/** Opens and parses an ELF file, reading only its headers and notes. */
export function readElf(path: string): ElfFile {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    throw ioError(e, path, 'opening');
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new ProfkitError(ErrorCodes.IO, `${path} is not a regular file`, { file: path });
    return parse(path, {
      size: st.size,
      read(offset, length) {
        const buf = Buffer.alloc(length);
        let got = 0;
        while (got < length) {
          const n = readSync(fd, buf, got, length - got, offset + got);
          if (n === 0) break;
          got += n;
        }
        return new Uint8Array(buf.buffer, buf.byteOffset, got);
      },
    });
  } finally {
    closeSync(fd);
  }
}

/** The PT_LOAD executable segment containing `.text` (google/pprof's `FindTextProgHeader`). */
export function findTextProgramHeader(elf: ElfFile): ElfProgramHeader | undefined {
  const text = elf.sections.find((s) => s.name === '.text');
  if (!text) return undefined;
  return elf.programs.find((p) => p.type === PT_LOAD && (p.flags & PF_X) !== 0 && text.addr >= p.vaddr && text.addr < p.vaddr + p.memsz);
}
