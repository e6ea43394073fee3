/**
 * Memory-map sections of legacy profiles (`MAPPED_LIBRARIES:` / `--- Memory map: ---`, and the
 * text after a binary CPU profile), parsed and post-processed exactly as google/pprof does:
 * glog prefixes, `name=value` variables, both line forms, non-executable entries skipped,
 * adjacent entries merged, the main binary moved first, and addresses assigned to mappings.
 */

import { type LMapping, type LProfile, remapFunctionIDs, remapLocationIDs } from './legacy-model.js';

// Go's RE2 `\s` and `\S` are ASCII-only; JS's are Unicode-aware, so spell them out.
const S = '[\\t\\n\\f\\r ]';
const NS = '[^\\t\\n\\f\\r ]';
const XD = '[0-9A-Fa-f]';
const spaceDigits = `${S}+[0-9]+`;
const hexPair = `${S}+${XD}+:${XD}+`;
const oSpace = `${S}*`;
const cHex = `(?:0x)?(${XD}+)`;
const cHexRange = `${S}*${cHex}[\\t\\n\\f\\r -]?${oSpace}${cHex}:?`;
const cSpaceString = `(?:${S}+(${NS}+))?`;
const cSpaceHex = `(?:${S}+(${XD}+))?`;
const cSpaceAtOffset = `(?:${S}+\\(@(${XD}+)\\))?`;
const cPerm = `(?:${S}+([-rwxp]+))?`;

const procMapsRE = new RegExp(`^${cHexRange}${cPerm}${cSpaceHex}${hexPair}${spaceDigits}${cSpaceString}`);
const briefMapsRE = new RegExp(`^${cHexRange}${cPerm}${cSpaceString}${cSpaceAtOffset}${cSpaceHex}`);
const logInfoRE = /^[^[\]]+:[0-9]+\][\t\n\f\r ]/;

export const MAX_MAPPING_LINE = 8192;

export const MEMORY_MAP_SENTINELS = ['--- Memory map: ---', 'MAPPED_LIBRARIES:'] as const;

export function isMemoryMapSentinel(line: string): boolean {
  return line.includes(MEMORY_MAP_SENTINELS[0]) || line.includes(MEMORY_MAP_SENTINELS[1]);
}

const UINT64_MAX = (1n << 64n) - 1n;

function parseHex64(s: string): bigint | undefined {
  if (s.length === 0 || s.length > 64) return undefined;
  const v = BigInt('0x' + s);
  return v > UINT64_MAX ? undefined : v;
}

/**
 * One mapping line. Returns a mapping, `null` for a recognized but skipped (non-executable)
 * entry, or `undefined` when the line is not a mapping at all.
 */
export function parseMappingEntry(line: string): LMapping | null | undefined {
  let start: string, end: string, perm: string, file: string, offset: string, buildId = '';
  let me = procMapsRE.exec(line);
  if (me) {
    [start, end, perm, offset, file] = [me[1]!, me[2]!, me[3] ?? '', me[4] ?? '', me[5] ?? ''];
  } else if ((me = briefMapsRE.exec(line))) {
    [start, end, perm, file, offset, buildId] = [me[1]!, me[2]!, me[3] ?? '', me[4] ?? '', me[5] ?? '', me[6] ?? ''];
  } else {
    return undefined;
  }
  if (perm !== '' && !perm.includes('x')) return null;
  const s = parseHex64(start);
  const e = parseHex64(end);
  if (s === undefined || e === undefined) return undefined;
  let off = 0n;
  if (offset !== '') {
    const o = parseHex64(offset);
    if (o === undefined) return undefined;
    off = o;
  }
  return { id: 0, start: s, limit: e, offset: off, file, buildId };
}

/** Strips a glog prefix (`I0102 10:00:00.000 123 file.cc:42] `). */
export function removeLoggingInfo(line: string): string {
  const m = logInfoRE.exec(line);
  return m ? line.slice(m[0].length) : line;
}

/**
 * Go's `strings.Replacer` semantics: left to right, first matching pair (in order) wins.
 * Returns undefined once the result would exceed `max` characters (variables can nest, so
 * expansion is bounded rather than trusted).
 */
function replaceVars(line: string, pairs: [string, string][], max: number): string | undefined {
  if (pairs.length === 0) return line;
  let out = '';
  let i = 0;
  outer: while (i < line.length) {
    if (out.length > max) return undefined;
    for (const [from, to] of pairs) {
      if (from.length > 0 && line.startsWith(from, i)) {
        out += to;
        i += from.length;
        continue outer;
      }
    }
    out += line[i];
    i++;
  }
  return out.length > max ? undefined : out;
}

