/**
 * `foldedLines`, `toFolded` and `foldedChunks` (the UTF-8 bytes the CLI writes) give the text of
 * the straightforward method: every sample's frame names joined, equal texts summed, sorted as
 * strings. Checked on random small profiles chosen to hit the order's edge cases: names that
 * start other names with characters below and above `;` (`f2` sorts before `f;…`, `f~` after),
 * distinct stacks that print alike (locations of one function, inline frames against frames),
 * negative and cancelling values (as from `diff`), non-ASCII names (including astral characters,
 * whose UTF-16 order differs from their code point order), names with `;` and line breaks,
 * unsymbolized locations, and stacks much deeper than the rest. And the text's size budget.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { seededRandom } from '@profkit/test-utils';
import { ErrorCodes, MAX_FOLDED_LINE_BYTES, MAX_FOLDED_SEGMENT_BYTES, ProfileBuilder, foldedChunks, foldedLines, toFolded, writeFileAtomic, type Profile } from '../src/node/index.js';
import { StringKeyedMap } from '../src/string-keys.js';
import { foldedWalkStats } from '../src/ops/folded.js';
import { READ_LIMITS } from '../src/limits.js';
import { referenceFolded } from './folded-reference.js';

const NAMES = ['f', 'f2', 'f!', 'f~', 'f;g', 'f:g', 'f:', 'fé', 'f\u{1F600}', 'f\uFFFD', 'é', '日本', 'a\r\nb', 'a b', 'g', 'gg'];

function edgeCaseProfile(seed: number): Profile {
  const r = seededRandom(seed);
  const int = (n: number) => Math.floor(r() * n);
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
  // Few names, several locations (lines) per function: many distinct stacks print alike.
  const fns = NAMES.slice(0, 3 + int(NAMES.length - 2)).map((name) => b.internFunction({ name }));
  const locs = Array.from({ length: 4 + int(16) }, (_, line) => {
    const kind = r();
    if (kind < 0.05) return b.internLocation({ address: BigInt(0x1000 + line) });
    if (kind < 0.08) return b.internLocation({});
    const inlined = Array.from({ length: r() < 0.4 ? 1 + int(3) : 0 }, () => ({ functionId: fns[int(fns.length)]!, line: line + 1 }));
    return b.internLocation({ functionId: fns[int(fns.length)]!, line: line + 1, inlinedInto: inlined });
  });
  for (let i = 0; i < 300; i++) {
    const depth = r() < 0.02 ? 200 + int(200) : 1 + int(6);
    const stack = Array.from({ length: depth }, () => locs[int(locs.length)]!);
    b.addSample(stack, [BigInt(int(7) - 3)]);
  }
  return b.build();
}

function concat(chunks: Iterable<Uint8Array>): Uint8Array {
  const all = [...chunks];
  const out = new Uint8Array(all.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of all) (out.set(c, at), (at += c.length));
  return out;
}

describe('folded text order and sums against the joined-and-sorted reference', () => {
  for (let seed = 1; seed <= 40; seed++) {
    it(`seed ${seed}`, () => {
      const p = edgeCaseProfile(seed);
      const expected = referenceFolded(p);
      expect(expected).toMatch(/ -\d+\n/); // the cases include negative sums
      expect([...foldedLines(p)].join('')).toBe(expected);
      expect(toFolded(p)).toBe(expected);
      expect(concat(foldedChunks(p))).toEqual(new TextEncoder().encode(expected));
    });
  }

  it('orders a name before the longer names it starts, by the character after it against `;`', () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const loc = (name: string) => b.internLocation({ functionId: b.internFunction({ name }) });
    const [f, f2, fTilde, g] = ['f', 'f2', 'f~', 'g'].map(loc) as [number, number, number, number];
    // Stacks are leaf first: f;g, f, f2, f~, f2;g.
    for (const stack of [[g, f], [f], [f2], [fTilde], [g, f2]]) b.addSample(stack, [1n]);
    const text = ['f 1', 'f2 1', 'f2;g 1', 'f;g 1', 'f~ 1', ''].join('\n');
    expect(toFolded(b.build())).toBe(text);
    expect(new TextDecoder().decode(concat(foldedChunks(b.build())))).toBe(text);
  });

  it('sums distinct stacks that print alike, and drops those whose sum is 0', () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const main = b.internFunction({ name: 'main' });
    const work = b.internFunction({ name: 'work' });
    const main1 = b.internLocation({ functionId: main, line: 1 });
    const main2 = b.internLocation({ functionId: main, line: 2 });
    // `work` inlined into `main` prints as the two frames `main;work`.
    const inlined = b.internLocation({ functionId: work, line: 3, inlinedInto: [{ functionId: main, line: 4 }] });
    const work1 = b.internLocation({ functionId: work, line: 5 });
    b.addSample([work1, main1], [5n]);
    b.addSample([work1, main2], [-2n]);
    b.addSample([inlined], [4n]);
    b.addSample([main1], [3n]);
    b.addSample([main2], [-3n]);
    const p = b.build();
    expect(toFolded(p)).toBe('main;work 7\n');
    expect(new TextDecoder().decode(concat(foldedChunks(p)))).toBe('main;work 7\n');
  });

  it('looks each distinct name up once, not once per frame: a long name shared by many locations', () => {
    // Each lookup reads the whole name (StringKeyedMap hashes long strings): once per frame, a
    // profile's one 64 MiB name in thousands of locations took hours.
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const name = 'm'.repeat(100_000);
    const functionId = b.internFunction({ name });
    for (let i = 0; i < 1_000; i++) b.addSample([b.internLocation({ functionId, line: i + 1 })], [1n]);
    const p = b.build();
    const get = vi.spyOn(StringKeyedMap.prototype, 'get');
    try {
      expect([...foldedLines(p)]).toEqual([`${name} 1000\n`]);
      expect(get.mock.calls.filter(([key]) => key.length >= name.length).length).toBeLessThanOrEqual(2);
    } finally {
      get.mockRestore();
    }
  });

  it('merges equal stacks in about linear time when the location ids are chosen to collide (the hash is seeded)', () => {
    // 200,000 two-frame stacks whose root ids are solved so that every stack has one hash under
    // the unseeded hash the merge used: each insert probed all the stacks before it (about two
    // minutes here; 5M samples, a day). Seeded, the ids collide no more than any others: a
    // second. The timeout guards against the hang; the text is checked as well.
    const C = 0x9e3779b1;
    let inverse = 1;
    for (let i = 0; i < 5; i++) inverse = Math.imul(inverse, 2 - Math.imul(C, inverse));
    const step = (h: number, id: number) => Math.imul(h ^ id, C) ^ (h >>> 15);
    const n = 200_000;
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const functionId = b.internFunction({ name: 'f' });
    const rows = Array.from({ length: 2 * n }, (_, line) => b.internLocation({ functionId, line: line + 1 }));
    for (let i = 0; i < n; i++) b.addSample([rows[i]!, rows[n + i]!], [1n]);
    const p = b.build();
    // Ids: leaf i is i + 1, root i is solved for the hash 12345 (distinct, above the leaf ids).
    const idOfRow = new Uint32Array(2 * n);
    const taken = new Set<number>();
    for (let i = 0; i < n; i++) {
      idOfRow[i] = i + 1;
      const h = step(2, i + 1);
      let root = (h ^ Math.imul(12345 ^ (h >>> 15), inverse)) >>> 0;
      if (root <= n || taken.has(root)) root = 0xf000_0000 + i;
      taken.add(root);
      idOfRow[n + i] = root;
    }
    const oldId = Uint32Array.from(p.locations.location_id);
    const rowOfOldId = new Map(Array.from(oldId, (id, row) => [id, row] as const));
    p.locations.location_id.set(idOfRow);
    const stackIds = p.samples.locations.location_id;
    for (let k = 0; k < stackIds.length; k++) stackIds[k] = idOfRow[rowOfOldId.get(stackIds[k]!)!]!;
    expect(toFolded(p)).toBe(`f;f ${n}\n`);
  }, 30_000);

  it('walks 100,000-deep recursion without recursing: stacks that print alike to different depths, then apart', () => {
    // Two locations of `rec` (distinct ids, one text): the samples are grouped a name at a time
    // down the shared run; each then ends or goes on alone (printed at once).
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const functionId = b.internFunction({ name: 'rec' });
    const [rec1, rec2] = [1, 2].map((line) => b.internLocation({ functionId, line })) as [number, number];
    const leaf = (name: string) => b.internLocation({ functionId: b.internFunction({ name }) });
    const depth = 100_000;
    for (let s = 0; s < 12; s++) {
      const stack = Array.from({ length: depth - 1000 * s }, (_, k) => (k % (s + 2) === 0 ? rec2 : rec1));
      if (s % 3 !== 0) stack.unshift(leaf(`leaf${s % 4}`));
      b.addSample(stack, [BigInt(s + 1)]);
    }
    const p = b.build();
    const expected = referenceFolded(p);
    expect(expected.split('\n').length).toBeGreaterThan(10);
    expect(toFolded(p)).toBe(expected);
    expect(new TextDecoder().decode(concat(foldedChunks(p)))).toBe(expected);
  });

  it('keeps sums past 2^53 exact', () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const a = b.internLocation({ functionId: b.internFunction({ name: 'a' }) });
    const c = b.internLocation({ functionId: b.internFunction({ name: 'c' }) });
    b.addSample([a], [2n ** 62n + 1n]);
    b.addSample([a], [3n]);
    b.addSample([c, a], [2n ** 53n + 1n]);
    const text = `a ${2n ** 62n + 4n}\na;c ${2n ** 53n + 1n}\n`;
    expect(toFolded(b.build())).toBe(text);
    expect(new TextDecoder().decode(concat(foldedChunks(b.build())))).toBe(text);
  });
});

/**
 * Samples through a few trunks (random paths through a small tree of locations, some of them
 * inline, unsymbolized or of one function under two ids), each then ending or going on with a
 * few frames of its own: long shared prefixes, parting at every kind of location.
 */
