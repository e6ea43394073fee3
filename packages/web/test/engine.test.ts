/**
 * The page's analysis (src/app/engine.ts) on Node: the diff flame graph's base values and the
 * layout invariants the canvas relies on; the URL hash round trip. (The top table against the
 * CLI is checked in the browser, browser.test.ts.)
 */

import { describe, expect, it } from 'vitest';
import { ProfileBuilder } from '@profkit/core';
import { serializePprof } from '@profkit/pprof';
import { FLAME_MIN_WIDTH, MAX_SOURCE_FILE_LINES, ProfileSession, linesOf, sourceLinesOf, webRegistry } from '../src/app/engine.js';
import { DroppedSources } from '../src/app/dropped-sources.js';
import { diffColor, frameAtPath, matchedTotal, parentsOf, pathOf, searchMatches } from '../src/app/flame.js';
import type { FlameLayout, ViewOptions } from '../src/app/protocol.js';
import { DEFAULT_STATE, NO_FILTERS, hashOf, stateFromHash } from '../src/app/state.js';

/** A CPU profile of `stacks` (leaf last) with the given values. */
function profile(stacks: [string[], number | bigint][]): { name: string; bytes: Uint8Array } {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
  const loc = new Map<string, number>();
  const at = (name: string) => {
    let l = loc.get(name);
    if (l === undefined) loc.set(name, (l = b.internLocation({ functionId: b.internFunction({ name, filename: 'app.go' }) })));
    return l;
  };
  for (const [stack, v] of stacks) b.addSample([...stack].reverse().map(at), [v]);
  return { name: 'p.pb.gz', bytes: serializePprof(b.build()) };
}

const OPTIONS: ViewOptions = { sampleType: -1, by: 'function', cum: false, nodeFraction: -1, nodeCount: -1, ...NO_FILTERS };

function frame(layout: FlameLayout, path: string[]): number {
  const i = frameAtPath(layout, path);
  expect(pathOf(layout, parentsOf(layout), i)).toEqual(path);
  return i;
}

describe('the diff flame graph', () => {
  it('widths are the new profile, base values the same call path in the base (0 where new)', async () => {
    const base = profile([[['main', 'parse'], 30], [['main', 'hash'], 50], [['main', 'gone'], 20]]);
    const newer = profile([[['main', 'parse'], 60], [['main', 'hash'], 50], [['main', 'fresh'], 10]]);
    const s = await ProfileSession.open(webRegistry(), newer, base);
    const { flame, diff, top } = s.view(OPTIONS, 'flame');
    expect(diff).toBe(true);
    expect(top).toBeUndefined();
    const f = flame!;
    const value = (path: string[]) => [f.value[frame(f, path)], f.base![frame(f, path)]];
    expect(value([])).toEqual([120, 100]);
    expect(value(['main'])).toEqual([120, 100]);
    expect(value(['main', 'parse'])).toEqual([60, 30]);
    expect(value(['main', 'hash'])).toEqual([50, 50]);
    expect(value(['main', 'fresh'])).toEqual([10, 0]);
    // Only in the base: no width in the flame graph (the top table lists it, negative).
    expect(frameAtPath(f, ['main', 'gone'])).toBe(0);
    const table = s.view(OPTIONS, 'top').top!;
    expect(table.rows.find((r) => r.name === 'gone')?.flat).toBe('-20');
    expect(table.rows.find((r) => r.name === 'parse')?.flat).toBe('30');
  });

  it('applies the filters to both profiles', async () => {
    const base = profile([[['main', 'parse'], 30], [['main', 'hash'], 50]]);
    const newer = profile([[['main', 'parse'], 60], [['main', 'hash'], 50]]);
    const s = await ProfileSession.open(webRegistry(), newer, base);
    const f = s.view({ ...OPTIONS, focus: 'parse' }, 'flame').flame!;
    expect([f.value[0], f.base![0]]).toEqual([60, 30]);
  });
});

