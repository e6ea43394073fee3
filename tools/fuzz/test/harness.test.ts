import { describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fuzz, mutate, rng, throwSite, memoryBound, gzipBomb } from '../src/index.js';
import { gunzipBounded, isProfkitError } from '@profkit/core/node';

// The harness itself must catch every kind of failure: the `harness-check` target misbehaves on
// purpose (typed error, untyped exception, hang, heap growth, process exit, limit error without
// its option) and each must be reported and saved, while the successes are not.
describe('fuzz harness', () => {
  it('reports and saves untyped exceptions, hangs, memory growth, dead executors and limit errors without option', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'profkit-fuzz-test-'));
    try {
      const s = await fuzz({ target: 'harness-check', execs: 0, special: false, timeoutMs: 1500, crashDir: dir });
      const kinds = s.crashes.map((c) => c.kind).sort();
      expect(kinds).toEqual(['died', 'exception', 'memory', 'timeout', 'untyped-limit']);
      expect(s.outcomes.ok).toBe(1);
      expect(s.outcomes.PROFKIT_E_PARSE).toBe(1);
      // The executor is restarted after a hang and after it died.
      expect(s.restarts).toBe(2);
      for (const c of s.crashes) {
        expect(existsSync(c.file!)).toBe(true);
        const meta = JSON.parse(readFileSync(c.file!.replace(/\.bin$/, '.json'), 'utf8'));
        expect(meta.kind).toBe(c.kind);
        expect(meta.target).toBe('harness-check');
      }
      expect(s.crashes.find((c) => c.kind === 'exception')!.message).toContain('untyped');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('with coverage, inputs reaching new code blocks of the packages are counted', async () => {
    const s = await fuzz({ target: 'folded', execs: 300, special: false, seed: 5, coverage: true });
    expect(s.crashes).toEqual([]);
    expect(s.blocks).toBeGreaterThan(0);
    const without = await fuzz({ target: 'folded', execs: 50, special: false, seed: 5, coverage: false });
    expect(without.blocks).toBe(0);
  });

  it('mutations are deterministic for a seed and bounded in length', () => {
    const seed = new TextEncoder().encode('sample.interval=20000\n"a" "b" 1#2\n');
    const a = Array.from({ length: 50 }, (_, i) => mutate(seed, rng(i), [seed], 64));
    const b = Array.from({ length: 50 }, (_, i) => mutate(seed, rng(i), [seed], 64));
    expect(a).toEqual(b);
    expect(new Set(a.map((x) => Buffer.from(x).toString('hex'))).size).toBeGreaterThan(30);
    expect(Math.max(...a.map((x) => x.length))).toBeLessThanOrEqual(64);
  });

  it('names the throw site from a stack, skipping the error machinery', () => {
    const stack = 'ProfkitError: x\n    at new ProfkitError (file:///r/packages/core/dist/errors.js:70:9)\n    at limitError (file:///r/packages/core/dist/limits.js:20:12)\n    at RprofParser.traceLine (file:///r/packages/rprof/dist/read.js:251:19)';
    expect(throwSite(stack)).toBe('read.js:251');
    expect(memoryBound(1000)).toBeGreaterThan(memoryBound(10));
  });

  it('gzip bombs are small and inflate far beyond the limit', () => {
    const bomb = gzipBomb(new TextEncoder().encode('head\n'), 0x20, 256 * 1024 * 1024);
    expect(bomb.length).toBeLessThan(512 * 1024);
    try {
      gunzipBounded(bomb, { maxDecompressedBytes: 16 * 1024 * 1024 });
      expect.unreachable('the bomb inflated within 16 MiB');
    } catch (e) {
      expect(isProfkitError(e) && e.code).toBe('PROFKIT_E_LIMIT');
    }
  });
});