function sharedPrefixProfile(seed: number): Profile {
  const r = seededRandom(seed);
  const int = (n: number) => Math.floor(r() * n);
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
  const fns = NAMES.slice(0, 4 + int(6)).map((name) => b.internFunction({ name }));
  const location = (line: number) => {
    const kind = r();
    if (kind < 0.05) return b.internLocation({ address: BigInt(0x1000 + line) });
    const inlined = Array.from({ length: kind < 0.3 ? 1 + int(2) : 0 }, () => ({ functionId: fns[int(fns.length)]!, line }));
    return b.internLocation({ functionId: fns[int(fns.length)]!, line, inlinedInto: inlined });
  };
  let line = 0;
  const trunks = Array.from({ length: 1 + int(4) }, () => Array.from({ length: 20 + int(60) }, () => location(++line)));
  const leaves = Array.from({ length: 6 }, () => location(++line));
  for (let i = 0; i < 60; i++) {
    const trunk = trunks[int(trunks.length)]!;
    // Root first: a prefix of a trunk (often all of it), then a few leaves (or none).
    const root = trunk.slice(0, r() < 0.6 ? trunk.length : 1 + int(trunk.length));
    const stack = [...root, ...Array.from({ length: int(4) }, () => leaves[int(leaves.length)]!)];
    b.addSample(stack.reverse(), [BigInt(1 + int(5))]);
  }
  const p = b.build();
  // Some trunk frames of an id no location has (skipped, printing nothing), also where a run ends.
  const ids = p.samples.locations.location_id;
  for (const trunk of trunks) {
    for (const missing of [trunk[int(trunk.length)]!, trunk[trunk.length - 1]!]) {
      if (r() < 0.5) for (let k = 0; k < ids.length; k++) if (ids[k] === missing) ids[k] = 0x7fff_0000 + missing;
    }
  }
  return p;
}

