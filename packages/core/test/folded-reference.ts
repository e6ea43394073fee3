/** The reference the folded tests compare `foldedLines`/`foldedChunks` with: the obvious computation, sample by sample. */

import { ProfileIndex, locationFrames, type Profile } from '../src/node/index.js';

/** The folded text computed sample by sample: joined names, summed, sorted as strings. */
export function referenceFolded(p: Profile): string {
  const index = new ProfileIndex(p);
  const { offsets, location_id } = p.samples.locations;
  const col = p.samples['.values'][0]!;
  const sums = new Map<string, bigint>();
  for (let i = 0; i < col.length; i++) {
    const frames: string[] = [];
    for (let k = offsets[i + 1]! - 1; k >= offsets[i]!; k--) {
      // An id no location has prints nothing.
      const row = index.locations.get(location_id[k]!);
      if (row < 0) continue;
      const names = locationFrames(p, index, row).map((f) => (f.name || '[unknown]').replace(/;/g, ':').replace(/[\r\n]+/g, ' '));
      frames.push(...names.reverse());
    }
    if (frames.length === 0) continue;
    const key = frames.join(';');
    sums.set(key, (sums.get(key) ?? 0n) + col[i]!);
  }
  return [...sums.keys()]
    .filter((k) => sums.get(k) !== 0n)
    .sort()
    .map((k) => `${k} ${sums.get(k)}\n`)
    .join('');
}
