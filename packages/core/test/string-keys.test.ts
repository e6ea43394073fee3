/**
 * `StringKeys` and the maps keyed by it. V8 hashes strings longer than 16,383 code units by their
 * length only, so a Map of many distinct long strings of one length is searched linearly: the
 * builder keyed a function by name + system name + file, so 3,000 functions sharing one 40 KB
 * name (a 130 KB pprof file) made one hash chain of 3,000 keys of 80 KB each (minutes of
 * comparisons before these keys; the test below would not finish in vitest's time).
 */

import { describe, expect, it } from 'vitest';
import { ProfileBuilder, StringKeyedMap, StringKeys, callgrindReport, goGraph, renderFlameGraph, toFolded, topReport } from '../src/index.js';
import { compareGoStrings } from '../src/ops/internal.js';

describe('StringKeys', () => {
  it('equal strings have equal keys, different strings different keys, at any length', () => {
    const keys = new StringKeys();
    const long = 'x'.repeat(50_000);
    // Differences in one character anywhere, also where no sampled chunk looks.
    const variants = [long, ...Array.from({ length: 200 }, (_, i) => long.slice(0, i * 250) + 'y' + long.slice(i * 250 + 1))];
    const ks = variants.map((s) => keys.of(s));
    expect(new Set(ks).size).toBe(variants.length);
    // The same content in another string object has the same key.
    expect(variants.map((s) => keys.of(s.split('').join('')))).toEqual(ks);
    for (const k of ks) expect(k.length).toBeLessThan(100);
  });

  it('strings that differ in one character, anywhere, fall in different buckets (no hash chain to search)', () => {
    const keys = new StringKeys();
    const long = 'x'.repeat(30_000);
    // One position per string, as a crafted input would choose: a bucket chosen by sampling parts
    // of the string put most of these in one bucket, searched string by string on every lookup.
    const at = [0, 7_777, 15_000, 29_999];
    let n = 0;
    for (const p of at) {
      for (let c = 0; c < 100; c++) {
        keys.of(long.slice(0, p) + String.fromCharCode(0x100 + c) + long.slice(p + 1));
        n++;
      }
    }
    expect(keys.bucketCount).toBe(n);
  });

  it('short strings are their own key, and never equal a long string\'s key', () => {
    const keys = new StringKeys();
    const longKey = keys.of('z'.repeat(20_000));
    expect(keys.of('main')).toBe('main');
    // A short string spelled like a long string's key gets a key of its own.
    expect(keys.of(longKey)).not.toBe(longKey);
    expect(keys.of(longKey)).toBe(keys.of(longKey));
    expect(keys.of('\u0001')).not.toBe(keys.of('\u0001\u0001'));
  });

  it('StringKeyedMap: a short key spelled like a long key\'s inner key is a different entry', () => {
    const map = new StringKeyedMap<number>();
    const long = 'z'.repeat(20_000);
    map.set(long, 1);
    const inner = new StringKeys().of(long); // the spelling of the map's first long key
    expect(map.get(inner)).toBeUndefined();
    map.set(inner, 2).set('\u0001', 3).set('', 4);
    expect([map.get(long), map.get(inner), map.get('\u0001'), map.get(''), map.get('\u0001\u0001')]).toEqual([1, 2, 3, 4, undefined]);
    expect(map.size).toBe(4);
  });
});

describe('ProfileBuilder with long names', () => {
  it('3,000 functions sharing one 40 KB name: distinct files are distinct functions, equal ones the same', () => {
    const name = 'n'.repeat(40_000);
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const ids = Array.from({ length: 3000 }, (_, i) => b.internFunction({ name, filename: `f${i}.go` }));
    expect(new Set(ids).size).toBe(3000);
    expect(b.internFunction({ name: name.slice(0, 20_000) + name.slice(20_000), filename: 'f7.go' })).toBe(ids[7]);
    // A location of many inline lines has a long key too.
    const inlinedInto = Array.from({ length: 3000 }, () => ({ functionId: ids[0]!, line: 2 }));
    const locs = Array.from({ length: 50 }, (_, i) => b.internLocation({ functionId: ids[i]!, line: 1, inlinedInto }));
    expect(new Set(locs).size).toBe(50);
    expect(b.internLocation({ functionId: ids[5]!, line: 1, inlinedInto: [...inlinedInto] })).toBe(locs[5]);
  });
});

