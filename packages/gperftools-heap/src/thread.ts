/**
 * Thread profiles (`--- threadz N ---`, google/pprof `parseThread`) and Go count profiles
 * (`goroutine profile: total N`, `threadcreate profile: total N`; google/pprof `parseGoCount`).
 */

import { HexLocationTable, LocationTable, type LProfile, dec, newLProfile } from './legacy-model.js';
import { isMemoryMapSentinel, parseMemoryMap } from './mappings.js';
import { clip } from './heap.js';
import { MAX_CACHED_ROWS, RowStacks, Unrecognized, isSpaceOrComment, parseError, parseHexAddresses, parseInt0 } from './text.js';
import { cleanupDuplicateLocations, hasDuplicateLeaf } from './cpu.js';
import { type RecordLimits, checkRecord } from './limits.js';
import { ErrorCodes, ProfkitError, ProfileIndex, stackOf, type Profile, type Warning } from '@profkit/core';
import { ADAPTER_NAME } from './read.js';
import { formatMappedLibraries, locationAddresses, lossWarnings } from './write.js';

const countStartRE = /^([^\t\n\f\r ]+) profile: total \d+$/;
// google/pprof requires at least one address; Go's runtime writes `4 @` for stackless threadcreate
// records, which we accept as an empty stack (a documented difference).
const countRE = /^(\d+) @((?: 0x[0-9a-f]+)*)$/;
const threadzStartRE = /--- threadz \d+ ---/;
const threadStartRE = /--- Thread ([0-9A-Fa-f]+) \(name: (.*)\/(\d+)\) stack: ---/;

/** Parses a Go count profile (`lineBase` and `limits` as for `parseHeap`). */
export function parseGoCount(lines: string[], lineBase = 0, limits?: RecordLimits): LProfile {
  let i = 0;
  while (i < lines.length && isSpaceOrComment(lines[i]!)) i++;
  const m = countStartRE.exec(lines[i] ?? '');
  if (!m) throw new Unrecognized('no count profile header');
  const type = m[1]!;
  const p = newLProfile([{ type, unit: 'count' }], { type, unit: 'count' }, 1n);
  const stacks = new RowStacks(new HexLocationTable(p, limits?.maxTableEntries));
  // Repeated rows share their stack and their values (see parseHeap).
  const valuesByCount = new Map<string, bigint[]>();
  let totalFrames = 0;
  for (i++; i < lines.length; i++) {
    const line = lines[i]!;
    if (isSpaceOrComment(line)) continue;
    if (line.startsWith('---')) break;
    const c = countRE.exec(line);
    let values = c ? valuesByCount.get(c[1]!) : undefined;
    if (c && values === undefined) {
      const n = parseInt0(c[1]!);
      if (n !== undefined) {
        values = [n];
        if (valuesByCount.size < MAX_CACHED_ROWS) valuesByCount.set(c[1]!, values);
      }
    }
    if (!c || values === undefined) {
      throw parseError(`malformed profile format: "${clip(line)}"`, { line: lineBase + i + 1, rule: 'count rows are "<count> @ 0x… 0x…"' });
    }
    const sloc = stacks.get(c[2]!, { line: lineBase + i + 1 });
    totalFrames += sloc.length;
    checkRecord(limits, p.samples.length, sloc.length, lineBase + i + 1, totalFrames);
    p.samples.push({ values, locs: sloc });
  }
  while (i < lines.length && !isMemoryMapSentinel(lines[i]!)) i++;
  parseMemoryMap(p, lines.slice(i + 1));
  return p;
}

/** Go `bufio.Scanner` over lines: after the last line, `text` keeps the last line. */
class LineScanner {
  idx = -1;
  text = '';
  constructor(readonly lines: string[]) {}
  scan(): boolean {
    if (this.idx + 1 >= this.lines.length) return false;
    this.text = this.lines[++this.idx]!;
    return true;
  }
  /** 1-based line number of `text`. */
  get lineNo(): number {
    return this.idx + 1;
  }
}

