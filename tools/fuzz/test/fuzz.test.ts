import { describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fuzz, sharedFixturesDir, TARGET_NAMES } from '../src/index.js';

// The short run of `npm test`: every reader gets its special inputs (length-prefix and gzip
// bombs, huge stacks, strings and sample counts, deep nesting) and then up to 2,000 mutations,
// bounded to a few seconds per target (about a minute in all). The nightly-style run is
// `npm run fuzz -- --target <t> --execs 1000000`.
const fixtures = sharedFixturesDir();
if (!fixtures) console.warn('shared fixtures not found (../shared/fixtures or PROFKIT_SHARED): fuzzing from generated and package seeds only');

const SECONDS = Number(process.env.PROFKIT_FUZZ_SECONDS ?? 2.5);
// The watchdog of one input. The largest special inputs (1.1M gperftools records, just above the
// fuzzer's maxSamples) take 8–12 s on a loaded 2-core machine: the bound here catches hangs, not
// slowness, so it leaves room for CI load (the nightly run keeps its 10 s default).
const WATCHDOG_MS = 60_000;

describe('short fuzz run: every input ends in a profile or a typed PROFKIT_E_ error', () => {
  const dir = mkdtempSync(join(tmpdir(), 'profkit-fuzz-crashers-'));
  for (const target of TARGET_NAMES) {
    it(target, { timeout: 300_000 }, async () => {
      const s = await fuzz({ target, execs: 2000, maxSeconds: SECONDS, seed: 20261121, timeoutMs: WATCHDOG_MS, crashDir: dir });
      const report = s.crashes.map((c) => `${c.kind} ${c.feature} (${c.input}): ${c.message}\n${c.stack ?? ''}\nsaved as ${c.file}`).join('\n\n');
      expect(report).toBe('');
      expect(s.seeds).toBeGreaterThan(0);
      expect(s.execs).toBeGreaterThan(0);
      // The run reached both outcomes: some inputs were read, some were rejected with a typed error.
      expect(s.outcomes.ok ?? 0).toBeGreaterThan(0);
      expect(Object.keys(s.outcomes).filter((k) => k.startsWith('PROFKIT_E_')).length).toBeGreaterThan(0);
      expect(s.features).toBeGreaterThan(1);
    });
  }
  it('saved no crasher files', () => {
    const saved = existsSync(dir) ? readdirSync(dir, { recursive: true }) : [];
    rmSync(dir, { recursive: true, force: true });
    expect(saved).toEqual([]);
  });
});
