/**
 * `SampleCombiner` (merging equal samples: `merge`, `compact`, loading as `go tool pprof` does)
 * hashes labels and stacks that come from the input: label values made to collide under a fixed
 * hash must still land apart.
 */
import { describe, expect, it } from 'vitest';
import { SampleCombiner, labelKey } from '../src/ops/internal.js';
import { StringKeys } from '../src/string-keys.js';

/** FNV-1a over `s` from state `h` (the combiner's label hash before it was seeded). */
function fnv(h: number, s: string): number {
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * `blocks` pairs of 5-letter words, each pair bringing FNV-1a from the state the earlier ones leave
 * to one state: the 2^blocks values made of one word of each pair all hash alike.
 */
function collidingBlocks(prefix: string, blocks: number): [string, string][] {
  let state = fnv(0x811c9dc5, prefix);
  // Pseudo-random words of 5 of 36 characters (a pair turns up after about 2^16, the birthday bound).
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  let random = 99;
  const character = () => alphabet[((random = (Math.imul(random, 1103515245) + 12345) >>> 0) >>> 16) % 36]!;
  const out: [string, string][] = [];
  while (out.length < blocks) {
    const seen = new Map<number, string>();
    for (let n = 0; n < 5e6; n++) {
      const w = character() + character() + character() + character() + character();
      const h = fnv(state, w);
      const other = seen.get(h);
      if (other !== undefined && other !== w) {
        out.push([other, w]);
        state = h;
        break;
      }
      seen.set(h, w);
    }
    if (seen.size >= 5e6) throw new Error('no colliding pair found');
  }
  return out;
}

describe('SampleCombiner', () => {
  it('keeps samples apart whose label values collide under unseeded FNV-1a (one bucket for all before)', () => {
    // The label key's text up to the value: the value's words then follow from that state.
    const empty = labelKey([{ key: 'k', str: '' }], new StringKeys());
    const prefix = empty.slice(0, empty.indexOf('""') + 1);
    const blocks = collidingBlocks(prefix, 10);
    const values = Array.from({ length: 1 << blocks.length }, (_, i) => blocks.map((pair, j) => pair[(i >> j) & 1]).join(''));
    // The construction is right: every value's label key has one unseeded hash.
    expect(new Set(values.map((v) => fnv(0x811c9dc5, labelKey([{ key: 'k', str: v }], new StringKeys())))).size).toBe(1);
    const combiner = new SampleCombiner(1);
    for (const [row, v] of values.entries()) combiner.add([1], 1, () => 1n, [{ key: 'k', str: v }], 0, row);
    // Buckets (one per distinct hash): 1,024 random 32-bit hashes hardly ever share one.
    const buckets = (combiner as unknown as { buckets: Map<number, unknown> }).buckets;
    expect(buckets.size).toBeGreaterThan(values.length - 4);
  });
});
