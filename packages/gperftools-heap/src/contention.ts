/**
 * Contention profiles (google/pprof `parseContention`): `--- contentionz `, `--- mutex:`,
 * `--- contention:` with `key = value` attributes and `<delay_cycles> <count> @ <addrs>` rows.
 */

import { ADAPTER_NAME } from './read.js';
import { HexLocationTable, type LProfile, newLProfile } from './legacy-model.js';
import { isMemoryMapSentinel, parseMemoryMap } from './mappings.js';
import { checkDigitRuns, clip, matchRow } from './heap.js';
import { type RecordLimits, checkRecord } from './limits.js';
import { ErrorCodes, ProfkitError, ProfileIndex, stackOf, type Profile, type Warning } from '@profkit/core';
import { formatMappedLibraries, locationAddresses } from './write.js';
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

/**
 * A row's values as google/pprof computes them: `[contentions, delay]` from the written delay
 * (in cycles) and count, scaled by the sampling period and `cycles/second` when given.
 */
export function contentionValues(delayCycles: bigint, count: bigint, period: bigint, cyclesPerSecond: bigint): [bigint, bigint] {
  if (period <= 0n) return [count, delayCycles];
  let delay = delayCycles;
  if (cyclesPerSecond > 0n) delay = truncToInt64((Number(delayCycles) * Number(period)) / (Number(cyclesPerSecond) / 1e9));
  return [BigInt.asIntN(64, count * period), delay];
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
  const stacks = new RowStacks(new HexLocationTable(p, limits?.maxTableEntries));
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
    const v1 = parseInt10(sd[1]!);
    const v2 = parseInt10(sd[2]!);
    if (v1 === undefined || v2 === undefined) throw parseError(`malformed sample: ${clip(line)}: value out of int64 range`, { line: lineNo, rule: 'contention values fit in int64' });
    checkRecord(limits, p.samples.length, sloc.length, lineNo, totalFrames);
    raw.push([v1, v2]);
    const values = contentionValues(v1, v2, p.period, cpuHz);
    if (rowsByNumbers.size < MAX_CACHED_ROWS) rowsByNumbers.set(numbers, { values, raw: raw[raw.length - 1]! });
    p.samples.push({ values, locs: sloc });
  }
  while (i < lines.length && !isMemoryMapSentinel(lines[i]!)) i++;
  parseMemoryMap(p, lines.slice(i + 1));
  return { profile: p, kind, cyclesPerSecond: cpuHz, raw };
}

const CONTENTION_HEADERS = ['--- contention:', '--- contentionz', '--- mutex:'];

/** Nanoseconds per delay unit the writer converts from. */
const NANOS_PER: Record<string, bigint> = { nanoseconds: 1n, ns: 1n, microseconds: 1000n, us: 1000n, milliseconds: 1_000_000n, ms: 1_000_000n, seconds: 1_000_000_000n, s: 1_000_000_000n };

/** The rows as read (`raw_delay_cycles`, `raw_count`) when they still give the profile's values. */
function rowsAsRead(p: Profile, iCount: number, iDelay: number): { header: string; cyclesPerSecond: bigint; period: bigint; delay: BigInt64Array; count: BigInt64Array } | undefined {
  const ext = p['.extensions'][ADAPTER_NAME];
  const facts = (ext?.facts ?? {}) as Record<string, unknown>;
  const delay = ext?.samples?.raw_delay_cycles;
  const count = ext?.samples?.raw_count;
  const n = p.samples.value.length;
  const { contention_header: header, cycles_per_second: cyclesPerSecond, sampling_period: period } = facts;
  if (!(delay instanceof BigInt64Array && count instanceof BigInt64Array && delay.length === n && count.length === n)) return undefined;
  if (typeof header !== 'string' || !CONTENTION_HEADERS.includes(header) || typeof cyclesPerSecond !== 'bigint' || typeof period !== 'bigint') return undefined;
  const counts = p.samples['.values'][iCount]!;
  const delays = p.samples['.values'][iDelay]!;
  for (let i = 0; i < n; i++) {
    const [c, d] = contentionValues(delay[i]!, count[i]!, period, cyclesPerSecond);
    if (c !== counts[i] || d !== delays[i]) return undefined;
  }
  return { header, cyclesPerSecond, period, delay, count };
}

