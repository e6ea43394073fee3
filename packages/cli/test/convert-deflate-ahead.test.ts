/**
 * `convert` plans its write before the read (pprof to pprof: the read deflates its bytes ahead on
 * a worker thread), but not when --add-comment or --buildid changes the profile: its encoding then
 * differs from the bytes read, and the worker would deflate a second copy in vain.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { profkit, repoRoot } from './views-helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'profkit-convert-ahead-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Whether the command loaded node:worker_threads (core loads it for the deflating-ahead worker only). */
async function startsWorker(args: string[]): Promise<boolean> {
  const spy = vi.spyOn(process, 'getBuiltinModule');
  try {
    expect((await profkit(args)).code).toBe(0);
    return spy.mock.calls.some(([id]) => id === 'node:worker_threads' || id === 'worker_threads');
  } finally {
    spy.mockRestore();
  }
}

describe('convert pprof -> pprof deflates ahead only for an unchanged profile', () => {
  it('--add-comment and --buildid: no worker; plain: the worker (an input of 1 MiB or more inflated); a small input: no worker', async () => {
    // The example's samples 300 times over: a pprof past the 1 MiB inflated from which a read deflates ahead.
    const [header, files, ...samples] = readFileSync(join(repoRoot, 'examples/r/fib.Rprof.out'), 'utf8').trimEnd().split('\n');
    const rprof = join(tmp, 'big.Rprof.out');
    writeFileSync(rprof, [header, files, ...Array.from({ length: 300 }, () => samples).flat()].join('\n') + '\n');
    const input = join(tmp, 'in.pb.gz');
    expect((await profkit(['convert', rprof, input, '--quiet'])).code).toBe(0);
    expect(gunzipSync(readFileSync(input)).length).toBeGreaterThanOrEqual(1 << 20);
    const small = join(tmp, 'small.pb.gz');
    expect((await profkit(['convert', join(repoRoot, 'examples/r/fib.Rprof.out'), small, '--quiet'])).code).toBe(0);
    expect(gunzipSync(readFileSync(small)).length).toBeLessThan(1 << 20);
    expect(await startsWorker(['convert', small, join(tmp, 's.pb.gz'), '--quiet'])).toBe(false);
    // Changed profiles first: a worker prepared by the plain convert would be reused, not loaded again.
    expect(await startsWorker(['convert', input, join(tmp, 'c.pb.gz'), '--add-comment', 'x', '--quiet'])).toBe(false);
    expect(await startsWorker(['convert', input, join(tmp, 'b.pb.gz'), '--buildid', 'abc', '--quiet'])).toBe(false);
    expect(await startsWorker(['convert', input, join(tmp, 'p.pb.gz'), '--quiet'])).toBe(true);
  });
});
