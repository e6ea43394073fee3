/** `toFolded`: Brendan Gregg's collapsed-stack format (`root;caller;leaf value`). */

import { ErrorCodes, ProfkitError } from '../errors.js';
import type { Profile } from '../model.js';
import { ProfileIndex, defaultSampleTypeIndex, locationFrames } from '../views.js';
import { buildStackTable } from './stack-table.js';
import { ReportTextBudget, joinReportText, type ReportLimits } from '../report-text.js';
import { StringKeyedMap } from '../string-keys.js';

/** A frame name made safe for the folded format: `;` would split frames, line breaks lines. */
function foldedName(name: string): string {
  return name.replace(/;/g, ':').replace(/[\r\n]+/g, ' ');
}

/**
 * Folded stacks of one sample type: one line per distinct stack, `root;...;leaf value`, inline
 * frames expanded (outermost first), values of identical stacks summed. Frames are function
 * names (`0x<address>` for unsymbolized locations, `[unknown]` when nothing is known); `;` in a
 * name becomes `:`. Samples without frames and stacks whose sum is 0 are omitted (negative
 * sums, e.g. from `diff`, are kept). Lines are sorted by stack text (code-unit order) and end
 * with `\n`. The text of `foldedLines`, joined.
 */
export function toFolded(p: Profile, sampleTypeIndex: number = defaultSampleTypeIndex(p)): string {
  // Writers call this: the text is bounded only by what one string holds (a typed error past it).
  const unbounded = { maxReportBytes: Infinity };
  return joinReportText('folded', foldedLines(p, sampleTypeIndex, unbounded), unbounded);
}

/**
 * The lines of `toFolded` one at a time, in its order, so that a large profile's text (hundreds
 * of megabytes when stacks share little) is written as it is made instead of held whole.
 * The stacks are sorted as their texts would sort without building those texts: comparing the
 * frame names of two stacks in turn gives the order of the joined strings (names hold no `;`).
 */
