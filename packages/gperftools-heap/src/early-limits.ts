/**
 * Read limits checked while the input is read, not on the parsed profile: `maxSamples` and
 * `maxFramesPerStack` for the text formats (heap/growth, contention, Go count, threadz, Java).
 *
 * Before a text parser runs, a scanner walks the lines the way that parser walks them (same
 * header, attribute, blank/comment and end-of-records rules) but only classifies them: it counts
 * the records the parser would turn into samples and bounds the frames of each, and stops at the
 * first record that breaks a limit. The parser then reads only the lines before the first record
 * (header and attributes, so an input that is not of this format is still passed on to the next
 * parser and a bad header is still reported), and the limit error follows, naming the option and
 * the line of the record that broke it. An input over a limit therefore costs one cheap pass over
 * at most `maxSamples` records (a trim and a few character tests per line), nothing that grows
 * with the rest of the input, and no parsed samples. The other side of this: a malformed record
 * before the one that breaks the limit is not reported; the limit is.
 *
 * The exact frame count of a record is computed only when its text has more `0x` than the limit
 * allows, by running the real parser on that record alone. Mapping paths and Java function names
 * (`maxStringLength`) are substrings of the input (mapping lines over 8 KiB are not parsed at
 * all), so they are still checked on the parsed profile.
 */

import { limitError, type ProfkitError } from '@profkit/core';
import type { LProfile } from './legacy-model.js';
import { isMemoryMapSentinel } from './mappings.js';
import { MAX_SEARCH_LINE, parseHeap } from './heap.js';
import { parseContention } from './contention.js';
import { parseGoCount, parseThread } from './thread.js';
import { Unrecognized, hasLongDigitRun, isSpaceOrComment } from './text.js';

export interface EarlyLimits {
  maxSamples: number;
  maxFramesPerStack: number;
}

/**
 * Where a text input breaks a limit: the parser reads `lines` (line-based formats) or `text`
 * (Java), the input up to its first record, in place of the whole input (to recognize the format
 * and check the header), then `error` is thrown.
 */
export interface TextCut {
  lines: string[];
  text: string;
  error: ProfkitError;
}

/** A line that ends a thread profile's stacks (google/pprof: `---- no stack trace for`). */
const THREAD_END = '---- no stack trace for';

// Patterns the parsers keep private, repeated here to find where their records start and end:
// thread.ts (threadz and section headers) and java.ts (attributes and sample rows). The tests
// check that these scanners count exactly the samples the parsers produce.
const threadzStartRx = /--- threadz \d+ ---/;
const threadStartRx = /--- Thread ([0-9A-Fa-f]+) \(name: (.*)\/(\d+)\) stack: ---/;
const javaAttributeRx = /([A-Za-z0-9_ ]+)=([A-Za-z0-9_ ]+)/;
const javaSampleRx = /(\d+) +(\d+) +@ +([ x0-9a-f]*)/;
const hexNumberRx = /0x[0-9a-f]+/g;

/** Occurrences of `0x`: an upper bound on the addresses a line holds (every address starts so). */
export function countHexPrefixes(s: string): number {
  let n = 0;
  for (let i = s.indexOf('0x'); i >= 0; i = s.indexOf('0x', i + 2)) n++;
  return n;
}

function samplesError(max: number, line: number): ProfkitError {
  return limitError('maxSamples', `more than ${max} samples`, max, { line });
}

function framesError(sample: number, frames: number, max: number, line: number): ProfkitError {
  return limitError('maxFramesPerStack', `sample ${sample} with ${frames} frames`, max, { line });
}