describe('reports over many functions sharing one long name', () => {
  /** 3,000 functions named alike (40 KB), distinct files, one sample each. */
  function sharedName() {
    const name = 'n'.repeat(40_000);
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    for (let i = 0; i < 3000; i++) b.addSample([b.internLocation({ functionId: b.internFunction({ name, filename: `f${i}.go` }), line: 1 })], [1n]);
    return b.build();
  }

  it('the pprof graph keys its nodes by short keys (3,000 nodes, one per file), and callgrind tells them apart', () => {
    const p = sharedName();
    const g = goGraph(p, { granularity: 'lines' });
    expect(g.nodes.length).toBe(3000);
    expect(new Set(g.nodes.map((n) => n.info.file)).size).toBe(3000);
    // callgrind names functions of one name and file alike, but these are in distinct files.
    const text = callgrindReport(p);
    expect(text.split('\nfn=').length - 1).toBe(3000);
  });

  it('top at line granularity has a node per function (its node key holds the name)', () => {
    const rep = topReport(sharedName(), { by: 'line', nodeFraction: 0 });
    expect(rep.table.entries.length).toBe(3000);
    expect(rep.table.entries.every((e) => e.name.startsWith('n'.repeat(40_000) + ' f'))).toBe(true);
    // 0.2 s with short keys, 44 s without: a bound, not a measurement.
  }, 10_000);

  it('compareGoStrings: code point order, also past a long common prefix', () => {
    const prefix = 'p'.repeat(100_000);
    expect(compareGoStrings(prefix + 'a', prefix + 'b')).toBeLessThan(0);
    expect(compareGoStrings(prefix + 'b', prefix)).toBeGreaterThan(0);
    expect(compareGoStrings(prefix, prefix.slice(0))).toBe(0);
    // U+FFFF sorts before U+10000 (a surrogate pair), though its UTF-16 unit is larger.
    expect(compareGoStrings(prefix + '\uffff', prefix + '\u{10000}')).toBeLessThan(0);
    expect(compareGoStrings('\u{10000}', '\uffff')).toBeGreaterThan(0);
    expect(compareGoStrings('\ud7ff', '\u{10000}')).toBeLessThan(0);
  });
});

describe('reports over many distinct long names of one length', () => {
  // 2,000 names of 20,006 characters differing in their last 6 (a 50 KB gzip as folded text):
  // folded, flame and callgrind indexed them in Maps of one hash chain (CLI: 14, 28 and 21 s).
  const names = Array.from({ length: 2000 }, (_, i) => 'x'.repeat(20_000) + String(i).padStart(6, '0'));
  function distinctNames() {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const main = b.internLocation({ functionId: b.internFunction({ name: 'main' }), line: 1 });
    for (const name of names) b.addSample([b.internLocation({ functionId: b.internFunction({ name }), line: 1 }), main], [1n]);
    return b.build();
  }

  it('folded, flame and callgrind list every name once', () => {
    const p = distinctNames();
    const folded = toFolded(p).split('\n').filter(Boolean);
    expect(folded.length).toBe(2000);
    expect(folded[1999]).toBe(`main;${names[1999]} 1`);
    const html = renderFlameGraph(p, { minWidth: 0 });
    expect(html.split(names[1234]!).length - 1).toBe(1);
    const callgrind = callgrindReport(p);
    expect(callgrind.split(names[1234]!).length - 1).toBe(1);
    // Seconds with StringKeyedMap, a minute without: a bound, not a measurement.
  }, 20_000);
});


describe('StringKeyedMap.delete', () => {
  it('removes short and long keys, forgets a long key (its bucket), and keeps the others', () => {
    const m = new StringKeyedMap<number>();
    const long = (i: number) => 'x'.repeat(20_000) + String(i).padStart(6, '0');
    for (let i = 0; i < 10; i++) m.set(long(i), i);
    m.set('short', 100);
    m.set('\u0001#1', 101); // spelled like a long key's inner key
    expect(m.delete(long(3))).toBe(true);
    expect(m.delete(long(3))).toBe(false);
    expect(m.delete('short')).toBe(true);
    expect(m.has(long(3))).toBe(false);
    expect(m.get('\u0001#1')).toBe(101);
    expect([...m.values()]).toEqual([0, 1, 2, 4, 5, 6, 7, 8, 9, 101]);
    // Set again, a deleted long key is a new entry.
    m.set(long(3), 33);
    expect(m.get(long(3))).toBe(33);
    expect(m.size).toBe(11);
    const keys = new StringKeys();
    keys.of(long(1));
    keys.of(long(2));
    keys.forget(long(1));
    expect(keys.bucketCount).toBe(1);
  });

  it('get, has and delete of absent long keys keep nothing (no key interned for a miss)', () => {
    const m = new StringKeyedMap<number>();
    const long = (i: number) => 'y'.repeat(5_000) + String(i);
    m.set(long(0), 0);
    const bucketsOf = (map: StringKeyedMap<number>) => (map as unknown as { keys: StringKeys }).keys.bucketCount;
    for (let i = 1; i <= 100; i++) {
      expect(m.get(long(i))).toBeUndefined();
      expect(m.has(long(i))).toBe(false);
      expect(m.delete(long(i))).toBe(false);
    }
    expect(bucketsOf(m)).toBe(1);
    expect(m.get(long(0))).toBe(0);
    expect(m.delete(long(0))).toBe(true);
    expect(m.has(long(0))).toBe(false);
    expect(bucketsOf(m)).toBe(0);
    const keys = new StringKeys();
    expect(keys.find(long(1))).toBeUndefined();
    expect(keys.find(long(1) + 'x')).toBeUndefined();
    expect(keys.find(long(2))).toBeUndefined();
    expect(keys.bucketCount).toBe(0);
    const key = keys.of(long(1));
    expect(keys.find(long(1))).toBe(key);
    expect(keys.find('short')).toBe('short');
  });
});