export function* foldedLines(p: Profile, sampleTypeIndex: number = defaultSampleTypeIndex(p), limits?: ReportLimits): Generator<string> {
  // A line prints every inline frame of its locations, each a name that many frames can share:
  // the text is counted (`maxReportBytes`), and each line's length checked before it is made.
  const budget = new ReportTextBudget('folded', limits, false);
  const col = p.samples['.values'][sampleTypeIndex];
  if (!col) {
    throw new ProfkitError(ErrorCodes.USAGE, `sample type index ${sampleTypeIndex} is out of range (the profile has ${p.sample_types.type.length} sample types)`, {
      option: 'sampleTypeIndex',
      rule: 'the sample type index must name an existing sample type',
    });
  }
  const index = new ProfileIndex(p);
  const stacks = buildStackTable(p, index, sampleTypeIndex);
  // Name ids of each location row's frames, root-most first.
  const names: string[] = [];
  const nameIds = new StringKeyedMap<number>();
  const locNames: (Int32Array | undefined)[] = new Array(p.locations.location_id.length);
  const namesOf = (r: number): Int32Array =>
    (locNames[r] ??= Int32Array.from(
      locationFrames(p, index, r)
        .map((f) => {
          const name = foldedName(f.name || '[unknown]');
          let id = nameIds.get(name);
          if (id === undefined) nameIds.set(name, (id = names.push(name) - 1));
          return id;
        })
        .reverse(),
    ));
  // The stacks with samples of their own, each as its location rows root first (CSR).
  const { prefix, frame, self } = stacks;
  const lineStacks: number[] = [];
  let rows = 0;
  for (let s = 0; s < stacks.length; s++) {
    if (!self[s]) continue;
    lineStacks.push(s);
    for (let a = s; a >= 0; a = prefix[a]!) rows++;
  }
  const offsets = new Uint32Array(lineStacks.length + 1);
  const locs = new Int32Array(rows);
  lineStacks.forEach((s, k) => {
    let depth = 0;
    for (let a = s; a >= 0; a = prefix[a]!) depth++;
    const start = offsets[k]!;
    offsets[k + 1] = start + depth;
    for (let a = s, i = start + depth - 1; a >= 0; a = prefix[a]!, i--) namesOf((locs[i] = frame[a]!));
  });
  // Two names of which neither starts the other compare as their ranks in the sorted names; a name
  // that starts another one starts the next one in that order.
  const sortedNames = Array.from(names.keys()).sort((a, b) => (names[a]! < names[b]! ? -1 : names[a]! > names[b]! ? 1 : 0));
  const rank = new Int32Array(names.length);
  const startsAnother = new Uint8Array(names.length);
  sortedNames.forEach((id, k) => {
    rank[id] = k;
    const after = sortedNames[k + 1];
    if (after !== undefined && names[after]!.startsWith(names[id]!)) startsAnother[id] = 1;
  });
  const order = Array.from(lineStacks.keys()).sort((x, y) => compareStackTexts(x, y));
  /** How stacks x and y compare as joined texts: name by name, then within the first names that differ. */
  function compareStackTexts(x: number, y: number): number {
    let ix = offsets[x]!;
    let iy = offsets[y]!;
    const endX = offsets[x + 1]!;
    const endY = offsets[y + 1]!;
    let jx = 0;
    let jy = 0;
    for (;;) {
      if (ix === endX || iy === endY) return (ix === endX ? 0 : 1) - (iy === endY ? 0 : 1);
      const nx = namesOf(locs[ix]!);
      const ny = namesOf(locs[iy]!);
      const a = nx[jx]!;
      const b = ny[jy]!;
      if (++jx === nx.length) (ix++, (jx = 0));
      if (++jy === ny.length) (iy++, (jy = 0));
      if (a === b) continue;
      if (!startsAnother[a] && !startsAnother[b]) return rank[a]! - rank[b]!;
      const sa = names[a]!;
      const sb = names[b]!;
      const common = Math.min(sa.length, sb.length);
      for (let c = 0; c < common; c++) if (sa.charCodeAt(c) !== sb.charCodeAt(c)) return sa.charCodeAt(c) - sb.charCodeAt(c);
      // One name starts the other: after the shorter comes ';' (more frames) or the end of the text.
      const next = (more: boolean) => (more ? SEPARATOR : -1);
      return sa.length < sb.length ? next(ix < endX) - sb.charCodeAt(common) : sa.charCodeAt(common) - next(iy < endY);
    }
  }
  const locText: (string | undefined)[] = new Array(locNames.length);
  const locTextLength = new Float64Array(locNames.length).fill(-1);
  const textLengthOf = (k: number): number => {
    let length = offsets[k + 1]! - offsets[k]! - 1;
    for (let i = offsets[k]!; i < offsets[k + 1]!; i++) {
      const r = locs[i]!;
      if (locTextLength[r]! < 0) {
        const ids = namesOf(r);
        let n = ids.length - 1;
        for (const id of ids) n += names[id]!.length;
        locTextLength[r] = n;
      }
      length += locTextLength[r]!;
    }
    return length;
  };
  const textOf = (k: number): string => {
    let text = '';
    for (let i = offsets[k]!; i < offsets[k + 1]!; i++) {
      const r = locs[i]!;
      text += (i === offsets[k] ? '' : ';') + (locText[r] ??= Array.from(namesOf(r), (n) => names[n]!).join(';'));
    }
    return text;
  };
  // Distinct stacks can print alike (equal names): sorted next to each other, summed.
  for (let i = 0; i < order.length; ) {
    let sum = 0n;
    let j = i;
    for (; j < order.length && (j === i || compareStackTexts(order[i]!, order[j]!) === 0); j++) sum += BigInt(self[lineStacks[order[j]!]!]!);
    if (sum !== 0n) {
      budget.reserve(textLengthOf(order[i]!));
      yield budget.take(`${textOf(order[i]!)} ${sum}\n`);
    }
    i = j;
  }
}

/** The code unit of `;`, the frame separator. */
const SEPARATOR = 59;
