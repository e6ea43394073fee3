/**
 * `locationIdsHash`, the hash of the tables merging equal stacks (folded's walk, the flame cut):
 * stacks chosen to collide whatever the seed, their last ids differing only above the slot bits,
 * spread over the slots.
 */
import { describe, expect, it } from 'vitest';
import { locationIdsHash, sameLocationIds } from '../src/ops/stack-hash.js';

describe('locationIdsHash', () => {
  it('spreads stacks whose last location ids differ only above the slot bits over the slots (no single slot for them whatever the seed)', () => {
    // 4,096 stacks [7, 9, j << 20] (a table of 2^14 slots holds as many): before the final mix,
    // the slot was the low bits of (state ^ last id) times an odd constant, so all 4,096 shared one.
    const stacks = 4096;
    const mask = (1 << 14) - 1;
    const ids = new Uint32Array(3 * stacks);
    for (let j = 0; j < stacks; j++) ids.set([7, 9, (j << 20) >>> 0], 3 * j);
    for (const seed of [0, 1, -0x21524111, 0x5bd1e995]) {
      const slots = new Set<number>();
      for (let j = 0; j < stacks; j++) slots.add(locationIdsHash(ids, 3 * j, 3 * j + 3, seed) & mask);
      // Uniform hashing fills ~3,600 distinct slots of 16,384 with 4,096 keys.
      expect(slots.size, `seed ${seed}`).toBeGreaterThan(3000);
    }
  });

  it('hashes apart stacks whose differences cancel under xor and odd multiplications (ids xored with 2^31, 2^31, 2^16, 2 in four entries in a row)', () => {
    // 4,096 stacks of 12 such blocks, each block toggled or not: before each id was mixed with
    // the seed, the difference of a block cancelled within it and every stack had one hash.
    const blocks = 12;
    const length = 4 * blocks;
    const stacks = 1 << blocks;
    const xors = [0x80000000, 0x80000000, 0x10000, 0x2];
    const ids = new Uint32Array(stacks * length);
    for (let i = 0; i < stacks; i++) {
      for (let k = 0; k < length; k++) ids[i * length + k] = (100 + k) ^ ((i >> (k >> 2)) & 1 ? xors[k & 3]! : 0);
    }
    for (const seed of [0, 1, -0x21524111, 0x5bd1e995]) {
      const hashes = new Set<number>();
      for (let i = 0; i < stacks; i++) hashes.add(locationIdsHash(ids, i * length, (i + 1) * length, seed));
      // 4,096 random 32-bit hashes: about 0.002 pairs alike.
      expect(hashes.size, `seed ${seed}`).toBeGreaterThan(stacks - 8);
    }
  });

  it('compares location id ranges', () => {
    const ids = new Uint32Array([1, 2, 3, 1, 2, 3, 1, 2]);
    expect(sameLocationIds(ids, 0, 3, 3, 6)).toBe(true);
    expect(sameLocationIds(ids, 0, 3, 6, 8)).toBe(false);
    expect(sameLocationIds(ids, 0, 2, 1, 3)).toBe(false);
  });
});
