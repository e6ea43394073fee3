/**
 * `convert` plans its write before the read (pprof to pprof: the read deflates its bytes ahead on
 * a worker thread), but not when --add-comment or --buildid changes the profile: its encoding then
 * differs from the bytes read, and the worker would deflate a second copy in vain.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  it('--add-comment and --buildid: no worker; plain: the worker', async () => {
    const input = join(tmp, 'in.pb.gz');
    expect((await profkit(['convert', join(repoRoot, 'examples/r/fib.Rprof.out'), input, '--quiet'])).code).toBe(0);
    // Changed profiles first: a worker prepared by the plain convert would be reused, not loaded again.
    expect(await startsWorker(['convert', input, join(tmp, 'c.pb.gz'), '--add-comment', 'x', '--quiet'])).toBe(false);
    expect(await startsWorker(['convert', input, join(tmp, 'b.pb.gz'), '--buildid', 'abc', '--quiet'])).toBe(false);
    expect(await startsWorker(['convert', input, join(tmp, 'p.pb.gz'), '--quiet'])).toBe(true);
  });
});
