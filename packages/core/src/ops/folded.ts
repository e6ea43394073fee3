/** `toFolded`: Brendan Gregg's collapsed-stack format (`root;caller;leaf value`). */

import { ErrorCodes, ProfkitError } from '../errors.js';
import type { Profile } from '../model.js';
import { ProfileIndex, defaultSampleTypeIndex, locationFrames } from '../views.js';

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
  // Frames of each location, root-most first, joined.
  const locText = new Map<number, string>();
  const textOf = (id: number): string => {
    let s = locText.get(id);
    if (s === undefined) {
      const r = index.locations.get(id);
      s = r < 0 ? '' : locationFrames(p, index, r).map((f) => foldedName(f.name || '[unknown]')).reverse().join(';');
      locText.set(id, s);
    }
    return s;
  };
  const sums = new Map<string, bigint>();
  const { offsets, location_id } = p.samples.locations;
  for (let i = 0; i < col.length; i++) {
    const v = col[i]!;
    if (v === 0n) continue;
    const parts: string[] = [];
    for (let k = offsets[i + 1]! - 1; k >= offsets[i]!; k--) {
      const t = textOf(location_id[k]!);
      if (t !== '') parts.push(t);
    }
    if (parts.length === 0) continue;
    const key = parts.join(';');
    sums.set(key, (sums.get(key) ?? 0n) + v);
  }
  const keys = [...sums.keys()].filter((k) => sums.get(k) !== 0n).sort();
  return keys.map((k) => `${k} ${sums.get(k)}\n`).join('');
}
