/**
 * renderFlameGraph writes the HTML page's frames as JSON text in chunks of 4,096 frames and joins
 * the SVG's lines every 16,384 (no object per frame): the text must stay what one
 * `JSON.stringify` (with `<` escaped) of the flat frame list, and one join of all the lines, gave.
 * The expected page data is made here from `cutFlameTree`'s tree, laid out depth-first.
 */
import { describe, expect, it } from 'vitest';
import { ProfileBuilder, cutFlameTree, renderFlameGraph, renderFlameGraphChunks, type FlameNode, type Profile } from '../src/node/index.js';

/** Names a page must keep exactly: script-closing `<`, line separators, lone surrogates, quotes, control characters. */
const TRICKY = ['</script><b>', '<!--', 'a\u2028b', '\u2029', '\ud800', 'x\udc00y', '"quoted"', 'back\\slash', '\x00\x01\x1f\x7f', 'é😀'];

/** 3,000 functions (the tricky names first), 20,000 two-frame samples: 6,001 frames at min width 0; with `big`, half the samples past 2^53. */
function manyFramesProfile(big: boolean): Profile {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
  const fns = Array.from({ length: 3000 }, (_, i) => b.internFunction({ name: TRICKY[i] ?? `f${i}` }));
  const locs = fns.map((functionId, line) => b.internLocation({ functionId, line }));
  for (let i = 0; i < 20_000; i++) b.addSample([locs[(i * 7) % 3000]!, locs[i % 3000]!], [big && i % 2 === 0 ? (1n << 60n) + BigInt(i) : BigInt(1 + i)]);
  return b.build();
}

/** The page's data as the flat encoding describes it, from the tree: depth-first, 4 entries a frame. */
function expectedPageJson(tree: FlameNode, unit: string): string {
  const exact = (v: bigint) => (v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : String(v));
  const names: string[] = [];
  const nameIndex = new Map<string, number>();
  const frames: (number | string)[] = [];
  const stack: { node: FlameNode; parent: number }[] = [{ node: tree, parent: -1 }];
  while (stack.length > 0) {
    const { node, parent } = stack.pop()!;
    if (!nameIndex.has(node.name)) nameIndex.set(node.name, names.push(node.name) - 1);
    const at = frames.length / 4;
    frames.push(nameIndex.get(node.name)!, exact(node.value), exact(node.self), parent);
    for (let i = node.children.length - 1; i >= 0; i--) stack.push({ node: node.children[i]!, parent: at });
  }
  return JSON.stringify({ version: 1, unit, names, frames }).replace(/</g, '\\u003c');
}

describe('flame graph text written in chunks', () => {
  it('the HTML data is JSON.stringify of the flat frames across chunk boundaries, every name kept', () => {
    const p = manyFramesProfile(true);
    const { tree } = cutFlameTree(p, 0, 0);
    const html = renderFlameGraph(p, { minWidth: 0 });
    const json = /<script type="application\/json" id="flame-data">(.*?)<\/script>/s.exec(html)![1]!;
    const expected = expectedPageJson(tree, 'nanoseconds');
    expect((JSON.parse(expected) as { frames: unknown[] }).frames.length / 4).toBe(6001);
    expect(json).toBe(expected);
    const data = JSON.parse(json) as { names: string[] };
    for (const name of TRICKY) expect(data.names).toContain(name);
  });

  it('the SVG is one line a piece across its 16,384-line joins', () => {
    const p = manyFramesProfile(false);
    const svg = renderFlameGraph(p, { minWidth: 0, format: 'svg', width: 1_000_000 });
    const lines = svg.split('\n');
    expect(lines.length).toBeGreaterThan(16_384); // one join at least
    expect(lines.pop()).toBe('');
    expect(lines.at(-1)).toBe('</svg>');
    expect(lines.filter((l) => l === '')).toEqual([]);
    // Every frame drawn: a group of title and rectangle (and maybe a label) closed on its own line.
    const opened = lines.filter((l) => l.startsWith('<g class="frame"')).length;
    expect(opened).toBe(6001);
    expect(lines.filter((l) => l === '</g>').length).toBe(opened);
  });

  it('renderFlameGraphChunks joins to renderFlameGraph, each chunk whole UTF-8 (SVG ends of lines, HTML ends of frames)', () => {
    const utf8 = new TextEncoder();
    for (const format of ['svg', 'html'] as const) {
      // Values past 2^53 for the HTML; the SVG leaves frames under a pixel wide out, so small values.
      const p = manyFramesProfile(format === 'html');
      const options = { minWidth: 0, format, width: 1_000_000 };
      const chunks = [...renderFlameGraphChunks(p, options)];
      expect(chunks.length).toBeGreaterThan(1); // at least one join (HTML: head, 2 frame chunks, tail)
      expect(chunks.join('')).toBe(renderFlameGraph(p, options));
      // The CLI encodes chunk by chunk: a surrogate pair cut between chunks would become two U+FFFD.
      const bytes = chunks.reduce((n, c) => n + utf8.encode(c).length, 0);
      expect(bytes).toBe(utf8.encode(chunks.join('')).length);
    }
  });

  it('renderFlameGraphChunks meets maxReportBytes while its SVG chunks are taken, not before', () => {
    const p = manyFramesProfile(false);
    const options = { minWidth: 0, format: 'svg', width: 1_000_000 } as const;
    const first = new TextEncoder().encode(renderFlameGraphChunks(p, options)[Symbol.iterator]().next().value as string).length;
    const it = renderFlameGraphChunks(p, { ...options, limits: { maxReportBytes: first + 10 } })[Symbol.iterator]();
    expect(it.next().done).toBe(false);
    expect(() => it.next()).toThrow(expect.objectContaining({ code: 'PROFKIT_E_LIMIT', detail: expect.objectContaining({ option: 'maxReportBytes' }) }));
  });
});
