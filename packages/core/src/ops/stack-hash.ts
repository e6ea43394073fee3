/**
 * The hash and equality of a sample's location ids, for the tables that merge the samples of equal
 * stacks (`folded`'s walk, the flame cut's members).
 */

/**
 * A hash of location ids `ids[start .. end]`, `seed` drawn per table: with a fixed hash an input
 * could choose location ids whose stacks all hash alike, and the probes would grow as the square of
 * the samples. A seed alone is not enough: xor, shifts and odd multiplications carry a difference
 * in bit 31 unchanged, so ids xored with 2^31, 2^31, 2^16, 2 in four entries in a row cancelled
 * whatever the seed (2^k stacks of 4k entries, one hash), and without the final mix a slot (the
 * low bits) followed the low bits of the last id alone. Each id is mixed with the seed first:
 * how a difference comes out of that depends on the seed's carries, unknown to the input.
 */
export function locationIdsHash(ids: Uint32Array, start: number, end: number, seed: number): number {
  let h = seed ^ (end - start);
  for (let k = start; k < end; k++) h = Math.imul(h ^ seededWord(ids[k]!, seed), 0x9e3779b1) ^ (h >>> 15);
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

/**
 * A 32-bit word mixed with `seed` before it enters a hash (see `locationIdsHash`): a difference
 * between two words comes out as the seed's carries make it, so an input cannot choose words whose
 * differences cancel further on.
 */
export function seededWord(x: number, seed: number): number {
  x = Math.imul(x ^ seed, 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return x ^ (x >>> 16);
}
