/**
 * A pprof profile whose two locations hold 600,000 inline lines (1.9 MB gzipped), for the tests
 * that views of it stay within a small JavaScript heap (`inline-lines-memory.test.ts`,
 * `flame-memory.test.ts`), and the CLI run in such a heap.
 */

import { spawnSync } from 'node:child_process';
import { ProfileBuilder } from '@profkit/core';
import { serializePprof } from '@profkit/pprof';
import { cliBin, repoRoot } from '@profkit/test-utils';

/**
 * Two samples, on a location of 400,000 lines (value 3, label thread=t1) and on one of 200,000
 * lines above it (value 2, thread=t2); the lines name 100 functions `f0`..`f99` in turn.
 */
export function manyInlineLinesProfile(): Uint8Array {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
  const fns = Array.from({ length: 100 }, (_, i) => b.internFunction({ name: `f${i}`, filename: 'f.go' }));
  const location = (lines: number, line: number) =>
    b.internLocation({ functionId: fns[0]!, line, inlinedInto: Array.from({ length: lines - 1 }, (_, k) => ({ functionId: fns[(k + 1) % 100]!, line: line + k })) });
  const outer = location(400_000, 1);
  const inner = location(200_000, 2);
  b.addSample([outer], [3n], [{ key: 'thread', str: 't1' }]);
  b.addSample([inner, outer], [2n], [{ key: 'thread', str: 't2' }]);
  return serializePprof(b.build());
}

/** `profkit ARGS` in a node whose old-generation heap is `heapMiB` (a heap out of memory aborts it). */
export function profkitInHeap(heapMiB: number, args: string[]) {
  const r = spawnSync(process.execPath, [`--max-old-space-size=${heapMiB}`, cliBin, ...args], { cwd: repoRoot, encoding: 'utf8', maxBuffer: 256 << 20, timeout: 120_000 });
  return { code: r.status, signal: r.signal, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/**
 * One sample whose stack is `entries` times one location of `lines` inline lines (`f0`..`f99` in
 * turn): its flame graph draws 1 + entries × lines frames, all of the full width (1,000 × 2,000:
 * 2M frames from a 1.9 KB gzipped file; see `maxFlameFrames`).
 */
export function repeatedInlineLocationProfile(entries: number, lines: number): Uint8Array {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
  const fns = Array.from({ length: 100 }, (_, i) => b.internFunction({ name: `f${i}`, filename: 'f.go' }));
  const location = b.internLocation({ functionId: fns[0]!, line: 1, inlinedInto: Array.from({ length: lines - 1 }, (_, k) => ({ functionId: fns[(k + 1) % 100]!, line: k + 2 })) });
  b.addSample(new Array<number>(entries).fill(location), [1n]);
  return serializePprof(b.build());
}