describe('stacks sharing long prefixes', () => {
  for (let seed = 1; seed <= 30; seed++) {
    it(`seed ${seed}: the text of the joined-and-sorted reference`, () => {
      const p = sharedPrefixProfile(seed);
      const expected = referenceFolded(p);
      expect([...foldedLines(p)].join('')).toBe(expected);
      expect(concat(foldedChunks(p))).toEqual(new TextEncoder().encode(expected));
    });
  }

  for (let seed = 31; seed <= 40; seed++) {
    it(`seed ${seed}: location ids at and above 2^31 (sparse), unknown ids up to 2^32 - 1 among them`, () => {
      const p = sharedPrefixProfile(seed);
      const newId = (id: number) => 0x8000_0000 + 3 * id;
      const known = new Set(p.locations.location_id);
      const ids = p.samples.locations.location_id;
      for (let k = 0; k < ids.length; k++) ids[k] = known.has(ids[k]!) ? newId(ids[k]!) : 0xffff_ffff;
      p.locations.location_id.forEach((id, row) => (p.locations.location_id[row] = newId(id)));
      const expected = referenceFolded(p);
      expect(expected).not.toBe('');
      expect([...foldedLines(p)].join('')).toBe(expected);
      expect(concat(foldedChunks(p))).toEqual(new TextEncoder().encode(expected));
    });
  }

  it('walks the frames every sample shares in one step, not regrouping each sample once per frame', () => {
    // 200 samples through one 1,000-frame trunk, then apart: name by name, the walk regrouped
    // 200 positions at each of the 1,000 frames (50,000 samples x 490 frames: 24.6M, 2.3 s). Now
    // at the root, once more to find that they go on together, after the run, at the leaves.
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    // Leaf first, as samples list their locations: t999 ... t0 (the root).
    const trunk = Array.from({ length: 1_000 }, (_, i) => b.internLocation({ functionId: b.internFunction({ name: `t${i}` }), line: 1 })).reverse();
    for (let s = 0; s < 200; s++) b.addSample([b.internLocation({ functionId: b.internFunction({ name: `leaf${s}` }) }), ...trunk], [1n]);
    const p = b.build();
    foldedWalkStats.regroupedPositions = 0;
    const text = new TextDecoder().decode(concat(foldedChunks(p)));
    expect(foldedWalkStats.regroupedPositions).toBeGreaterThan(0);
    expect(foldedWalkStats.regroupedPositions).toBeLessThanOrEqual(4 * 200);
    expect(text).toBe(referenceFolded(p));
  });

  it('looks for a run at a cost of the frames it skips: samples that share each other frame only (one of them through other locations of the same functions)', () => {
    // Every node has one child (the names are alike), so the walk looks for a run at each frame,
    // and the last sample parts one location later every other frame. Blocks of 16 ids compared
    // 16 ids of each of the 199 others there (~8x the positions regrouped; 2.3x the walk's time).
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const fns = Array.from({ length: 400 }, (_, i) => b.internFunction({ name: `t${i}` }));
    const trunk = fns.map((functionId) => b.internLocation({ functionId, line: 1 }));
    const apart = fns.map((functionId, i) => (i % 2 === 1 ? b.internLocation({ functionId, line: 2 }) : trunk[i]!));
    for (let s = 0; s < 200; s++) {
      const root = s === 199 ? apart : trunk;
      b.addSample([b.internLocation({ functionId: b.internFunction({ name: `leaf${s}` }) }), ...[...root].reverse()], [1n]);
    }
    const p = b.build();
    foldedWalkStats.regroupedPositions = 0;
    foldedWalkStats.runComparedIds = 0;
    const text = new TextDecoder().decode(concat(foldedChunks(p)));
    expect(foldedWalkStats.regroupedPositions).toBeGreaterThanOrEqual(200 * 400);
    expect(foldedWalkStats.runComparedIds).toBeGreaterThan(0);
    expect(foldedWalkStats.runComparedIds).toBeLessThanOrEqual(2 * foldedWalkStats.regroupedPositions);
    expect(text).toBe(referenceFolded(p));
  });
});

