/**
 * The CLI's cache folder may be one others can write to (PROFKIT_CACHE_DIR set to a shared folder):
 * a FIFO planted where a discovery entry is read must not block the CLI waiting for a writer.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cliBin } from '@profkit/test-utils';
import { afterAll, describe, expect, it } from 'vitest';
// The hash that names a folder's discovery entry (`discover/<fnv1a(folder)>.json`): the CLI's own, so the FIFOs sit where it reads.
import { fnv1a } from '../src/fast-start.cjs';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '../../..');
const root = mkdtempSync(join(tmpdir(), 'profkit-cache-fifo-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));


describe('cache files', () => {
  it.skipIf(process.platform === 'win32')('a FIFO in place of a discovery entry is skipped, not waited on', () => {
    const cache = join(root, 'cache');
    mkdirSync(join(cache, 'discover'), { recursive: true });
    // Every node_modules folder discovery may search: the working folder's and the CLI install's ancestors.
    const folders = new Set<string>();
    for (let dir = resolve(here, '..'); dir !== dirname(dir); dir = dirname(dir)) folders.add(join(dir, 'node_modules'));
    for (let dir = root; dir !== dirname(dir); dir = dirname(dir)) folders.add(join(dir, 'node_modules'));
    for (const folder of folders) expect(spawnSync('mkfifo', [join(cache, 'discover', `${fnv1a(folder)}.json`)]).status).toBe(0);
    const r = spawnSync(process.execPath, [cliBin, 'top', join(repoRoot, 'examples/r/fib.Rprof.out')], {
      cwd: root,
      env: { ...process.env, PROFKIT_CACHE_DIR: cache },
      encoding: 'utf8',
      // The CLI handles SIGTERM in JavaScript, which a thread blocked in open(2) never runs.
      timeout: 20_000,
      killSignal: 'SIGKILL',
    });
    expect({ status: r.status, signal: r.signal, stderr: r.stderr }).toEqual({ status: 0, signal: null, stderr: '' });
    expect(r.stdout).toMatch(/fib/);
  }, 60_000);
});