/**
 * A contention profile (google/pprof `parseContention` reads it): header, `key = value`
 * attributes, `<delay> <count> @ <pcs>` rows, `--- Memory map: ---` and the maps. A profile read
 * from contention text whose values are unchanged is written with its own header, cycles/second,
 * sampling period and rows; any other is written with `cycles/second = 1000000000` and
 * `sampling period = 1`, so that readers multiply by 1 and get the delays (nanoseconds) and
 * contentions exactly. Used by `write` and by the remote server's `/pprof/contention`.
 */
export function writeContentionText(p: Profile): { text: string; warnings: Warning[] } {
  const types = p.sample_types.type;
  const iCount = types.indexOf('contentions');
  const iDelay = types.indexOf('delay');
  if (iCount < 0 || iDelay < 0) {
    throw new ProfkitError(ErrorCodes.UNSUPPORTED, `a contention profile needs contentions and delay sample types; this profile has ${types.join(', ') || 'none'}`, {
      rule: 'contention rows hold a delay and a count',
    });
  }
  const warnings: Warning[] = [];
  const { addresses, synthesized } = locationAddresses(p);
  if (synthesized > 0) {
    warnings.push({ code: 'PROFKIT_W_GPERFTOOLS_SYNTHETIC_ADDRESSES', message: `${synthesized} locations had no address; wrote synthetic addresses` });
  }
  const asRead = rowsAsRead(p, iCount, iDelay);
  const index = new ProfileIndex(p);
  const parts: string[] = [];
  let counts: BigInt64Array;
  let delays: BigInt64Array;
  if (asRead) {
    parts.push(asRead.header === '--- contentionz' ? '--- contentionz 1 ---\n' : `${asRead.header}\n`);
    if (asRead.cyclesPerSecond > 0n) parts.push(`cycles/second = ${asRead.cyclesPerSecond}\n`);
    parts.push(`sampling period = ${asRead.period}\n`);
    counts = asRead.count;
    delays = asRead.delay;
  } else {
    // Delays in nanoseconds at 1 GHz "cycles", divided by the profile's period when every value
    // divides exactly (readers multiply back), else with period 1.
    const unit = p.sample_types.unit[iDelay]!;
    const toNanos = NANOS_PER[unit];
    if (toNanos === undefined) {
      throw new ProfkitError(ErrorCodes.UNSUPPORTED, `contention delays are written in nanoseconds; the delay unit "${unit}" is not a time unit`, { rule: 'contention delays are times' });
    }
    const c = p.samples['.values'][iCount]!;
    const delayValues = p.samples['.values'][iDelay]!;
    const limit = ((1n << 63n) - 1n) / toNanos;
    if (delayValues.some((v) => v > limit || v < -limit)) {
      throw new ProfkitError(ErrorCodes.UNSUPPORTED, `a delay does not fit in int64 nanoseconds`, { rule: 'contention delays are int64 nanoseconds' });
    }
    const d = delayValues.map((v) => v * toNanos);
    let period = p['.profile'].period;
    if (period <= 0n || !c.every((v) => v % period === 0n) || !d.every((v) => v % period === 0n)) {
      if (period !== 1n && period !== 0n) {
        warnings.push({ code: 'PROFKIT_W_GPERFTOOLS_PERIOD_ONE', message: `wrote sampling period 1 (the values are not all multiples of the profile's period ${period})` });
      }
      period = 1n;
    }
    parts.push('--- contention:\n', 'cycles/second = 1000000000\n', `sampling period = ${period}\n`);
    counts = c.map((v) => v / period);
    delays = d.map((v) => v / period);
  }
  const dur = p['.profile'].duration_nanos;
  if (dur > 0n) parts.push(`ms since reset = ${dur / 1_000_000n}\n`);
  for (let i = 0; i < counts.length; i++) {
    let line = `${delays[i]} ${counts[i]} @`;
    for (const id of stackOf(p, i)) {
      const row = index.locations.get(id);
      line += ' 0x' + (((row >= 0 ? addresses[row]! : 0n) + 1n) & 0xffffffffffffffffn).toString(16);
    }
    parts.push(line + '\n');
  }
  parts.push('--- Memory map: ---\n', formatMappedLibraries(p));
  return { text: parts.join(''), warnings };
}
