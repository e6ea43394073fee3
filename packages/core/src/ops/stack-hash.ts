/**
 * The hash and equality of a sample's location ids, for the tables that merge the samples of equal
 * stacks (`folded`'s walk, the flame cut's members).
 */

/**
 * A hash of location ids `ids[start .. end]`, `seed` drawn per table: with a fixed hash an input
 * could choose location ids whose stacks all hash alike, and the probes would grow as the square of
 * the samples. The final mix matters as much: without it a slot (the hash's low bits) depends on
 * the low bits of the last id alone, so stacks whose last ids differ only above the slot bits
 * (0x100000, 0x200000, …) share one slot whatever the seed (65,536 samples: 12x the time).
 */
export function locationIdsHash(ids: Uint32Array, start: number, end: number, seed: number): number {
  let h = seed ^ (end - start);
  for (let k = start; k < end; k++) h = Math.imul(h ^ ids[k]!, 0x9e3779b1) ^ (h >>> 15);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** Whether location ids `ids[a .. aEnd]` and `ids[b .. bEnd]` are equal. */
export function sameLocationIds(ids: Uint32Array, a: number, aEnd: number, b: number, bEnd: number): boolean {
  if (aEnd - a !== bEnd - b) return false;
  for (let k = 0; k < aEnd - a; k++) if (ids[a + k] !== ids[b + k]) return false;
  return true;
}
