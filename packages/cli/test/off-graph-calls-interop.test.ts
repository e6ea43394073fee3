/**
 * Calls between a shown node and a node the report does not show, against `go tool pprof`. pprof
 * keeps every node with values in its graph unless it trims (rebuilds the graph with the kept
 * nodes only), and prints a shown node's calls whatever the other end: nodes whose diff nets to 0
 * (`-diff_base`: "0 0% | x"), negative nodes under `-drop_negative`. Its edge cut
 * (TrimLowFrequencyEdges) only cuts calls into shown nodes, so a 0 call to such a node prints.
 * profkit printed only the calls between shown nodes, and top's inline marker missed the inlined
 * calls from such nodes.
 *
 * The pair: `x`, `same`, `z` and `h` net to 0 (flat and cum: pprof then does not trim, as no
 * node with values is below the node fraction), `z` calls `c` in NEW and `d` in BASE, `ci` is
 * inlined into `h` in NEW and `cj` in BASE, `y1 y2` (also 0) call `e` and `f`, the root `q` (also
 * 0) `k` and `j`, and `shrunk`, `S1`, `S2`, `S3` shrink. NET is NEW's
 * samples and BASE's negated in one profile (negative values).
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ProfileBuilder } from '@profkit/core';
import { serializePprof } from '@profkit/pprof';
import { goAvailable, profkit } from './views-helpers.js';
import { goPprofAsCompared } from './producers.js';

const tmp = mkdtempSync(join(tmpdir(), 'profkit-off-graph-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Stacks (root first; `h>ci`: `ci` inlined into `h` in one location) and their values in ms. */
const NEW: [string, number][] = [
  ['main a', 7],
  ['main a x', 10],
  ['main same', 5],
  ['main z c', 8],
  ['main S1 S2 x', 4],
  ['main h>ci', 6],
  ['main grow', 30],
  ['main shrunk', 2],
  ['main S1 S2 S3', 1],
  ['main y1 y2 e', 9],
  ['q k', 3],
];
const BASE: [string, number][] = [
  ['main a x', 10],
  ['main S1 S2 x', 4],
  ['main same', 5],
  ['main z d', 8],
  ['main h>cj', 6],
  ['main shrunk', 7],
  ['main S1 S2 S3', 7],
  ['main grow', 10],
  ['main y1 y2 f', 9],
  ['q j', 3],
];

/** A profile of `stacks`; the stacks of `lineOffset` (NET's base part) at other lines: pprof merges the samples of one stack. */
function write(name: string, stacks: [string, number, lineOffset?: number][]): string {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
  const fn = (name: string) => b.internFunction({ name, filename: `${name}.go` });
  const location = (frame: string, line: number) => {
    const [outer, inner] = frame.split('>');
    if (inner === undefined) return b.internLocation({ functionId: fn(outer!), line });
    return b.internLocation({ functionId: fn(inner), line: line + 1, inlinedInto: [{ functionId: fn(outer!), line: line + 2 }] });
  };
  for (const [stack, ms, lineOffset = 0] of stacks) b.addSample(stack.split(' ').reverse().map((frame) => location(frame, 1 + lineOffset)), [BigInt(ms) * 1_000_000n]);
  const file = join(tmp, name);
  writeFileSync(file, serializePprof(b.build()));
  return file;
}

const newFile = write('new.pb.gz', NEW);
const baseFile = write('base.pb.gz', BASE);
const netFile = write('net.pb.gz', [...NEW, ...BASE.map(([s, v]): [string, number, number] => [s, -v, 10])]);

/** `go tool pprof PPROF_ARGS` and `profkit ARGS --quiet`: the same output. */
async function expectSameAsPprof(pprofArgs: string[], args: string[]): Promise<string> {
  const go = goPprofAsCompared(pprofArgs, tmp);
  expect(go.code, go.stderr).toBe(0);
  const ours = await profkit([...args, '--quiet']);
  expect(ours.code, ours.stderr).toBe(0);
  expect(ours.stdout, `profkit ${args.join(' ')}`).toBe(go.stdout);
  return ours.stdout;
}

describe.skipIf(!goAvailable)('calls to nodes not shown = go tool pprof', () => {
  const diffBase = `-diff_base=${baseFile}`;

  it('-tree -diff_base prints the calls to and from nodes that net to 0', async () => {
    const text = await expectSameAsPprof(['-tree', diffBase, newFile], ['tree', newFile, '--diff-base', baseFile]);
    expect(text).toMatch(/ 0 +0% \|   x\n/);
    expect(text).toMatch(/ 0 +0% \|   same\n/);
    // Callers not shown: a run of two (the cut of diff-report.ts keeps both ends), a root.
    expect(text).toMatch(/ 9ms +100% \|   y2\n +9ms .*\| e\n/);
    expect(text).toMatch(/ 3ms +100% \|   q\n +3ms .*\| k\n/);
  });

  it('-tree -drop_negative prints the calls to the negative nodes (diff and plain)', async () => {
    const text = await expectSameAsPprof(['-tree', '-drop_negative', diffBase, newFile], ['tree', newFile, '--diff-base', baseFile, '--drop-negative']);
    expect(text).toMatch(/\|   shrunk\n/);
    await expectSameAsPprof(['-tree', '-drop_negative', netFile], ['tree', netFile, '--drop-negative']);
    await expectSameAsPprof(['-tree', netFile], ['tree', netFile]);
  });

  it('-peek prints the calls to nodes that net to 0 and to negative nodes', async () => {
    const text = await expectSameAsPprof(['-peek=S2$', diffBase, newFile], ['peek', newFile, 'S2$', '--diff-base', baseFile]);
    expect(text).toMatch(/ 0 +0% \|   x\n/);
    const main = await expectSameAsPprof(['-peek=^main$', '-drop_negative', netFile], ['peek', netFile, '^main$', '--drop-negative']);
    expect(main).toMatch(/\|   shrunk\n/);
  });

  it('-top marks an entry inlined into a node not shown (merged and side-by-side diff)', async () => {
    const text = await expectSameAsPprof(['-top', diffBase, newFile], ['top', newFile, '--diff-base', baseFile]);
    expect(text).toMatch(/ ci \(inline\)\n/);
    await expectSameAsPprof(['-top', diffBase, newFile], ['diff', baseFile, newFile]);
    await expectSameAsPprof(['-top', '-drop_negative', diffBase, newFile], ['top', newFile, '--diff-base', baseFile, '--drop-negative']);
    await expectSameAsPprof(['-top', netFile], ['top', netFile]);
  });
});

describe('calls to nodes not shown in --json', () => {
  it('tree --json names a caller that is not an entry (y2 nets to 0)', async () => {
    const r = await profkit(['tree', newFile, '--diff-base', baseFile, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as { nodes: { name: string; callers: unknown[] }[] };
    expect(doc.nodes.map((n) => n.name)).not.toContain('y2');
    expect(doc.nodes.find((n) => n.name === 'e')!.callers).toEqual([{ name: 'y2', weight: '9000000', percentOfCum: 100, inline: false }]);
  });
});