describe('foldedChunks: the size budget', () => {
  /** The chunks `foldedChunks` delivers (copied) until it stops, and the error it stops with. */
  function chunksUntilError(p: Profile, limits: { maxReportBytes?: number }): { written: Uint8Array[]; error: unknown } {
    const written: Uint8Array[] = [];
    try {
      for (const chunk of foldedChunks(p, 0, limits)) written.push(chunk.slice());
    } catch (error) {
      return { written, error };
    }
    return { written, error: undefined };
  }

  /** One location of a function named `name`, shared by every use. */
  function locationNamed(b: ProfileBuilder, name: string): number {
    return b.internLocation({ functionId: b.internFunction({ name }) });
  }

  it('stops with PROFKIT_E_LIMIT (maxReportBytes) at the first line past the limit, after writing the chunks before it', () => {
    // 300 lines of about 24 KB (two distinct 12 KB names each): about 7 MiB, several 1 MiB chunks.
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const locs = Array.from({ length: 30 }, (_, i) => locationNamed(b, `${String(i).padStart(2, '0')}`.repeat(6_000)));
    for (let i = 0; i < 300; i++) b.addSample([locs[i % 30]!, locs[(i * 7 + 1) % 30]!, locs[Math.floor(i / 10)]!], [BigInt(i + 1)]);
    const p = b.build();
    const all = new TextEncoder().encode(referenceFolded(p));
    expect(all.length).toBeGreaterThan(6 << 20);
    const lineEnds: number[] = [];
    for (let i = all.indexOf(10); i >= 0; i = all.indexOf(10, i + 1)) lineEnds.push(i + 1);
    // Megabytes compared as text (toEqual on typed arrays goes element by element).
    const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
    // Limits in the fourth chunk: at a line's end, just past it, just before the next line's end.
    const at = lineEnds.findIndex((end) => end > 3.5 * (1 << 20));
    for (const max of [lineEnds[at]!, lineEnds[at]! + 1, lineEnds[at + 1]! - 1]) {
      const { written, error } = chunksUntilError(p, { maxReportBytes: max });
      expect(error).toMatchObject({ code: ErrorCodes.LIMIT, detail: { option: 'maxReportBytes', limit: max } });
      // Whole chunks came out before the error: a prefix of the text, within the limit, and all
      // but the last chunk's worth of it (the chunk being filled when the line was refused).
      expect(written.length).toBeGreaterThanOrEqual(3);
      const out = concat(written);
      expect(out.length).toBeLessThanOrEqual(max);
      expect(out.length).toBeGreaterThan(max - (1 << 20) - 30_000);
      expect(decode(out)).toBe(decode(all.subarray(0, out.length)));
    }
    // Exactly the text's size is enough.
    expect(decode(concat(foldedChunks(p, 0, { maxReportBytes: all.length })))).toBe(decode(all));
  });

  it('refuses a line before copying it: one long name repeated along a deep stack', () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const long = locationNamed(b, 'n'.repeat(100_000));
    // A 5 GB line from a small profile: longer than any typed array V8 makes (4 GiB), so a line
    // copied (or its buffer grown) before being counted fails with something else than this error.
    b.addSample(new Array<number>(50_000).fill(long), [1n]);
    const { written, error } = chunksUntilError(b.build(), { maxReportBytes: 1 << 20 });
    expect(error).toMatchObject({ code: ErrorCodes.LIMIT, detail: { option: 'maxReportBytes', limit: 1 << 20 } });
    expect(written).toEqual([]);
  });

  /** Two locations of `inlineFrames` inline frames `a` (distinct ids, same text), each a sample 100,000 frames deep. */
  function inlineRunsProfile(inlineFrames: number): Profile {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const functionId = b.internFunction({ name: 'a' });
    const inlinedInto = (line: number) => Array.from({ length: inlineFrames - 1 }, () => ({ functionId, line }));
    for (const line of [1, 2]) b.addSample(new Array<number>(100_000).fill(b.internLocation({ functionId, line, inlinedInto: inlinedInto(line) })), [1n]);
    return b.build();
  }

  it('refuses a line while walking it: two stacks that print a run of inline frames alike are walked a name at a time', () => {
    // Two locations of 100 inline frames `a` (distinct ids, same text) along 100,000 frames: one
    // line of 10M names (20 MB) from a tiny profile, walked name by name (20 bytes of path each;
    // at 10,000 inline frames, 1e9 names: the path arrays grew past memory before the line's
    // length was checked). Refused once the path passes the limit, not after the whole line.
    const p = inlineRunsProfile(100);
    const maxReportBytes = 1 << 20;
    const { written, error } = chunksUntilError(p, { maxReportBytes });
    const lines = (() => {
      try {
        for (const line of foldedLines(p, 0, { maxReportBytes })) void line;
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(written).toEqual([]);
    for (const e of [error, lines]) {
      expect(e).toMatchObject({ code: ErrorCodes.LIMIT, detail: { option: 'maxReportBytes', limit: maxReportBytes } });
      // The size the error names is where the walk stopped: just past the limit.
      const counted = Number(/over (\d+) bytes/.exec((e as Error).message)?.[1]);
      expect(counted).toBeGreaterThan(maxReportBytes);
      expect(counted).toBeLessThan(maxReportBytes + 1_000);
    }
  });

  it("charges the walk's path entries against maxReportBytes: a run of inline frames walked name by name never holds more path than the limit", () => {
    // The shape above at 1,000 inline frames: a line of 200M names `a` (2 bytes of text each, 20
    // of path arrays). Refused on its text alone at 8 MiB, the walk held 4M names, 80 MB of path
    // (at the default 512 MiB: 5 GB, 7.4 GB RSS); charged for its entries too, at most the limit.
    const p = inlineRunsProfile(1_000);
    const maxReportBytes = 8 << 20;
    for (const walk of [() => foldedChunks(p, 0, { maxReportBytes }), () => foldedLines(p, 0, { maxReportBytes })]) {
      foldedWalkStats.largestPathBytes = 0;
      expect(() => {
        for (const piece of walk()) void piece;
      }).toThrow(expect.objectContaining({ code: ErrorCodes.LIMIT, detail: expect.objectContaining({ option: 'maxReportBytes', limit: maxReportBytes }) }));
      expect(foldedWalkStats.largestPathBytes).toBeGreaterThan(0);
      expect(foldedWalkStats.largestPathBytes).toBeLessThanOrEqual(maxReportBytes + 20);
    }
  });

  it("the reviewer's profile (10,000 inline frames a location) at the default limit: refused with at most 512 MiB of path (5 GB before, 7.4 GB RSS)", () => {
    // 10,000 inline frames a location: a line of 2e9 names. Charged for its entries, the walk
    // stops after 24M of them (about 3 s); on its text alone it went on to 268M.
    const p = inlineRunsProfile(10_000);
    foldedWalkStats.largestPathBytes = 0;
    const { written, error } = chunksUntilError(p, {});
    expect(written).toEqual([]);
    expect(error).toMatchObject({ code: ErrorCodes.LIMIT, detail: { option: 'maxReportBytes', limit: READ_LIMITS.maxReportBytes } });
    expect(foldedWalkStats.largestPathBytes).toBeLessThanOrEqual(READ_LIMITS.maxReportBytes + 20);
  }, 120_000);

  it("charges a line's path only while it is walked: 200 lines 1,000 deep (20 KB of path each, 4 MB in all) fit a limit of their 0.4 MB of text", () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const stack = Array.from({ length: 1_000 }, (_, i) => b.internLocation({ functionId: b.internFunction({ name: String(i % 10) }), line: i + 1 }));
    for (let leaf = 0; leaf < 200; leaf++) b.addSample([b.internLocation({ functionId: b.internFunction({ name: `leaf${leaf}` }), line: 1 }), ...stack.slice(1)], [1n]);
    const p = b.build();
    const text = concat(foldedChunks(p, 0, { maxReportBytes: Infinity }));
    expect(text.length).toBeGreaterThan(400_000);
    // Exactly the text's size: were the path charges kept (not released as the walk goes back up), this refused.
    expect(concat(foldedChunks(p, 0, { maxReportBytes: text.length }))).toEqual(text);
    expect([...foldedLines(p, 0, { maxReportBytes: text.length })].join('')).toBe(new TextDecoder().decode(text));
  });

  it("does not refuse a line whose text fits for its depth: one sample 1,000 frames deep of 1-byte names at a limit of exactly its text", () => {
    // Its 2 KB of text were charged 20 bytes of path a frame as well (22 KB), though printed from
    // one sample: refused at any limit below that.
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    b.addSample(Array.from({ length: 1_000 }, (_, i) => locationNamed(b, String(i % 10))), [1n]);
    const p = b.build();
    const text = concat(foldedChunks(p, 0, { maxReportBytes: Infinity }));
    expect(text.length).toBe(2 * 1_000 - 1 + ' 1\n'.length);
    expect(concat(foldedChunks(p, 0, { maxReportBytes: text.length }))).toEqual(text);
    expect([...foldedLines(p, 0, { maxReportBytes: text.length })].join('')).toBe(new TextDecoder().decode(text));
    expect(chunksUntilError(p, { maxReportBytes: text.length - 1 }).error).toMatchObject({ code: ErrorCodes.LIMIT, detail: { option: 'maxReportBytes' } });
  });

  it("holds a line's tail (the frames of a sample alone) in 4 bytes an entry, at most about twice its text (20 bytes an entry were 10 to 13 times it)", () => {
    // One sample 100,000 frames deep of 1-byte names: a line of 200 KB, all tail.
    const deep = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    deep.addSample(Array.from({ length: 100_000 }, (_, i) => locationNamed(deep, String(i % 10))), [1n]);
    // Two samples of one location each, 100,000 inline frames that differ after the outermost
    // (`r`): each prints the rest of its location as a tail, name by name.
    const inline = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const fn = (name: string) => inline.internFunction({ name });
    for (const leaf of ['x', 'y']) {
      const inlinedInto = [...Array.from({ length: 99_998 }, () => ({ functionId: fn(leaf), line: 1 })), { functionId: fn('r'), line: 1 }];
      inline.addSample([inline.internLocation({ functionId: fn(leaf), line: 1, inlinedInto })], [1n]);
    }
    for (const p of [deep.build(), inline.build()]) {
      const text = concat(foldedChunks(p, 0, { maxReportBytes: Infinity }));
      const longestLine = Math.max(...new TextDecoder().decode(text).split('\n').map((line) => line.length));
      expect(longestLine).toBeGreaterThan(199_000);
      for (const maxReportBytes of [text.length, READ_LIMITS.maxReportBytes]) {
        for (const walk of [() => foldedChunks(p, 0, { maxReportBytes }), () => foldedLines(p, 0, { maxReportBytes })]) {
          foldedWalkStats.largestPathBytes = 0;
          for (const piece of walk()) void piece;
          // 100,000 entries of 4 bytes, in a path grown by doubling (at most half the limit in entries).
          expect(foldedWalkStats.largestPathBytes).toBeGreaterThan(longestLine);
          expect(foldedWalkStats.largestPathBytes).toBeLessThanOrEqual(3 * longestLine);
        }
      }
    }
  });

  it('refuses a line longer than MAX_FOLDED_LINE_BYTES whatever maxReportBytes allows, before allocating it', () => {
    // 100,000-byte name × 12,000 frames: a 1.2 GB line (past the 1 GiB cap) of one shared name;
    // × 50,000: 5 GB, past what a typed array holds (this was a RangeError).
    for (const depth of [12_000, 50_000]) {
      const c = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
      const name = locationNamed(c, 'n'.repeat(100_000));
      c.addSample(new Array<number>(depth).fill(name), [1n]);
      for (const maxReportBytes of [Infinity, 2 ** 40]) {
        const { written, error } = chunksUntilError(c.build(), { maxReportBytes });
        expect(error).toMatchObject({ code: ErrorCodes.LIMIT, detail: { option: 'maxReportBytes', limit: MAX_FOLDED_LINE_BYTES } });
        expect(written).toEqual([]);
      }
    }
  });

  it('refuses distinct frame texts past MAX_FOLDED_SEGMENT_BYTES before allocating them (their 32-bit offsets wrapped)', () => {
    // 2,200 locations of one shared 1 MiB name: 2.3 GB of frame texts (past 2^31, where the
    // offsets wrapped: a RangeError or a corrupt report), each line well under the line cap.
    const c = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const functionId = c.internFunction({ name: 'm'.repeat(1 << 20) });
    for (let i = 0; i < 2_200; i++) c.addSample([c.internLocation({ functionId, address: BigInt(0x1000 + i) })], [1n]);
    const { written, error } = chunksUntilError(c.build(), { maxReportBytes: Infinity });
    expect(error).toMatchObject({ code: ErrorCodes.LIMIT, detail: { option: 'maxReportBytes', limit: MAX_FOLDED_SEGMENT_BYTES } });
    expect(written).toEqual([]);
  });
});

describe('foldedChunks with reuseBuffer', () => {
  /** Lines of about 24 KB over several 1 MiB chunks, and one line longer than a chunk. */
  function manyChunksProfile(): Profile {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const loc = (name: string) => b.internLocation({ functionId: b.internFunction({ name }) });
    const locs = Array.from({ length: 30 }, (_, i) => loc(`${String(i).padStart(2, '0')}`.repeat(6_000)));
    for (let i = 0; i < 300; i++) b.addSample([locs[i % 30]!, locs[(i * 7 + 1) % 30]!, locs[Math.floor(i / 10)]!], [BigInt(i + 1)]);
    b.addSample([loc('z'.repeat(3 << 20))], [7n]);
    return b.build();
  }

  it('gives the same text, each chunk a view of one buffer to be used before the next is asked for', () => {
    const p = manyChunksProfile();
    const decoder = new TextDecoder();
    let text = '';
    const buffers = new Set<ArrayBufferLike>();
    let chunks = 0;
    for (const chunk of foldedChunks(p, 0, undefined, { reuseBuffer: true })) {
      text += decoder.decode(chunk);
      buffers.add(chunk.buffer);
      chunks++;
    }
    expect(text).toBe(referenceFolded(p));
    expect(chunks).toBeGreaterThan(6);
    // One buffer, and a second one made for the line longer than a chunk.
    expect(buffers.size).toBe(2);
  });

  it('written through writeFileAtomic (as `folded -o` does), each chunk is in the file before the next overwrites it', async () => {
    const p = manyChunksProfile();
    const expected = new TextEncoder().encode(referenceFolded(p));
    // The check can fail: chunks kept past the next one (a write not awaited) are overwritten.
    const kept = concat(foldedChunks(p, 0, undefined, { reuseBuffer: true }));
    expect(kept.length).toBe(expected.length);
    expect(Buffer.from(kept).equals(expected)).toBe(false);
    const dir = mkdtempSync(join(tmpdir(), 'profkit-folded-reuse-'));
    try {
      const file = join(dir, 'out.folded');
      await writeFileAtomic(file, foldedChunks(p, 0, undefined, { reuseBuffer: true }));
      expect(readFileSync(file).equals(expected)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
