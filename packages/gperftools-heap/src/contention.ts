/**
 * Contention profiles (google/pprof `parseContention`): `--- contentionz `, `--- mutex:`,
 * `--- contention:` with `key = value` attributes and `<delay_cycles> <count> @ <addrs>` rows.
 */

import { HexLocationTable, type LProfile, newLProfile } from './legacy-model.js';
import { isMemoryMapSentinel, parseMemoryMap } from './mappings.js';
import { checkDigitRuns, clip, matchRow } from './heap.js';
import { type RecordLimits, checkRecord } from './limits.js';
import { MAX_CACHED_ROWS, RowStacks, Unrecognized, isSpaceOrComment, parseError, parseInt0, parseInt10, truncToInt64 } from './text.js';

const contentionSampleRE = /(\d+) *(\d+) @([ x0-9a-f]*)/;
const contentionSampleAnchoredRE = /^(\d+) *(\d+) @([ x0-9a-f]*)/;

export interface ContentionParse {
  profile: LProfile;
  /** The header line's prefix (`--- contentionz`, `--- mutex:`, `--- contention:`). */
  kind: string;
  /** `cycles/second` (0 when absent: delays then stay in cycles, as google/pprof does). */
  cyclesPerSecond: bigint;
  /** Per sample, the row as written: delay cycles and count. */
  raw: [bigint, bigint][];
}

/** Parses contention text (`lineBase` and `limits` as for `parseHeap`). */
export function parseContention(lines: string[], lineBase = 0, limits?: RecordLimits): ContentionParse {
  if (lines.length === 0) throw new Unrecognized('empty');
  const l0 = lines[0]!;
  let kind: string;
  if (l0.startsWith('--- contentionz ')) kind = '--- contentionz';
  else if (l0.startsWith('--- mutex:')) kind = '--- mutex:';
  else if (l0.startsWith('--- contention:')) kind = '--- contention:';
  else throw new Unrecognized('no contention header');

  const p = newLProfile(
    [
      { type: 'contentions', unit: 'count' },
      { type: 'delay', unit: 'nanoseconds' },
    ],
    { type: 'contentions', unit: 'count' },
    1n,
  );
  let cpuHz = 0n;
  let i = 1;
  for (; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (isSpaceOrComment(line)) continue;
    if (line.startsWith('---')) break;
    const eq = line.indexOf('=');
    if (eq < 0) break;
    const key = line.slice(0, eq).trim();
    const val = line.slice(eq + 1).trim();
    switch (key) {
      case 'cycles/second': {
        const v = parseInt0(val);
        if (v === undefined) throw new Unrecognized('bad cycles/second');
        cpuHz = v;
        break;
      }
      case 'sampling period': {
        const v = parseInt0(val);
        if (v === undefined) throw new Unrecognized('bad sampling period');
        p.period = v;
        break;
      }
      case 'ms since reset': {
        const v = parseInt0(val);
        if (v === undefined) throw new Unrecognized('bad ms since reset');
        p.durationNanos = BigInt.asIntN(64, v * 1000n * 1000n);
        break;
      }
      case 'discarded samples':
        break;
      default:
        // `format` and `resolution` mean a Java profile; anything else is not ours either.
        throw new Unrecognized(`contention attribute ${key}`);
    }
  }
  const stacks = new RowStacks(new HexLocationTable(p));
  const raw: [bigint, bigint][] = [];
  // Repeated rows share their stack, values and raw numbers (see parseHeap).
  const rowsByNumbers = new Map<string, { values: bigint[]; raw: [bigint, bigint] }>();
  let totalFrames = 0;
  for (; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line.startsWith('---')) break;
    if (isSpaceOrComment(line)) continue;
    const lineNo = lineBase + i + 1;
    checkDigitRuns(line, lineNo);
    const sd = matchRow(line, contentionSampleAnchoredRE, contentionSampleRE);
    if (!sd) throw parseError(`malformed contention row "${clip(line)}"`, { line: lineNo, rule: 'contention rows are "<delay_cycles> <count> @ <addresses>"' });
    const sloc = stacks.get(sd[3]!, { line: lineNo });
    totalFrames += sloc.length;
    const numbers = `${sd[1]} ${sd[2]}`;
    const known = rowsByNumbers.get(numbers);
    if (known) {
      checkRecord(limits, p.samples.length, sloc.length, lineNo, totalFrames);
      raw.push(known.raw);
      p.samples.push({ values: known.values, locs: sloc });
      continue;
    }
    let v1 = parseInt10(sd[1]!);
    let v2 = parseInt10(sd[2]!);
    if (v1 === undefined || v2 === undefined) throw parseError(`malformed sample: ${clip(line)}: value out of int64 range`, { line: lineNo, rule: 'contention values fit in int64' });
    checkRecord(limits, p.samples.length, sloc.length, lineNo, totalFrames);
    raw.push([v1, v2]);
    if (p.period > 0n) {
      if (cpuHz > 0n) {
        const cpuGHz = Number(cpuHz) / 1e9;
        v1 = truncToInt64((Number(v1) * Number(p.period)) / cpuGHz);
      }
      v2 = BigInt.asIntN(64, v2 * p.period);
    }
    const values = [v2, v1];
    if (rowsByNumbers.size < MAX_CACHED_ROWS) rowsByNumbers.set(numbers, { values, raw: raw[raw.length - 1]! });
    p.samples.push({ values, locs: sloc });
  }
  while (i < lines.length && !isMemoryMapSentinel(lines[i]!)) i++;
  parseMemoryMap(p, lines.slice(i + 1));
  return { profile: p, kind, cyclesPerSecond: cpuHz, raw };
}
