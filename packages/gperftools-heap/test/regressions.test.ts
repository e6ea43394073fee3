import { describe, expect, it } from 'vitest';
import { ErrorCodes, createRegistry, isProfkitError, type ReadLimits } from '@profkit/core/node';
import adapter from '../src/node.js';

// Read limits of issue 10 for the legacy formats (inputs of tools/fuzz's special set).

const registry = createRegistry([adapter]);
const enc = (s: string) => new TextEncoder().encode(s);
const HEAP = 'heap profile:    2:   128 [     2:   128] @ heapprofile\n';

async function outcome(format: string, bytes: Uint8Array, limits: ReadLimits) {
  try {
    return await registry.read(bytes, { format, fileName: 'x', limits });
  } catch (e) {
    return e;
  }
}

function cpu(frames: number, records: number): Uint8Array {
  const words = [0, 3, 0, 10000, 0];
  for (let r = 0; r < records; r++) words.push(1, frames, ...Array.from({ length: frames }, (_, i) => 0x1000 + i * 16 + r));
  words.push(0, 1, 0);
  return new Uint8Array(new Uint32Array(words).buffer);
}

const cases: [string, keyof ReadLimits, Uint8Array, number][] = [
  ['gperftools-heap', 'maxFramesPerStack', enc(HEAP + '     1:   64 [     1:   64] @' + ' 0x401000'.repeat(30) + '\n'), 29],
  ['gperftools-heap', 'maxSamples', enc(HEAP + '     1:   64 [     1:   64] @ 0x401000\n'.repeat(12)), 11],
  ['gperftools-heap', 'maxStringLength', enc(HEAP + '     1:   64 [     1:   64] @ 0x401000\nMAPPED_LIBRARIES:\n00400000-00452000 r-xp 00000000 08:02 1 /' + 'a'.repeat(300) + '\n'), 250],
  ['gperftools-cpu', 'maxFramesPerStack', cpu(30, 2), 29],
  ['gperftools-cpu', 'maxSamples', cpu(2, 12), 11],
  ['gperftools-contention', 'maxFramesPerStack', enc('--- contention:\nsampling period = 10\n3000 4 @' + ' 0x401000'.repeat(30) + '\n'), 29],
];

describe('gperftools legacy read limits', () => {
  for (const [format, option, bytes, limit] of cases) {
    it(`${format} ${option}`, async () => {
      const e = await outcome(format, bytes, { [option]: limit });
      expect(isProfkitError(e) && e.code).toBe(ErrorCodes.LIMIT);
      if (!isProfkitError(e)) return;
      expect(e.detail.option).toBe(option);
      expect(e.message).toContain(option);
      const ok = await outcome(format, bytes, { [option]: 1000 });
      expect(isProfkitError(ok) ? `${ok.code}: ${ok.message}` : 'read').toBe('read');
    });
  }
});