describe('diffColor', () => {
  const rgb = (c: string) => c.match(/\d+/g)!.map(Number);
  it('is red for growth, blue for shrinkage, grey when unchanged, deeper the larger the change', () => {
    const [r, g, b] = rgb(diffColor(10, 0));
    expect(r).toBeGreaterThan(g!);
    expect(g).toBe(b);
    const [r2, g2, b2] = rgb(diffColor(0, 10));
    expect(b2).toBeGreaterThan(r2!);
    expect(r2).toBe(g2);
    expect(diffColor(7, 7)).toBe('rgb(235,235,235)');
    // A small growth is paler (more white) than a large one.
    expect(rgb(diffColor(11, 10))[1]).toBeGreaterThan(rgb(diffColor(20, 10))[1]!);
  });
});

describe('the flame layout', () => {
  it('is in preorder with callees inside their caller; search totals count each sample once', async () => {
    const s = await ProfileSession.open(webRegistry(), profile([[['main', 'a', 'a'], 3], [['main', 'b'], 2], [['main'], 1]]));
    const f = s.view(OPTIONS, 'flame').flame!;
    const parent = parentsOf(f);
    for (let i = 1; i < f.depth.length; i++) {
      const p = parent[i]!;
      expect(f.depth[i]).toBe(f.depth[p]! + 1);
      expect(f.start[i]).toBeGreaterThanOrEqual(f.start[p]!);
      expect(f.start[i]! + f.value[i]!).toBeLessThanOrEqual(f.start[p]! + f.value[p]!);
    }
    // `a` matches twice on one stack (a recursive call): counted once.
    expect(matchedTotal(f, searchMatches(f, '^a$')!)).toBe(3);
    expect(matchedTotal(f, searchMatches(f, '^(a|b)$')!)).toBe(5);
    expect(searchMatches(f, '')).toBeUndefined();
    expect(() => searchMatches(f, '(')).toThrow();
  });
});

describe('the URL hash', () => {
  it('round-trips every part of the state and leaves defaults out', () => {
    const state = {
      view: 'icicle' as const,
      sampleType: 2,
      by: 'line' as const,
      cum: true,
      nodeFraction: 0.001,
      nodeCount: 20,
      focus: 'a&b',
      ignore: '#x',
      hide: 'h=1',
      show: 's s',
      tagFocus: 'bytes=1kb:',
      tagIgnore: 'worker=a|b',
      tagRoot: 'worker,phase',
      search: '^main\\.',
      zoom: ['main', 'run;x'],
      fn: 'main.(*T).run&x',
    };
    expect(stateFromHash(hashOf(state))).toEqual(state);
    for (const view of ['sandwich', 'peek', 'graph', 'source'] as const) expect(stateFromHash(hashOf({ ...state, view })).view).toBe(view);
    // pprof's option names.
    expect(new URLSearchParams(hashOf(state).slice(1)).get('tagfocus')).toBe('bytes=1kb:');
    expect(hashOf(DEFAULT_STATE)).toBe('');
    expect(stateFromHash('#view=bogus&st=-3&by=nope&nf=2&n=-4')).toEqual(DEFAULT_STATE);
    expect(stateFromHash('#nf=0').nodeFraction).toBe(0);
    expect(stateFromHash('#n=0').nodeCount).toBe(0);
  });
});

