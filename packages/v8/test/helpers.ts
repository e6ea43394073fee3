import { ProfileIndex, ProfkitError, resolveStack, validate, type Profile } from '@profkit/core';

/** A profile's samples by meaning: "root;…;leaf" of `name@file:line:column` → summed values of type `t`. */
export function stacksByMeaning(p: Profile, t = 0): Map<string, bigint> {
  const index = new ProfileIndex(p);
  const out = new Map<string, bigint>();
  for (let i = 0; i < p.samples.value.length; i++) {
    const key = resolveStack(p, i, index)
      .map((f) => `${f.name}@${f.filename}:${f.line}:${f.column}`)
      .reverse()
      .join(';');
    out.set(key, (out.get(key) ?? 0n) + p.samples['.values'][t]![i]!);
  }
  return out;
}

/** The stacks of the samples in order, as above (one string per sample). */
export function sampleStacks(p: Profile): string[] {
  const index = new ProfileIndex(p);
  return Array.from({ length: p.samples.value.length }, (_, i) =>
    resolveStack(p, i, index)
      .map((f) => f.name)
      .reverse()
      .join(';'),
  );
}

export function expectValid(p: Profile): void {
  const v = validate(p);
  if (!v.ok) throw new Error('invalid profile: ' + JSON.stringify(v.problems.slice(0, 3)));
}

export const enc = (x: unknown): Uint8Array => new TextEncoder().encode(typeof x === 'string' ? x : JSON.stringify(x));
export const dec = (b: Uint8Array): unknown => JSON.parse(new TextDecoder().decode(b));

export function callFrame(functionName: string, url = '', lineNumber = -1, columnNumber = -1, scriptId = '0') {
  return { functionName, scriptId, url, lineNumber, columnNumber };
}

/**
 * A small hand-written `.cpuprofile`: (root) → (program); (root) → main (app.js, line 0 col 9)
 * → work (line 4 col 13) and → (anonymous) (line 9); (root) → (garbage collector), (idle).
 * Samples (node ids): 4 4 2 5 3 6 7 4, deltas 100 100 250 100 50 100 100 300 µs from 1000.
 */
export function smallCpuProfile() {
  return {
    nodes: [
      { id: 1, callFrame: callFrame('(root)'), hitCount: 0, children: [2, 3, 6, 7] },
      { id: 2, callFrame: callFrame('(program)'), hitCount: 1 },
      { id: 3, callFrame: callFrame('main', 'file:///app.js', 0, 9, '7'), hitCount: 1, children: [4, 5] },
      { id: 4, callFrame: callFrame('work', 'file:///app.js', 4, 13, '7'), hitCount: 3, positionTicks: [{ line: 6, ticks: 2 }, { line: 7, ticks: 1 }] },
      { id: 5, callFrame: callFrame('', 'file:///app.js', 9, 2, '7'), hitCount: 1 },
      { id: 6, callFrame: callFrame('(garbage collector)'), hitCount: 1 },
      { id: 7, callFrame: callFrame('(idle)'), hitCount: 1 },
    ],
    startTime: 1000,
    endTime: 2200,
    samples: [4, 4, 2, 5, 3, 6, 7, 4],
    timeDeltas: [100, 100, 250, 100, 50, 100, 100, 300],
  };
}

/** The bytes in chunks of `size` (copies: a reader must not keep a chunk it was given). */
export async function* chunked(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.slice(i, i + size);
}

/** What a reader gives: its result, or its error's code, message and detail (to compare two readers). */
export async function outcome(read: () => unknown): Promise<unknown> {
  try {
    return await read();
  } catch (e) {
    if (e instanceof ProfkitError) return { code: e.code, message: e.message, detail: e.detail };
    throw e;
  }
}
