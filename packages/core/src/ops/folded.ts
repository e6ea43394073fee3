/** `toFolded`: Brendan Gregg's collapsed-stack format (`root;caller;leaf value`). */

import { ErrorCodes, ProfkitError } from '../errors.js';
import type { Profile } from '../model.js';
import { ProfileIndex, defaultSampleTypeIndex, locationFrames } from '../views.js';
import { buildStackTable } from './stack-table.js';

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
 * with `\n`.
 */
export function toFolded(p: Profile, sampleTypeIndex: number = defaultSampleTypeIndex(p)): string {
  const col = p.samples['.values'][sampleTypeIndex];
  if (!col) {
    throw new ProfkitError(ErrorCodes.USAGE, `sample type index ${sampleTypeIndex} is out of range (the profile has ${p.sample_types.type.length} sample types)`, {
      option: 'sampleTypeIndex',
      rule: 'the sample type index must name an existing sample type',
    });
  }
  const index = new ProfileIndex(p);
  const stacks = buildStackTable(p, index, sampleTypeIndex);
  // Frames of each location, root-most first, joined.
  const locText = new Map<number, string>();
  const textOf = (r: number): string => {
    let s = locText.get(r);
    if (s === undefined) {
      s = locationFrames(p, index, r).map((f) => foldedName(f.name || '[unknown]')).reverse().join(';');
      locText.set(r, s);
    }
    return s;
  };
  // One line per stack with samples of its own; distinct stacks can print alike (equal names).
  const sums = new Map<string, bigint>();
  const { prefix, frame, self } = stacks;
  const parts: string[] = [];
  for (let s = 0; s < stacks.length; s++) {
    const v = self[s]!;
    if (!v) continue;
    parts.length = 0;
    for (let a = s; a >= 0; a = prefix[a]!) parts.push(textOf(frame[a]!));
    const key = parts.reverse().join(';');
    sums.set(key, (sums.get(key) ?? 0n) + BigInt(v));
  }
  const keys = [...sums.keys()].filter((k) => sums.get(k) !== 0n).sort();
  return keys.map((k) => `${k} ${sums.get(k)}\n`).join('');
}
