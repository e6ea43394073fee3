/**
 * Map keys for strings of any length. V8 hashes a string longer than 16,383 UTF-16 code units by
 * its length alone, so a `Map` holding many distinct long strings of one length keeps them in one
 * hash chain and every lookup compares against all of them: 2,000 keys of 17,000 characters take
 * 13.6 s to insert instead of 0.2 s, and a profile whose 2,000 functions share one 100 KB name
 * (a 160 KB pprof file: the builder keys a function by its name, system name and file together)
 * took a minute to load. `StringKeys.of(s)` gives a short key, equal for equal strings and
 * different for different ones, to use in such maps.
 */

/** Strings up to this length are their own key (and keep composite keys under V8's 16,383). */
const DIRECT_KEY_LENGTH = 4096;
/** Marks a key that is not the string itself. */
const MARK = '\u0001';
const MARK_CODE = 1;

/** Short keys for strings, one set per map (ids are not shared between instances). */
export class StringKeys {
  private readonly buckets = new Map<string, { s: string; key: string }[]>();
  private count = 0;
  // Seeds of the hash, random per instance: an input cannot choose strings that share a bucket.
  private readonly seedA = (Math.random() * 0x1_0000_0000) >>> 0;
  private readonly seedB = (Math.random() * 0x1_0000_0000) >>> 0;

  /** The key of `s`: `s` itself when short (escaped when it starts with the mark), else `MARK#id`. */
  of(s: string): string {
    if (s.length <= DIRECT_KEY_LENGTH) return s.startsWith(MARK) ? MARK + s : s;
    const sample = this.bucketOf(s);
    let bucket = this.buckets.get(sample);
    if (!bucket) this.buckets.set(sample, (bucket = []));
    // Equal strings (the same name used again) usually are the same object: `===` is then O(1).
    for (const e of bucket) if (e.s === s) return e.key;
    const key = `${MARK}#${++this.count}`;
    bucket.push({ s, key });
    return key;
  }

  /** The key `of(s)` has given out, or undefined: a lookup that keeps nothing (a miss adds no entry). */
  find(s: string): string | undefined {
    if (s.length <= DIRECT_KEY_LENGTH) return s.startsWith(MARK) ? MARK + s : s;
    const bucket = this.buckets.get(this.bucketOf(s));
    if (bucket) for (const e of bucket) if (e.s === s) return e.key;
    return undefined;
  }

  /** Forgets `s`: its key is not kept (nor given out again), nor the string. */
  forget(s: string): void {
    if (s.length <= DIRECT_KEY_LENGTH) return;
    const sample = this.bucketOf(s);
    const bucket = this.buckets.get(sample);
    const at = bucket ? bucket.findIndex((e) => e.s === s) : -1;
    if (at < 0) return;
    bucket!.splice(at, 1);
    if (bucket!.length === 0) this.buckets.delete(sample);
  }

  /** How many buckets the long strings fill (one per distinct string but for hash collisions). */
  get bucketCount(): number {
    return this.buckets.size;
  }

  /**
   * The bucket of a long string: its length and a 64-bit seeded hash of every code unit. The whole
   * string is read (a sample of it would put strings that differ only where it does not look in
   * one bucket, each lookup then comparing against all of them); reading it costs what making it
   * cost, once per lookup.
   */
  private bucketOf(s: string): string {
    let a = this.seedA;
    let b = this.seedB;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      a = Math.imul(a ^ c, 0x9e3779b1);
      b = Math.imul(b ^ c, 0x85ebca77);
      a ^= a >>> 15;
      b ^= b >>> 13;
    }
    return `${s.length}:${a >>> 0}:${b >>> 0}`;
  }
}

/**
 * A `Map` from strings that stays fast when keys are long (see `StringKeys`): for readers that
 * index names, paths or stack texts of the input.
 */
export class StringKeyedMap<V> {
  private keys = new StringKeys();
  private readonly map = new Map<string, V>();

  clear(): void {
    this.map.clear();
    this.keys = new StringKeys();
  }

  get size(): number {
    return this.map.size;
  }

  // get, has and delete look a long key up without interning it: a miss keeps no entry (nor the
  // string) in `keys`, however many absent keys are asked for.
  get(key: string): V | undefined {
    const k = this.foundKeyOf(key);
    return k === undefined ? undefined : this.map.get(k);
  }

  has(key: string): boolean {
    const k = this.foundKeyOf(key);
    return k !== undefined && this.map.has(k);
  }

  set(key: string, value: V): this {
    this.map.set(this.keyOf(key), value);
    return this;
  }

  /** Removes `key`; true if it was there. */
  delete(key: string): boolean {
    const k = this.foundKeyOf(key);
    if (k === undefined) return false;
    const had = this.map.delete(k);
    if (key.length > DIRECT_KEY_LENGTH) this.keys.forget(key);
    return had;
  }

  /** `this.keys.find(key)`, the common short case inlined as in `keyOf`. */
  private foundKeyOf(key: string): string | undefined {
    return key.length <= DIRECT_KEY_LENGTH && key.charCodeAt(0) !== MARK_CODE ? key : this.keys.find(key);
  }

  /**
   * `this.keys.of(key)`, with its common case inlined: readers look up a short key per input line
   * (the Rprof trace cache, 166k lookups), where the extra call was measurable.
   */
  private keyOf(key: string): string {
    return key.length <= DIRECT_KEY_LENGTH && key.charCodeAt(0) !== MARK_CODE ? key : this.keys.of(key);
  }

  /** The values, in insertion order. */
  values(): IterableIterator<V> {
    return this.map.values();
  }
}