/**
 * Parses a thread profile (`lineBase` and `limits` as for `parseHeap`). A section is a sample
 * unless it has no address or says "same as previous thread" (then it adds to the previous one);
 * its frames are counted as kept, without the duplicated leaf `cleanupDuplicateLocations` drops,
 * and a limit error names the line of its `--- Thread` header.
 */
export function parseThread(lines: string[], lineBase = 0, limits?: RecordLimits): LProfile {
  const s = new LineScanner(lines);
  while (s.scan() && isSpaceOrComment(s.text));
  let line = s.text;
  if (threadzStartRE.test(line)) {
    while (s.scan()) {
      line = s.text;
      if (isMemoryMapSentinel(line) || line.startsWith('-')) break;
    }
  } else if (!threadStartRE.test(line)) {
    throw new Unrecognized('no thread profile header');
  }
  const p = newLProfile([{ type: 'thread', unit: 'count' }], { type: 'thread', unit: 'count' }, 1n);
  const locs = new LocationTable(p, limits?.maxTableEntries);
  let totalFrames = 0;
  while (!isMemoryMapSentinel(line)) {
    if (line.startsWith('---- no stack trace for')) {
      line = '';
      break;
    }
    if (!threadStartRE.test(line)) {
      throw parseError(`expected a "--- Thread <hex> (name: <name>/<tid>) stack: ---" line or a memory map, got "${clip(line)}"`, {
        line: lineBase + s.lineNo,
        rule: 'thread sections start with a thread header; the profile ends with a memory map or "---- no stack trace for"',
      });
    }
    // parseThreadSample
    const headerLine = lineBase + s.lineNo;
    let sameAsPrevious = false;
    let addrs: bigint[] = [];
    let next = '';
    while (s.scan()) {
      next = s.text.trim();
      if (next === '') continue;
      if (next.startsWith('---')) break;
      if (next.includes('same as previous thread')) {
        sameAsPrevious = true;
        continue;
      }
      addrs.push(...parseHexAddresses(next, { line: lineBase + s.lineNo }));
    }
    line = next;
    if (sameAsPrevious) addrs = [];
    if (addrs.length === 0) {
      const last = p.samples[p.samples.length - 1];
      if (last) last.values[0] = last.values[0]! + 1n;
      continue;
    }
    const sloc = addrs.map((a, k) => locs.get(k > 0 ? dec(a) : a, headerLine));
    totalFrames += sloc.length;
    checkRecord(limits, p.samples.length, hasDuplicateLeaf(sloc) ? sloc.length - 1 : sloc.length, headerLine, totalFrames);
    p.samples.push({ values: [1n], locs: sloc });
  }
  // parseAdditionalSections
  while (!isMemoryMapSentinel(s.text) && s.scan());
  parseMemoryMap(p, lines.slice(s.idx + 1));
  cleanupDuplicateLocations(p);
  return p;
}

export type ThreadWriteKind = 'threadz' | 'count';

export interface ThreadWriteOptions {
  /**
   * `threadz` (`--- threadz 1 ---`, one `--- Thread` section per thread, repeats as "[same as
   * previous thread]") or `count` (Go's `<type> profile: total N` with `<count> @ <pcs>` rows).
   * Default: the variant the profile was read from, else `threadz` for a `thread` sample type and
   * `count` otherwise.
   */
  kind?: ThreadWriteKind;
}

/** threadz sections a write may produce (a count of N is N sections). */
export const MAX_THREADZ_SECTIONS = 1_000_000;

/**
 * Writes a thread profile google/pprof reads back to the same samples (`parseThread` /
 * `parseGoCount`): the first sample type's values are the thread counts. threadz has no place
 * for samples without a stack or with a count below 1 (count profiles: without a stack); those
 * are left out with a warning.
 */
