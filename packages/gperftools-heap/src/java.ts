/**
 * Java legacy profiles (google/pprof `legacy_java_profile.go`): `--- heapz 1 ---` and
 * `--- contentionz 1 ---` text, and the `0x<id> <frame>` location lines that also follow the
 * samples of a Java binary CPU profile.
 */

import { StringKeyedMap } from '@profkit/core';
import { type LFunction, type LLocation, type LProfile, checkLocationCount, newLProfile, remapFunctionIDs, remapLocationIDs } from './legacy-model.js';
import { remapMappingIDs } from './mappings.js';
import { MAX_SEARCH_LINE, checkDigitRuns, scaleHeapSample, clip } from './heap.js';
import { type RecordLimits, checkRecord } from './limits.js';
import { Unrecognized, parseError, parseHexAddresses, parseInt0 } from './text.js';

const attributeRx = /([A-Za-z0-9_ ]+)=([A-Za-z0-9_ ]+)/;
// google/pprof's leading ` *` is dropped: it changes neither whether nor what the groups match.
const javaSampleRx = /(\d+) +(\d+) +@ +([ x0-9a-f]*)/;
// Lines are trimmed first, so google/pprof's trailing `\s*$` can only match the empty string.
const javaLocationRx = /^[\t\n\f\r ]*0x([0-9A-Fa-f]+)[\t\n\f\r ]+(.*)$/;
const javaLocationFileLineRx = /^(.*)[\t\n\f\r ]+\((.+):(-?[0-9]+)\)$/;
const javaLocationPathRx = /^(.*)[\t\n\f\r ]+\((.*)\)$/;
const JAVA_HEAPZ_SAMPLING_RATE = 524288n;

/** Complete lines (ending in `\n`) from `start`; the caller handles the unterminated rest. */
function* completeLines(text: string, start: number): Generator<{ line: string; begin: number; end: number }> {
  let b = start;
  for (;;) {
    const nl = text.indexOf('\n', b);
    if (nl < 0) return;
    yield { line: text.slice(b, nl), begin: b, end: nl + 1 };
    b = nl + 1;
  }
}

export type JavaKind = 'heap' | 'contention';

/**
 * Parses Java heapz/contentionz text (`lineBase` and `limits` as for `parseHeap`). With `only`,
 * a profile of the other kind is not recognized (it is passed on without reading its records).
 */
export function parseJavaProfile(text: string, lineBase = 0, limits?: RecordLimits, only?: JavaKind): { profile: LProfile; kind: JavaKind } {
  const nl = text.indexOf('\n');
  if (nl < 0) throw new Unrecognized('no newline');
  const header = text.slice(0, nl).trim();
  let kind: JavaKind;
  if (header === '--- heapz 1 ---') kind = 'heap';
  else if (header === '--- contentionz 1 ---') kind = 'contention';
  else throw new Unrecognized('no java profile header');
  if (only !== undefined && kind !== only) throw new Unrecognized(`a java ${kind} profile, not ${only}`);
  const p = newLProfile([], { type: '', unit: '' }, 0n);
  // Rows are visited in order: counting newlines on from the previous row keeps line numbers
  // linear in the text (counting from the start for every row was quadratic: 40k rows took 13 s).
  let atOffset = 0;
  let atLine = 1;
  const where = (offset: number) => {
    if (offset < atOffset) {
      atOffset = 0;
      atLine = 1;
    }
    for (let i = text.indexOf('\n', atOffset); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) atLine++;
    atOffset = offset;
    return lineBase + atLine;
  };

  // Header attributes.
  let pos = nl + 1;
  for (const { line: rawLine, begin, end } of completeLines(text, pos)) {
    const line = rawLine.trim();
    pos = begin;
    if (line !== '') {
      const h = line.includes('=') && line.length <= MAX_SEARCH_LINE ? attributeRx.exec(line) : null;
      if (!h) break;
      const attr = h[1]!.trim();
      const value = h[2]!.trim();
      switch (`${kind}/${attr}`) {
        case 'heap/format':
        case 'contention/format':
          if (value !== 'java') throw new Unrecognized('format is not java');
          break;
        case 'heap/resolution':
          p.sampleTypes = [
            { type: 'inuse_objects', unit: 'count' },
            { type: 'inuse_space', unit: value },
          ];
          break;
        case 'contention/resolution':
          p.sampleTypes = [
            { type: 'contentions', unit: 'count' },
            { type: 'delay', unit: value },
          ];
          break;
        case 'contention/sampling period': {
          p.periodType = { type: 'contentions', unit: 'count' };
          const v = parseInt0(value);
          if (v === undefined) throw parseError(`failed to parse attribute ${line}`, { line: where(begin), rule: 'sampling period is an integer' });
          p.period = v;
          break;
        }
        case 'contention/ms since reset': {
          const v = parseInt0(value);
          if (v === undefined) throw parseError(`failed to parse attribute ${line}`, { line: where(begin), rule: 'ms since reset is an integer' });
          p.durationNanos = BigInt.asIntN(64, v * 1000000n);
          break;
        }
        default:
          throw new Unrecognized(`java attribute ${attr}`);
      }
    }
    pos = end;
  }

  // Samples: `<value> <count> @ <ids>`.
  const locs = new Map<bigint, LLocation>();
  let totalFrames = 0;
  for (const { line: rawLine, begin, end } of completeLines(text, pos)) {
    const line = rawLine.trim();
    pos = begin;
    if (line !== '') {
      checkDigitRuns(line, where(begin));
      const sm = javaSampleRx.exec(line);
      if (!sm) break;
      const addrs = parseHexAddresses(sm[3]!, { line: where(begin) });
      const sloc = addrs.map((a) => javaLoc(p, locs, a, limits, begin, where));
      const v0 = parseInt0(sm[2]!);
      const v1 = parseInt0(sm[1]!);
      if (v0 === undefined || v1 === undefined) throw parseError(`parsing sample ${clip(line)}: value out of int64 range`, { line: where(begin), rule: 'values fit in int64' });
      let values: [bigint, bigint] = [v0, v1];
      let bytes: bigint | undefined;
      if (kind === 'heap') {
        if (v0 === 0n) throw parseError(`parsing sample ${clip(line)}: second value must be non-zero`, { line: where(begin), rule: 'java heap rows have a non-zero count' });
        bytes = v1 / v0;
        values = scaleHeapSample(v0, v1, JAVA_HEAPZ_SAMPLING_RATE);
      } else if (p.period !== 0n) {
        values = [BigInt.asIntN(64, v0 * p.period), BigInt.asIntN(64, v1 * p.period)];
      }
      totalFrames += sloc.length;
      checkRecord(limits, p.samples.length, sloc.length, where(begin), totalFrames);
      p.samples.push(bytes === undefined ? { values, locs: sloc } : { values, locs: sloc, bytes });
    }
    pos = end;
  }
  parseJavaLocations(text.slice(pos), locs, p, where(pos) - 1);
  if (p.samples.length > 0 && p.sampleTypes.length !== 2) {
    throw parseError(
      p.sampleTypes.length === 0 ? 'missing sample type information (no "resolution" attribute)' : 'sample value count does not match the sample types',
      { line: lineBase + 1, rule: 'java profiles declare "resolution = <unit>"' },
    );
  }
  for (const l of p.locations) l.address = 0n;
  return { profile: p, kind };
}

