/**
 * The hash table of the decoder's `aggregate` read option: the distinct samples (location ids and
 * labels) met so far, so that a sample equal to one of them adds its values to it instead of
 * taking a row of its own. The table holds row numbers only; the rows themselves are the
 * decoder's sample columns, which the decoder compares (`sameAsCandidate`).
 *
 * Bounded work whatever the input: the hash is seeded per decode, and one lookup visits at most
 * `MAX_PROBES` slots and compares at most `MAX_COMPARES` rows of equal hash. A lookup that gives
 * up (only a crafted input, or astronomically bad luck, makes one) leaves the sample a row of its
 * own, outside the table: the profile then has two equal samples, which every view sums alike.
 */

/** Slots one lookup visits at most (linear probing at a load ≤ 1/2 visits ~2 on average). */
const MAX_PROBES = 64;
/** Rows of equal 32-bit hash one lookup compares at most. */
const MAX_COMPARES = 8;
/** `lookup`'s answer when the sample is in no row and may take a new one (`add`). */
export const ABSENT = -1;
/** `lookup`'s answer when it gave up: the sample takes a new row, outside the table. */
export const GAVE_UP = -2;

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

/** One 32-bit word into the running hash `h` (MurmurHash3's block step). */
export function mixWord(h: number, w: number): number {
  let k = Math.imul(w, C1);
  k = (k << 15) | (k >>> 17);
  h ^= Math.imul(k, C2);
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

/** The final avalanche of a hash of `n` words (MurmurHash3's fmix32). */
export function finishHash(h: number, n: number): number {
  h ^= n;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * A seed for one decode's hashes (any source of bits will do: the bounds above hold anyway).
 * `Math.random`, as core's stack table seeds its hashes: on Node, `crypto.getRandomValues` loads
 * the WebCrypto implementation on first use, ~1.9 ms of a `profkit top` of a small profile.
 */
export function hashSeed(): number {
  return (Math.random() * 4294967296) | 0;
}

export class SampleTable {
  /** Row + 1 of each slot (0: empty); a power of two, at least twice the rows in it. */
  private slots = new Int32Array(1024);
  private inTable = 0;
  /** The hash of every row, also of rows left outside (so that rows and hashes stay aligned). */
  private hashes = new Uint32Array(1024);
  private tracked = new Uint8Array(1024);
  /** The slot where `lookup` found the sample absent, for `add`. */
  private freeSlot = -1;
  /** Distinct samples (rows) so far. */
  rows = 0;
  readonly seed = hashSeed();

  /**
   * The row holding a sample of hash `hash` equal to the candidate (`same(row)` tells), else
   * `ABSENT` (then `add(hash, true)` gives it a row in the table) or `GAVE_UP`.
   */
  lookup(hash: number, same: (row: number) => boolean): number {
    this.freeSlot = -1;
    const slots = this.slots;
    const mask = slots.length - 1;
    const hashes = this.hashes;
    let compares = 0;
    for (let i = hash & mask, probes = 0; probes < MAX_PROBES; i = (i + 1) & mask, probes++) {
      const r = slots[i]! - 1;
      if (r < 0) {
        this.freeSlot = i;
        return ABSENT;
      }
      if (hashes[r] === hash) {
        if (same(r)) return r;
        if (++compares === MAX_COMPARES) break;
      }
    }
    return GAVE_UP;
  }

  /**
   * A new row for a sample of hash `hash`: in the table (`intoTable`, after `lookup` answered
   * `ABSENT` for it), else outside (no later sample merges into it).
   */
  add(hash: number, intoTable: boolean): number {
    const row = this.rows++;
    if (row === this.hashes.length) {
      this.hashes = grown32(this.hashes, 2 * row);
      const t = new Uint8Array(2 * row);
      t.set(this.tracked);
      this.tracked = t;
    }
    this.hashes[row] = hash;
    if (intoTable && this.freeSlot >= 0) {
      this.slots[this.freeSlot] = row + 1;
      this.tracked[row] = 1;
      this.freeSlot = -1;
      if (2 * ++this.inTable > this.slots.length) this.rehash();
    }
    return row;
  }

  /** Twice the slots, the rows of the table put in again. */
  private rehash(): void {
    const slots = new Int32Array(2 * this.slots.length);
    const mask = slots.length - 1;
    this.inTable = 0;
    for (let r = 0; r < this.rows; r++) {
      if (this.tracked[r] === 0) continue;
      let i = this.hashes[r]! & mask;
      let probes = 0;
      while (slots[i] !== 0 && probes < MAX_PROBES) {
        i = (i + 1) & mask;
        probes++;
      }
      // A row that no lookup could reach within MAX_PROBES is left out (it stays a row).
      if (slots[i] !== 0) this.tracked[r] = 0;
      else {
        slots[i] = r + 1;
        this.inTable++;
      }
    }
    this.slots = slots;
  }
}

/** `a` copied into a new array of `length` elements. */
export function grown32<T extends Uint32Array | Int32Array>(a: T, length: number): T {
  const b = new (a.constructor as new (n: number) => T)(length);
  b.set(a.subarray(0, Math.min(a.length, length)));
  return b;
}