describe('the sandwich view', () => {
  const tree = (f: FlameLayout) => {
    const parent = parentsOf(f);
    return Object.fromEntries([...f.depth.keys()].map((i) => [pathOf(f, parent, i).join(' > ') || '(root)', [f.value[i], f.self[i]]]));
  };

  it('callers are the paths above the outermost call (inverted), callees the subtrees below it merged; recursion counted once', async () => {
    const p = profile([
      [['main', 'a', 'work', 'leaf'], 10],
      [['main', 'b', 'work'], 5],
      [['main', 'b', 'work', 'work', 'leaf'], 7],
      [['main', 'other'], 100],
    ]);
    const s = await ProfileSession.open(webRegistry(), p);
    const { callers, callees } = s.view(OPTIONS, 'sandwich', 'work').sandwich!;
    expect(tree(callers)).toEqual({
      '(root)': [22, 0],
      a: [10, 0],
      'a > main': [10, 10],
      b: [12, 0],
      'b > main': [12, 12],
    });
    expect(tree(callees)).toEqual({
      '(root)': [22, 5],
      leaf: [10, 10],
      work: [7, 0],
      'work > leaf': [7, 7],
    });
    expect(callers.names[callers.nameIndex[0]!]).toBe('work');
  });

  it('peek of one function: the peek report restricted to it, calls with their values', async () => {
    const p = profile([
      [['main', 'a', 'work', 'leaf'], 10],
      [['main', 'b', 'work'], 5],
    ]);
    const s = await ProfileSession.open(webRegistry(), p);
    const { nodes, text } = s.view(OPTIONS, 'peek', 'work').peek!;
    expect(nodes).toHaveLength(1);
    expect(nodes[0]).toMatchObject({ name: 'work', flat: '5', cum: '15' });
    expect(nodes[0]!.callers.map((c) => [c.name, c.weight])).toEqual([['a', '10'], ['b', '5']]);
    expect(nodes[0]!.callees.map((c) => [c.name, c.weight])).toEqual([['leaf', '10']]);
    expect(text).toContain('| work');
  });

  it('peek names a caller that is not an entry (its values net to 0), as go tool pprof prints it', async () => {
    const p = profile([
      [['main', 'z', 'work'], 10],
      [['main', 'z', 'other'], -10],
    ]);
    const s = await ProfileSession.open(webRegistry(), p);
    const { nodes, text } = s.view(OPTIONS, 'peek', 'work').peek!;
    expect(nodes.map((n) => [n.name, n.callers.map((c) => [c.name, c.weight])])).toEqual([['work', [['z', '10']]]]);
    expect(text).toMatch(/\|   z\n/);
  });
});

describe('the views of one function compare its name (a RegExp of it can be more than V8 builds)', () => {
  it('peek and sandwich of a 70,000-character function: its frames, not a bare SyntaxError', async () => {
    // `^name$` of 65,536 characters or more is "Regular expression too large" when V8 first runs it.
    const long = `${'f'.repeat(70_000)}.(*T)`;
    const s = await ProfileSession.open(webRegistry(), profile([[['main', long, 'leaf'], 10], [['main', 'other'], 5]]));
    const { callers, callees } = s.view(OPTIONS, 'sandwich', long).sandwich!;
    expect(callers.names[callers.nameIndex[0]!]).toBe(long);
    expect([callers.value[0], callees.value[0]]).toEqual([10, 10]);
    expect(callees.names[callees.nameIndex[frameAtPath(callees, ['leaf'])]!]).toBe('leaf');
    const { nodes } = s.view(OPTIONS, 'peek', long).peek!;
    expect(nodes.map((n) => [n.name, n.cum, n.callers.map((c) => c.name), n.callees.map((c) => c.name)])).toEqual([[long, '10', ['main'], ['leaf']]]);
    // Exactly that name: one character less is no function (peek's error names `^…$`, as pprof's).
    expect(() => s.view(OPTIONS, 'peek', long.slice(1))).toThrow(/no matches found for regexp: \^f{69999}\\\.\\\(\\\*T\\\)\$/);
    expect(s.view(OPTIONS, 'sandwich', long.slice(1)).sandwich!.callers.value[0]).toBe(0);
  });
});

describe('the top table under the node fraction', () => {
  it('counts the entries the node fraction hid when it hides them all (the page says how many, not "no samples")', async () => {
    // 12 functions of 10 each: every entry is 1/12 (8.3%) of the total, under the cutoff of a node fraction of 10% (12).
    const p = profile(Array.from({ length: 12 }, (_, i): [string[], number] => [[`f${i}`], 10]));
    const s = await ProfileSession.open(webRegistry(), p);
    const hidden = s.view({ ...OPTIONS, nodeFraction: 0.1 }, 'top').top!;
    expect(hidden.rows).toEqual([]);
    expect(hidden.dropped).toBe(12);
    expect(hidden.header.join('\n')).toContain('Dropped 12 nodes');
    // At 8% (a cutoff of 9) every entry is shown, none dropped.
    const shown = s.view({ ...OPTIONS, nodeFraction: 0.08 }, 'top').top!;
    expect(shown.rows).toHaveLength(12);
    expect(shown.dropped).toBe(0);
  });
});