/**
 * The location of id `a`, made when first seen. Distinct ids are bounded by `maxTableEntries`
 * (a Map holds at most 2^24 entries; `maxTotalFrames` allows more), checked as each is added.
 */
function javaLoc(p: LProfile, locs: Map<bigint, LLocation>, a: bigint, limits: RecordLimits | undefined, begin: number, where: (offset: number) => number): LLocation {
  let loc = locs.get(a);
  if (!loc) {
    checkLocationCount(locs.size, limits?.maxTableEntries, where(begin));
    loc = { id: 0, address: a, mapping: undefined, line: undefined };
    locs.set(a, loc);
    p.locations.push(loc);
  }
  return loc;
}

/** google/pprof `parseJavaLocations`: symbolize locations from `0x<id> <frame text>` lines. */
export function parseJavaLocations(text: string, locs: Map<bigint, LLocation>, p: LProfile, lineBase = 0): void {
  // At most one function per location; names are keyed through StringKeyedMap (a frame text
  // longer than MAX_SEARCH_LINE is a name whole, and a Map hashes long strings by length alone).
  const fns = new StringKeyedMap<LFunction>();
  const lines = text.split('\n');
  lines.forEach((raw, k) => {
    const line = raw.trim();
    if (line === '') return;
    const jloc = javaLocationRx.exec(line);
    if (!jloc) return;
    if (jloc[1]!.length > 16 && BigInt('0x' + jloc[1]) > (1n << 64n) - 1n) {
      throw parseError(`parsing sample ${clip(line)}: id out of uint64 range`, { line: lineBase + k + 1, rule: 'location ids are 64-bit hex numbers' });
    }
    const addr = BigInt('0x' + jloc[1]);
    const loc = locs.get(addr);
    if (!loc) return;
    let lineFunc: string;
    let lineFile = '';
    let lineNo = 0;
    const body = jloc[2]!;
    let m: RegExpExecArray | null;
    // Frame texts longer than MAX_SEARCH_LINE are taken whole as the function name (linear time).
    const short = body.length <= MAX_SEARCH_LINE;
    if (short && (m = javaLocationFileLineRx.exec(body))) {
      lineFunc = m[1]!;
      lineFile = m[2]!;
      const n = Number(m[3]);
      if (Number.isSafeInteger(n) && n > 0) lineNo = n;
    } else if (short && (m = javaLocationPathRx.exec(body))) {
      lineFunc = m[1]!;
      lineFile = goBase(m[2]!);
    } else if (body.includes('generated stub/JIT')) {
      lineFunc = 'STUB';
    } else {
      lineFunc = body;
    }
    let fn = fns.get(lineFunc);
    if (!fn) {
      fn = { id: 0, name: lineFunc, systemName: lineFunc, filename: lineFile };
      fns.set(lineFunc, fn);
      p.functions.push(fn);
    }
    loc.line = { fn, line: lineNo };
    loc.address = 0n;
  });
  remapLocationIDs(p);
  remapFunctionIDs(p);
  remapMappingIDs(p);
}

/** Go `filepath.Base` on Unix. */
function goBase(path: string): string {
  if (path === '') return '.';
  let s = path.replace(/\/+$/, '');
  if (s === '') return '/';
  const i = s.lastIndexOf('/');
  if (i >= 0) s = s.slice(i + 1);
  return s;
}