/** Frames of the one sample `parse` yields, or undefined when it fails (the full parse reports that). */
function framesOf(parse: () => LProfile): number | undefined {
  try {
    const p = parse();
    return p.samples.length === 1 ? p.samples[0]!.locs.length : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `parse` accepts the header (the parser's own test; header-sized input, so cheap). */
function recognizes(parse: () => unknown): boolean {
  try {
    parse();
    return true;
  } catch (e) {
    if (e instanceof Unrecognized) return false;
    return true;
  }
}

/**
 * Counts the records of a line-based format from `start` (every line that is not blank or a
 * comment, until `isEnd`; the parser turns each into a sample or fails on it), checking both limits. `exactFrames` gives a record's frame count when
 * the cheap bound exceeds the limit.
 */
function scanRows(
  lines: string[],
  start: number,
  lineBase: number,
  lim: EarlyLimits,
  trim: boolean,
  isEnd: (line: string) => boolean,
  exactFrames: (raw: string) => number | undefined,
): TextCut | null {
  let n = 0;
  for (let i = start; i < lines.length; i++) {
    const line = trim ? lines[i]!.trim() : lines[i]!;
    if (isSpaceOrComment(line)) continue;
    if (isEnd(line)) break;
    if (++n > lim.maxSamples) return { lines: lines.slice(0, start), text: '', error: samplesError(lim.maxSamples, lineBase + i + 1) };
    if (countHexPrefixes(line) > lim.maxFramesPerStack) {
      const f = exactFrames(lines[i]!);
      if (f !== undefined && f > lim.maxFramesPerStack) {
        return { lines: lines.slice(0, start), text: '', error: framesError(n, f, lim.maxFramesPerStack, lineBase + i + 1) };
      }
    }
  }
  return null;
}

/** Heap/growth/fragmentation text (`parseHeap`): every non-blank line up to the memory map is a record. */
export function scanHeap(lines: string[], lineBase: number, lim: EarlyLimits): TextCut | null {
  if (lines.length === 0) return null;
  const header = lines[0]!;
  if (!recognizes(() => parseHeap([header]))) return null;
  return scanRows(lines, 1, lineBase, lim, true, isMemoryMapSentinel, (raw) => framesOf(() => parseHeap([header, raw]).profile));
}

/** Contention text (`parseContention`): `key = value` attributes, then records up to a `---` line. */
export function scanContention(lines: string[], lineBase: number, lim: EarlyLimits): TextCut | null {
  if (lines.length === 0) return null;
  const header = lines[0]!;
  if (!recognizes(() => parseContention([header]))) return null;
  let i = 1;
  for (; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (isSpaceOrComment(line)) continue;
    if (line.startsWith('---') || !line.includes('=')) break;
  }
  return scanRows(
    lines,
    i,
    lineBase,
    lim,
    true,
    (line) => line.startsWith('---'),
    // A record line with `=` would read as an attribute on its own: leave it to the parsed-profile check.
    (raw) => (raw.includes('=') ? undefined : framesOf(() => parseContention([header, raw]).profile)),
  );
}

/** Go count profiles (`parseGoCount`): a `<type> profile: total N` header, then records up to a `---` line. */
export function scanGoCount(lines: string[], lineBase: number, lim: EarlyLimits): TextCut | null {
  let h = 0;
  while (h < lines.length && isSpaceOrComment(lines[h]!)) h++;
  if (h >= lines.length) return null;
  const header = lines[h]!;
  if (!recognizes(() => parseGoCount([header]))) return null;
  return scanRows(lines, h + 1, lineBase, lim, false, (line) => line.startsWith('---'), (raw) => framesOf(() => parseGoCount([header, raw])));
}

/**
 * Thread profiles (`parseThread`): `--- Thread … stack: ---` sections. A section is a sample
 * unless it has no address or says "same as previous thread" (then it adds to the previous one);
 * the parser drops at most one duplicated leaf frame afterwards, so a section is over the frame
 * limit early only when its exact frame count (the parser run on that section) is.
 */
export function scanThread(lines: string[], lineBase: number, lim: EarlyLimits): TextCut | null {
  let idx = -1;
  const scan = () => idx + 1 < lines.length && (++idx, true);
  while (scan() && isSpaceOrComment(lines[idx]!));
  if (idx < 0) return null;
  let line = lines[idx]!;
  if (threadzStartRx.test(line)) {
    // `--- threadz N ---`: skip to the first section.
    while (scan()) {
      line = lines[idx]!;
      if (isMemoryMapSentinel(line) || line.startsWith('-')) break;
    }
  } else if (!threadStartRx.test(line)) {
    return null;
  }
  let n = 0;
  const first = idx;
  while (!isMemoryMapSentinel(line)) {
    if (line.startsWith(THREAD_END)) break;
    // Not a section header: the parser's error, which it reports (before any cut).
    if (!threadStartRx.test(line)) return null;
    const start = idx;
    let same = false;
    let hasAddress = false;
    let hex = 0;
    let next = '';
    while (scan()) {
      next = lines[idx]!.trim();
      if (next === '') continue;
      if (next.startsWith('---')) break;
      if (next.includes('same as previous thread')) {
        same = true;
        continue;
      }
      const h = countHexPrefixes(next);
      if (h > 0) {
        hex += h;
        if (!hasAddress) hasAddress = /0x[0-9a-f]/.test(next);
      }
    }
    const end = next.startsWith('---') ? idx : lines.length;
    line = next;
    if (same || !hasAddress) continue;
    if (++n > lim.maxSamples) return { lines: windowOfThreads(lines, first), text: '', error: samplesError(lim.maxSamples, lineBase + start + 1) };
    if (hex > lim.maxFramesPerStack) {
      const f = framesOf(() => parseThread([...lines.slice(start, end), THREAD_END]));
      if (f !== undefined && f > lim.maxFramesPerStack) {
        return { lines: windowOfThreads(lines, first), text: '', error: framesError(n, f, lim.maxFramesPerStack, lineBase + start + 1) };
      }
    }
  }
  return null;
}

/** The lines up to the first section's header, ended so that the parser stops there cleanly. */
function windowOfThreads(lines: string[], first: number): string[] {
  const w = lines.slice(0, first + 1);
  w.push(THREAD_END);
  return w;
}

/** Java `--- heapz 1 ---` / `--- contentionz 1 ---` text (`parseJavaProfile`), on the text itself. */
export function scanJava(text: string, lineBase: number, lim: EarlyLimits): TextCut | null {
  const nl = text.indexOf('\n');
  if (nl < 0) return null;
  const header = text.slice(0, nl).trim();
  if (header !== '--- heapz 1 ---' && header !== '--- contentionz 1 ---') return null;
  let b = nl + 1;
  let lineNo = 2;
  let inSamples = false;
  let first = 0;
  let n = 0;
  for (let e = text.indexOf('\n', b); e >= 0; b = e + 1, e = text.indexOf('\n', b), lineNo++) {
    const line = text.slice(b, e).trim();
    if (line === '') continue;
    if (!inSamples) {
      const attr = line.includes('=') && line.length <= MAX_SEARCH_LINE && javaAttributeRx.test(line);
      if (attr) continue;
      inSamples = true;
      first = b;
    }
    // The parser refuses this line (checkDigitRuns) before any limit matters.
    if (hasLongDigitRun(line)) return null;
    const sm = javaSampleRx.exec(line);
    if (!sm) return null;
    const window = () => text.slice(0, first);
    if (++n > lim.maxSamples) return { lines: [], text: window(), error: samplesError(lim.maxSamples, lineBase + lineNo) };
    if (countHexPrefixes(sm[3]!) > lim.maxFramesPerStack) {
      let f = 0;
      for (const _ of sm[3]!.matchAll(hexNumberRx)) f++;
      if (f > lim.maxFramesPerStack) return { lines: [], text: window(), error: framesError(n, f, lim.maxFramesPerStack, lineBase + lineNo) };
    }
  }
  return null;
}