describe('the width cut of the sandwich and the diff flame graph', () => {
  /** `n` callees of `work` worth 1 each beside one worth 10^6: each narrower than FLAME_MIN_WIDTH of the total. */
  const manyNarrow = (n: number, where: string[]) => [[[...where, 'hot'], 1_000_000] as [string[], number], ...Array.from({ length: n }, (_, i) => [[...where, `narrow${i}`], 1] as [string[], number])];

  it('the sandwich leaves out the frames narrower than the main flame graph does, and counts them', async () => {
    expect(1 / FLAME_MIN_WIDTH).toBeGreaterThan(3000);
    const s = await ProfileSession.open(webRegistry(), profile(manyNarrow(2000, ['main', 'work'])));
    const { callers, callees } = s.view(OPTIONS, 'sandwich', 'work').sandwich!;
    // The callees: work and hot drawn, the 2,000 narrow ones counted, not drawn; the root keeps their value.
    expect(callees.depth.length).toBe(2);
    expect(callees.elided).toBe(2000);
    expect(callees.exactValue[0]).toBe(1_002_000n);
    expect(callers.elided).toBe(0);
    // Wide once merged: 2,000 call sites worth 1 each are one frame worth 2,000 in the callers tree, drawn.
    const merged = await ProfileSession.open(webRegistry(), profile([[['main', 'hot', 'work'], 1_000_000], ...Array.from({ length: 2000 }, (_, i) => [[`root${i}`, 'common', 'work'], 1] as [string[], number])]));
    const c = merged.view(OPTIONS, 'sandwich', 'work').sandwich!.callers;
    expect(c.value[frame(c, ['common'])]).toBe(2000);
    expect(c.elided).toBe(2000);
  });

  it('the diff cuts the base tree at the width of the new one; a frame whose base was cut says so instead of 0', async () => {
    const base = profile([...manyNarrow(2000, ['main', 'work']), [['main', 'work', 'grew'], 1]]);
    const newer = profile([[['main', 'work', 'hot'], 1_000_000], [['main', 'work', 'grew'], 500], [['main', 'work', 'fresh'], 500]]);
    const s = await ProfileSession.open(webRegistry(), newer, base);
    const f = s.view(OPTIONS, 'flame').flame!;
    expect(f.baseCut).toBeCloseTo(FLAME_MIN_WIDTH * 1_001_000);
    const grew = frame(f, ['main', 'work', 'grew']);
    const fresh = frame(f, ['main', 'work', 'fresh']);
    // grew's base (1) is below the cut: marked, not exact; fresh is in no base stack, but its base parent had frames cut.
    expect(f.baseBelowCut![grew]).toBe(1);
    expect(f.baseBelowCut![fresh]).toBe(1);
    expect(f.baseBelowCut![frame(f, ['main', 'work', 'hot'])]).toBe(0);
    expect(f.exactBase![frame(f, ['main', 'work'])]).toBe(1_002_001n);
    // Without cut frames under it, a new frame's base is 0 for sure.
    const plain = await ProfileSession.open(webRegistry(), profile([[['main', 'a'], 5], [['main', 'new'], 5]]), profile([[['main', 'a'], 5]]));
    const p = plain.view(OPTIONS, 'flame').flame!;
    expect(p.baseBelowCut).toBeUndefined();
    expect(p.exactBase![frame(p, ['main', 'new'])]).toBe(0n);
  });
});

