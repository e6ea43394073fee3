import { describe, expect, it } from 'vitest';
import { isProfkitError, validate } from '@profkit/core/node';
import { seededRandom } from '@profkit/test-utils';
import { readLegacy } from '../src/node.js';
import { bytes, haveShared, localFixture, sharedFixture } from './helpers.js';

/** Reading must either give a valid profile or throw a ProfkitError: never anything else. */
function readOrTypedError(b: Uint8Array): 'ok' | 'error' {
  try {
    const r = readLegacy(b, { fileName: 'mutant' });
    const v = validate(r.profile);
    if (!v.ok) throw new Error(`invalid profile from mutant: ${JSON.stringify(v.problems.slice(0, 2))}`);
    return 'ok';
  } catch (e) {
    if (isProfkitError(e)) return 'error';
    throw e;
  }
}

const inputs: [string, () => Uint8Array][] = [
  ['warn.heap', () => localFixture('warn.heap')],
  ['negative.heap', () => localFixture('negative.heap')],
  ['go.mutex', () => localFixture('go.mutex')],
  ...(haveShared
    ? (['cppbench.heap', 'cppbench.cpu', 'java.cpu', 'java.heap', 'cppbench.thread', 'cppbench.contention', 'go.godoc.thread'] as const).map(
        (n) => [n, () => sharedFixture(`pprof/profile/testdata/${n}`)] as [string, () => Uint8Array],
      )
    : []),
];

describe('mutated inputs never crash', () => {
  for (const [name, load] of inputs) {
    it(`${name}: truncations and byte flips give a profile or a typed error`, () => {
      const orig = load();
      const rand = seededRandom(name.length * 7919 + orig.length);
      const outcomes = { ok: 0, error: 0 };
      for (let k = 0; k < 60; k++) {
        const b = orig.slice(0, k % 3 === 0 ? Math.floor(rand() * orig.length) : orig.length);
        const flips = 1 + Math.floor(rand() * 4);
        for (let f = 0; f < flips && b.length > 0; f++) b[Math.floor(rand() * b.length)] = Math.floor(rand() * 256);
        outcomes[readOrTypedError(b)]++;
      }
      expect(outcomes.ok + outcomes.error).toBe(60);
    });
  }
});

describe('pathological lines stay linear', () => {
  const n = 200_000;
  it('a long digit run in a heap row is refused', () => {
    expect(readOrTypedError(bytes(`heap profile: 1: 2 [1: 2] @ heapprofile\n${'1'.repeat(n)}x:\n`))).toBe('error');
  });
  it('long junk and space runs in rows, maps and Java sections', () => {
    const junk = 'a1 '.repeat(n / 3);
    expect(readOrTypedError(bytes(`heap profile: 1: 2 [1: 2] @ heapprofile\n1: 2 [1: 2] @ 0x1\n\nMAPPED_LIBRARIES:\n${'0'.repeat(n)}\n${'a:1'.repeat(n / 3)}] x\n`))).toBe('ok');
    expect(readOrTypedError(bytes(`--- contention:\ncycles/second = 1000\n1 ${' '.repeat(n)}x\n`))).toBe('error');
    expect(readOrTypedError(bytes(`--- heapz 1 ---\nformat = java\nresolution = bytes\n1 ${' '.repeat(n)}x\n0x1 ${' ('.repeat(n / 2)}\n`))).toBe('ok');
    // Not C++ contention (unknown attribute), and as Java: no attributes, no samples (google/pprof accepts it too).
    expect(readOrTypedError(bytes(`--- contentionz 1 ---\n${'a '.repeat(n / 2)}=\n`))).toBe('ok');
    expect(readOrTypedError(bytes(`heap profile: 1: 2 [1: 2] @ heapprofile\n${junk}\n`))).toBe('error');
  });
  it('nested map variables do not expand without bound', () => {
    const lines = ['v0=' + 'x'.repeat(4000)];
    for (let i = 1; i < 40; i++) lines.push(`v${i}=$v${i - 1}$v${i - 1}`);
    lines.push('00400000-00500000: $v39/bin');
    const r = readLegacy(bytes(`heap profile: 1: 2 [1: 2] @ heapprofile\n1: 2 [1: 2] @ 0x400100\n\nMAPPED_LIBRARIES:\n${lines.join('\n')}\n`));
    // The one mapping line is read, with a bounded name (expansions beyond 8192 characters are dropped).
    expect(r.profile['.mappings'].filename).toHaveLength(1);
    expect(r.profile['.mappings'].filename[0]!.length).toBeLessThanOrEqual(8192);
  });
});