export function writeThreadText(p: Profile, options: ThreadWriteOptions = {}): { text: string; warnings: Warning[] } {
  if (p.sample_types.type.length === 0) {
    throw new ProfkitError(ErrorCodes.UNSUPPORTED, 'a thread profile needs a count sample type; this profile has none', { rule: 'thread rows hold a count' });
  }
  const variant = (p['.extensions'][ADAPTER_NAME]?.facts as Record<string, unknown> | undefined)?.variant;
  const type = p.sample_types.type[0]!;
  const kind: ThreadWriteKind = options.kind ?? (variant === 'threadz' || variant === 'count' ? variant : type === 'thread' ? 'threadz' : 'count');
  if (kind === 'count' && !/^[^\t\n\f\r ]+$/.test(type)) {
    throw new ProfkitError(ErrorCodes.UNSUPPORTED, `a Go count profile is named by its sample type, which must be one word; got "${type}"`, { rule: 'the header is "<type> profile: total N"' });
  }
  // (lossWarnings' 'cpu' kind: every label is lost.)
  const warnings = lossWarnings(p, 'cpu');
  if (p.sample_types.type.length > 1) warnings.push({ code: 'PROFKIT_W_GPERFTOOLS_TYPES_DROPPED', message: `only the first sample type (${type}) was written` });
  const { addresses, synthesized } = locationAddresses(p);
  if (synthesized > 0) warnings.push({ code: 'PROFKIT_W_GPERFTOOLS_SYNTHETIC_ADDRESSES', message: `${synthesized} locations had no address; wrote synthetic addresses` });
  const index = new ProfileIndex(p);
  const counts = p.samples['.values'][0]!;
  const pcs = (i: number, leafAsIs: boolean) =>
    Array.from(stackOf(p, i), (id, k) => {
      const row = index.locations.get(id);
      const a = row >= 0 ? addresses[row]! : 0n;
      return '0x' + (leafAsIs && k === 0 ? a : (a + 1n) & 0xffffffffffffffffn).toString(16);
    });
  const parts: string[] = [];
  let skipped = 0;
  if (kind === 'count') {
    let total = 0n;
    for (let i = 0; i < counts.length; i++) {
      if (stackOf(p, i).length === 0 || counts[i]! < 0n) skipped++;
      else total += counts[i]!;
    }
    parts.push(`${type} profile: total ${total}\n`);
    for (let i = 0; i < counts.length; i++) if (stackOf(p, i).length > 0 && counts[i]! >= 0n) parts.push(`${counts[i]} @ ${pcs(i, false).join(' ')}\n`);
  } else {
    let sections = 0n;
    for (let i = 0; i < counts.length; i++) if (stackOf(p, i).length > 0 && counts[i]! > 0n) sections += counts[i]!;
    if (sections > BigInt(MAX_THREADZ_SECTIONS)) {
      throw new ProfkitError(ErrorCodes.UNSUPPORTED, `threadz needs one section per thread: ${sections} threads is more than ${MAX_THREADZ_SECTIONS}; write kind=count instead`, {
        option: 'kind',
        rule: 'threadz writes each thread',
      });
    }
    parts.push('--- threadz 1 ---\n\n');
    let thread = 0;
    for (let i = 0; i < counts.length; i++) {
      if (stackOf(p, i).length === 0 || counts[i]! <= 0n) {
        skipped++;
        continue;
      }
      const header = () => `--- Thread ${(++thread).toString(16)} (name: thread/${thread}) stack: ---\n`;
      // One line per frame (a loop, not a spread: a deep stack would overflow the call stack).
      parts.push(header());
      for (const pc of pcs(i, true)) parts.push(`  ${pc}\n`);
      for (let k = 1n; k < counts[i]!; k++) parts.push(header(), '  [same as previous thread]\n');
    }
  }
  if (skipped > 0) warnings.push({ code: 'PROFKIT_W_GPERFTOOLS_DROPPED_RECORDS', message: `${skipped} samples without a stack${kind === 'threadz' ? ' or with a count below 1' : ' or with a negative count'} were left out` });
  parts.push('--- Memory map: ---\n', formatMappedLibraries(p));
  return { text: parts.join(''), warnings };
}