describe('values above 2^53', () => {
  it('the flame graph and the sandwich carry them exact (what the page prints), beside the float widths', async () => {
    const big = 2n ** 53n + 1n; // Number(big) === 2 ** 53
    const s = await ProfileSession.open(webRegistry(), profile([[['main', 'work'], big], [['main', 'idle'], 2n]]), profile([[['main', 'work'], 1n]]));
    const flame = s.view(OPTIONS, 'flame').flame!;
    expect(flame.exactValue[0]).toBe(big + 2n);
    const work = frame(flame, ['main', 'work']);
    expect(flame.exactValue[work]).toBe(big);
    expect(flame.exactSelf[work]).toBe(big);
    expect(flame.exactBase![work]).toBe(1n);
    const { callees } = s.view(OPTIONS, 'sandwich', 'work').sandwich!;
    expect(callees.exactValue[0]).toBe(big - 1n);
  });
});

describe('dropped source files', () => {
  it('splits lines as bufio.ScanLines does', () => {
    expect(linesOf('a\r\nb\n\nc')).toEqual(['a', 'b', '', 'c']);
    expect(linesOf('a\n')).toEqual(['a']);
    expect(linesOf('')).toEqual([]);
  });

  it('reports a file past MAX_SOURCE_FILE_LINES as a PROFKIT_E_LIMIT error instead of keeping its lines', () => {
    const lines = linesOf('\n'.repeat(MAX_SOURCE_FILE_LINES + 10));
    expect(lines.length).toBe(MAX_SOURCE_FILE_LINES + 1); // the scan stops one line past the limit
    const read = sourceLinesOf('big.go', lines);
    expect(read).toEqual({ error: `big.go: more than ${MAX_SOURCE_FILE_LINES} lines (PROFKIT_E_LIMIT)` });
    expect(sourceLinesOf('ok.go', lines.slice(0, MAX_SOURCE_FILE_LINES))).toEqual({ lines: lines.slice(0, MAX_SOURCE_FILE_LINES) });
  });
});

describe('the dropped source files the worker keeps', () => {
  it('keeps each text once, a file dropped again replaces it, and past the limit forgets the files dropped first', () => {
    const kept = new DroppedSources(10);
    kept.add('a.go', 'a1\na2');
    kept.add('b.go', 'b1');
    expect(kept.get('a.go')).toEqual({ lines: ['a1', 'a2'] });
    kept.add('a.go', 'A');
    expect(kept.get('a.go')).toEqual({ lines: ['A'] });
    // 'A' (1) + 'b1' (2) + 8 = 11 > 10: b.go, now the oldest, is forgotten, a.go kept.
    kept.add('c.go', 'c1234567');
    expect(kept.get('b.go')).toBeUndefined();
    expect(kept.get('a.go')).toEqual({ lines: ['A'] });
    expect(kept.get('c.go')).toEqual({ lines: ['c1234567'] });
    // A file larger than the limit alone is still kept (the page bounds each file), all others forgotten.
    kept.add('d.go', 'd'.repeat(20));
    expect([kept.get('a.go'), kept.get('c.go'), kept.get('d.go')?.lines]).toEqual([undefined, undefined, ['d'.repeat(20)]]);
  });
});

describe('the source view without text', () => {
  it('lists no line past MAX_SOURCE_FILE_LINES (a profile line number does not make the listing that long)', async () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
    const work = b.internFunction({ name: 'work', filename: 'app.go' });
    const idle = b.internFunction({ name: 'idle', filename: 'app.go' });
    b.addSample([b.internLocation({ functionId: work, line: MAX_SOURCE_FILE_LINES + 100 })], [5n]);
    b.addSample([b.internLocation({ functionId: idle, line: 20 })], [3n]);
    const s = await ProfileSession.open(webRegistry(), { name: 'p.pb.gz', bytes: serializePprof(b.build()) });
    const [far] = s.view(OPTIONS, 'source', 'work').source!.routines;
    expect(far!.noText).toBe(true);
    expect(far!.lines).toEqual([]); // past the end a readable file can have: no rows
    // A line within it: the 11 lines pprof shows around it.
    const [near] = s.view(OPTIONS, 'source', 'idle').source!.routines;
    expect(near!.lines.map((l) => l.line)).toEqual(Array.from({ length: 11 }, (_, i) => 15 + i));
  });
});