/** Parses the lines of a memory map section (google/pprof `parseProcMapsFromScanner`). */
export function parseProcMaps(lines: Iterable<string>): LMapping[] {
  const mappings: LMapping[] = [];
  const vars: [string, string][] = [];
  for (const raw of lines) {
    // Real maps lines are short (a path is at most 4096 bytes); longer ones are not mappings and
    // are not searched, which keeps these backtracking regexps linear.
    if (raw.length > MAX_MAPPING_LINE) continue;
    const line = replaceVars(removeLoggingInfo(raw), vars, MAX_MAPPING_LINE);
    if (line === undefined) continue;
    const m = parseMappingEntry(line);
    if (m === undefined) {
      const eq = line.indexOf('=');
      if (eq >= 0) vars.push(['$' + line.slice(0, eq).trim(), line.slice(eq + 1).trim()]);
      continue;
    }
    if (m === null) continue;
    mappings.push(m);
  }
  return mappings;
}

const libRx = /([.]so$|[.]so[._][0-9]+)/;

function adjacent(m1: LMapping, m2: LMapping): boolean {
  if (m1.file !== '' && m2.file !== '' && m1.file !== m2.file) return false;
  if (m1.buildId !== '' && m2.buildId !== '' && m1.buildId !== m2.buildId) return false;
  if (m1.limit !== m2.start) return false;
  if (m1.offset !== 0n && m2.offset !== 0n) {
    const offset = (m1.offset + (m1.limit - m1.start)) & UINT64_MAX;
    if (offset !== m2.offset) return false;
  }
  return true;
}

/** google/pprof `massageMappings`: merge split mappings, move the main binary first. */
export function massageMappings(p: LProfile): void {
  if (p.mappings.length > 1) {
    const merged: LMapping[] = [p.mappings[0]!];
    for (const m of p.mappings.slice(1)) {
      const lm = merged[merged.length - 1]!;
      if (adjacent(lm, m)) {
        lm.limit = m.limit;
        if (m.file !== '') lm.file = m.file;
        if (m.buildId !== '') lm.buildId = m.buildId;
        for (const l of p.locations) if (l.mapping === m) l.mapping = lm;
        continue;
      }
      merged.push(m);
    }
    p.mappings = merged;
  }
  for (let i = 0; i < p.mappings.length; i++) {
    const file = p.mappings[i]!.file.split('(deleted)').join('').trim();
    if (file.length === 0 || libRx.test(file) || file[0] === '[') continue;
    [p.mappings[0], p.mappings[i]] = [p.mappings[i]!, p.mappings[0]!];
    break;
  }
  p.mappings.forEach((m, i) => (m.id = i + 1));
}

/** google/pprof `remapMappingIDs`: heuristics on the main mapping, then address → mapping. */
export function remapMappingIDs(p: LProfile): void {
  if (p.mappings.length > 0) {
    const m = p.mappings[0]!;
    if (m.file.startsWith('/anon_hugepage') && p.mappings.length > 1 && m.limit === p.mappings[1]!.start) {
      p.mappings = p.mappings.slice(1);
    }
  }
  if (p.mappings.length > 0) {
    const m = p.mappings[0]!;
    if (((m.start - m.offset) & UINT64_MAX) === 0x400000n) {
      m.start = 0x400000n;
      m.offset = 0n;
    }
  }
  let fake: LMapping | undefined;
  next: for (const l of p.locations) {
    const a = l.address;
    if (l.mapping || a === 0n) continue;
    for (const m of p.mappings) {
      if (m.start <= a && a < m.limit) {
        l.mapping = m;
        continue next;
      }
    }
    for (const m of p.mappings) {
      if (m.offset !== 0n && ((m.start - m.offset) & UINT64_MAX) <= a && a < m.start) {
        m.start = (m.start - m.offset) & UINT64_MAX;
        m.offset = 0n;
        l.mapping = m;
        continue next;
      }
    }
    if (!fake) {
      fake = { id: 1, start: 0n, limit: UINT64_MAX, offset: 0n, file: '', buildId: '' };
      p.mappings.push(fake);
    }
    l.mapping = fake;
  }
  p.mappings.forEach((m, i) => (m.id = i + 1));
}

/** google/pprof `ParseMemoryMapFromScanner`: add the section's mappings and renumber. */
export function parseMemoryMap(p: LProfile, lines: Iterable<string>): void {
  p.mappings.push(...parseProcMaps(lines));
  massageMappings(p);
  remapLocationIDs(p);
  remapFunctionIDs(p);
  remapMappingIDs(p);
}
