/** Damaged input never crashes: it reads (maybe with warnings) or fails with a ProfkitError. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isProfkitError, validate } from '@profkit/core/node';
import { readFoldedChunks, readRprofBytes, writeRprofText } from '../src/index.js';
import { chunked, fixturesDir } from './helpers.js';
import { seededRandom as rng } from '@profkit/test-utils';


const base = readFileSync(join(fixturesDir, 'grammar.out'));
const alphabet = Buffer.from(' "#:0123456789\n\r<>GCfa[]$\u00e9');

function mutate(r: () => number): Uint8Array {
  const b = Buffer.from(base);
  const kind = Math.floor(r() * 3);
  if (kind === 0) return b.subarray(0, Math.floor(r() * b.length)); // truncation
  const n = 1 + Math.floor(r() * 4);
  for (let k = 0; k < n; k++) {
    const at = Math.floor(r() * b.length);
    if (kind === 1) b[at] = alphabet[Math.floor(r() * alphabet.length)]!; // byte change
    else b[at] = Math.floor(r() * 256); // random byte
  }
  return b;
}

describe('mutated Rprof input', () => {
  it('600 mutations of grammar.out: valid profile or ProfkitError, streaming agrees, output reads back', async () => {
    const r = rng(7);
    let ok = 0;
    let failed = 0;
    for (let i = 0; i < 600; i++) {
      const bytes = mutate(r);
      let whole: ReturnType<typeof readRprofBytes> | undefined;
      let err: unknown;
      try {
        whole = readRprofBytes(bytes, { fileName: 'm.out' });
      } catch (e) {
        err = e;
      }
      if (err !== undefined) {
        expect(isProfkitError(err), String(err)).toBe(true);
        failed++;
        continue;
      }
      ok++;
      expect(validate(whole!.profile).ok).toBe(true);
      expect(await readRprofChunksSafe(bytes)).toEqual(whole);
      const { text } = await writeRprofText(whole!.profile);
      const again = readRprofBytes(new TextEncoder().encode(text));
      expect(again.profile.samples.value.length).toBeLessThanOrEqual(whole!.profile.samples.value.length);
    }
    // both outcomes occur, so the test exercises both paths
    expect(ok).toBeGreaterThan(50);
    expect(failed).toBeGreaterThan(50);
  });

  it('random folded lines: profile or ProfkitError', async () => {
    const r = rng(11);
    for (let i = 0; i < 300; i++) {
      const s = Array.from({ length: 1 + Math.floor(r() * 40) }, () => String.fromCharCode(alphabet[Math.floor(r() * alphabet.length)]! === 10 ? 10 : ';a b1 2'.charCodeAt(Math.floor(r() * 7)))).join('');
      try {
        await readFoldedChunks([new TextEncoder().encode(s)]);
      } catch (e) {
        expect(isProfkitError(e), String(e)).toBe(true);
      }
    }
  });
});

async function readRprofChunksSafe(bytes: Uint8Array) {
  const { readRprofChunks } = await import('../src/index.js');
  return readRprofChunks(chunked(bytes, 5), { fileName: 'm.out' });
}
