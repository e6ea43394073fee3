/**
 * The base address of a mapping, computed as google/pprof does (`internal/elfexec`): the value
 * subtracted from a runtime address to get the address the symbol tables and DWARF use.
 *
 * - a fake mapping (start 0, offset 0, limit 0 or 2^64-1) → 0 (addresses already adjusted);
 * - ET_EXEC: 0 without a load segment; for a user-space start `start - offset + seg.off -
 *   seg.vaddr` (0 for a normal non-PIE executable mapped where it was linked); kernel-style
 *   mappings follow pprof's heuristics (we have no `_stext`, as pprof when it does not read it);
 * - ET_DYN (PIE, shared libraries): `start - offset`, plus `seg.off - seg.vaddr` when the
 *   mapping's segment is known;
 * - ET_REL: `start` (offset must be 0).
 *
 * All arithmetic is modulo 2^64, as in Go.
 */

import { ProfkitError } from '@profkit/core/node';
import { ET_DYN, ET_EXEC, ET_REL, PT_LOAD, elfTypeName, findTextProgramHeader, type ElfFile, type ElfProgramHeader } from './elf.js';

const U64 = (1n << 64n) - 1n;
const PAGE = 4096n;
const wrap = (v: bigint) => v & U64;

export interface MappingRange {
  start: bigint;
  limit: bigint;
  offset: bigint;
}

/**
 * The loadable segment wholly contained in a runtime mapping with file offset `pgoff` and size
 * `memsz` (google/pprof's `FindProgHeaderForMapping`): `undefined` when the file has no loadable
 * segments; throws (a plain Error, turned into a report by the caller) when none or several fit.
 */
export function findProgramHeaderForMapping(elf: ElfFile, pgoff: bigint, memsz: bigint): ElfProgramHeader | undefined {
  const headers: ElfProgramHeader[] = [];
  let loadables = 0;
  for (const p of elf.programs) {
    if (p.type !== PT_LOAD) continue;
    loadables++;
    if (pgoff <= p.offset && p.offset + p.memsz <= pgoff + memsz) {
      const aligned = p.offset > (p.vaddr & (PAGE - 1n)) ? p.offset - (p.vaddr & (PAGE - 1n)) : 0n;
      if (aligned <= pgoff) headers.push(p);
    }
  }
  if (headers.length === 1) return headers[0];
  if (loadables === 0) return undefined;
  if (headers.length === 0) throw new Error(`no program header matches file offset 0x${pgoff.toString(16)} and memory size 0x${memsz.toString(16)}`);
  if (memsz % PAGE !== 0n) throw new Error(`mapping size 0x${memsz.toString(16)} and ${headers.length} segments match the mapping`);
  let found: ElfProgramHeader | undefined;
  for (const h of headers) {
    const want = ((h.vaddr + h.memsz + PAGE - 1n) & ~(PAGE - 1n)) - (h.vaddr & ~(PAGE - 1n));
    if (want !== memsz) continue;
    if (found) throw new Error(`two program headers match mapping size 0x${memsz.toString(16)}`);
    found = h;
  }
  if (!found) throw new Error(`${headers.length} program headers match, but none has mapping size 0x${memsz.toString(16)}`);
  return found;
}

/**
 * The segment used for the base computation: the one the mapping covers when that can be told,
 * else the executable segment holding `.text` (what older pprof versions always used).
 */
export function segmentForMapping(elf: ElfFile, m: MappingRange): ElfProgramHeader | undefined {
  if (m.limit > m.start) {
    try {
      const ph = findProgramHeaderForMapping(elf, m.offset, m.limit - m.start);
      if (ph) return ph;
    } catch {
      // fall through to the text segment, as pprof does when the mapping is ambiguous
    }
  }
  return findTextProgramHeader(elf);
}

/** The base address for a mapping of `elf`; throws `PROFKIT_E_SYMBOLIZE_BASE` when pprof would fail. */
export function getBase(elf: ElfFile, m: MappingRange, segment: ElfProgramHeader | undefined = segmentForMapping(elf, m)): bigint {
  const { start, limit, offset } = m;
  if (start === 0n && offset === 0n && (limit === U64 || limit === 0n)) return 0n;
  const fail = (why: string) =>
    new ProfkitError('PROFKIT_E_SYMBOLIZE_BASE', `cannot compute the base address of ${elf.file} for mapping 0x${start.toString(16)}-0x${limit.toString(16)} (offset 0x${offset.toString(16)}): ${why}`, {
      file: elf.file,
      rule: 'base address (google/pprof elfexec.GetBase)',
    });
  switch (elf.type) {
    case ET_EXEC: {
      if (!segment) return 0n;
      if (start > 0n && start < 0x8000000000000000n) return wrap(start - offset + segment.offset - segment.vaddr);
      if (segment.vaddr === wrap(start - offset)) return offset;
      if (start === 0n && limit !== 0n) return wrap(-segment.vaddr);
      if (start >= segment.vaddr && limit > start && (offset === 0n || offset === 0xc000000000000000n || offset === start)) return wrap(start - segment.vaddr);
      throw fail(`unexpected ET_EXEC segment (vaddr 0x${segment.vaddr.toString(16)}, offset 0x${segment.offset.toString(16)})`);
    }
    case ET_REL:
      if (offset !== 0n) throw fail('an ET_REL object mapped at a nonzero file offset');
      return start;
    case ET_DYN:
      if (!segment) return wrap(start - offset);
      return wrap(start - offset + segment.offset - segment.vaddr);
    default:
      throw fail(`unsupported ELF type ${elfTypeName(elf.type)}`);
  }
}

/** Code for base-address failures (a per-mapping report, never a crash). */
export const BASE_ERROR = 'PROFKIT_E_SYMBOLIZE_BASE';
