import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  cliBin,
  errorCodeOf,
  haveCli,
  haveSharedFixtures,
  haveTool,
  rejectionOf,
  repoRoot,
  runCli,
  runCliAsync,
  seededRandom,
  sharedDir,
  sharedFixturePath,
  thrownBy,
  which,
} from '../src/index.js';

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

describe('paths', () => {
  it('finds the repository root and the CLI binary path inside it', () => {
    expect(existsSync(join(repoRoot, 'CONTRIBUTING.md'))).toBe(true);
    expect(cliBin).toBe(join(repoRoot, 'packages', 'cli', 'dist', 'bin.cjs'));
  });

  it('honours PROFKIT_SHARED and warns, naming the missing path, when fixtures are absent', () => {
    const dir = mkdtempSync(join(tmpdir(), 'profkit-test-utils-'));
    try {
      vi.stubEnv('PROFKIT_SHARED', dir);
      expect(sharedDir()).toBe(dir);
      expect(sharedFixturePath('a/b.txt')).toBe(join(dir, 'fixtures', 'a', 'b.txt'));
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
      expect(haveSharedFixtures('suite X', 'a')).toBe(false);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0]![0])).toContain(`suite X: shared fixtures not found at ${join(dir, 'fixtures', 'a')}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('seededRandom', () => {
  it('is deterministic per seed, in [0, 1), and differs between seeds', () => {
    const take = (seed: number) => {
      const r = seededRandom(seed);
      return Array.from({ length: 1000 }, () => r());
    };
    const a = take(42);
    expect(take(42)).toEqual(a);
    expect(take(43)).not.toEqual(a);
    expect(a.every((x) => x >= 0 && x < 1)).toBe(true);
    // Roughly uniform: each tenth of [0, 1) gets between 5% and 15% of the draws.
    const buckets = new Array(10).fill(0);
    for (const x of a) buckets[Math.floor(x * 10)]++;
    expect(buckets.every((n) => n > 50 && n < 150)).toBe(true);
  });
});

describe('tools', () => {
  it('finds sh and not a missing tool, and names the apt package in the skip message', () => {
    expect(which('sh')).toMatch(/\/sh$/);
    expect(which('profkit-no-such-tool-xyz')).toBeUndefined();
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    expect(haveTool('profkit-no-such-tool-xyz', 'some-package', 'suite Y')).toBe(false);
    expect(String(warn.mock.calls[0]![0])).toBe('suite Y: skipping the tests that need profkit-no-such-tool-xyz: not installed (apt-get install -y some-package)');
    expect(() => which('sh; rm -rf /')).toThrow(/not a plain command name/);
  });
});

describe('errors', () => {
  it('returns what is thrown or rejected, and fails when nothing is', async () => {
    const e = Object.assign(new Error('boom'), { code: 'PROFKIT_E_X' });
    expect(thrownBy(() => {
      throw e;
    })).toBe(e);
    expect(() => thrownBy(() => 1)).toThrow(/expected an error/);
    expect(await rejectionOf(Promise.reject(e))).toBe(e);
    await expect(rejectionOf(Promise.resolve(1))).rejects.toThrow(/expected a rejection/);
    expect(errorCodeOf(() => {
      throw e;
    })).toBe('PROFKIT_E_X');
    expect(errorCodeOf(() => 1)).toBeUndefined();
  });
});

describe.skipIf(!haveCli('test-utils'))('runCli', () => {
  it('runs the built profkit binary, synchronously and not', async () => {
    const version = (JSON.parse(readFileSync(join(repoRoot, 'packages/cli/package.json'), 'utf8')) as { version: string }).version;
    const sync = runCli(['--version']);
    expect(sync.code, sync.stderr).toBe(0);
    expect(sync.stdout).toContain(version);
    const bad = await runCliAsync(['no-such-command']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('no-such-command');
  });
});
