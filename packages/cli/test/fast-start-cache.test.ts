/**
 * The fast start's cache folder (packages/cli/src/fast-start.cts): check markers sign files with an
 * exact inode (inode numbers past 2^53 exist on XFS, btrfs, NFS and overlay file systems), and
 * pruning goes by last use, not by last write.
 */

import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { discoveryCacheFiles, fnv1a, pruneCache, statSignature } from '../src/fast-start.cjs';

const root = mkdtempSync(join(tmpdir(), 'profkit-fast-start-cache-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('statSignature: the (size, mtime, ctime, inode) of a check marker', () => {
  /** Plain stats of a file whose inode is `ino`: what Node gives is the nearest double. */
  const plain = (ino: bigint) => ({ size: 10, mtimeMs: 1000.5, ctimeMs: 2000.25, ino: Number(ino) });

  it('tells apart inodes that differ only beyond double precision (2^53 and 2^53 + 1), through bigint stats', () => {
    const [a, b] = [2n ** 53n, 2n ** 53n + 1n];
    expect(plain(a).ino).toBe(plain(b).ino);
    const sigA = statSignature(plain(a), () => ({ ino: a }));
    const sigB = statSignature(plain(b), () => ({ ino: b }));
    expect(sigA).not.toBe(sigB);
    expect(sigB.split('\0')).toEqual(['10', '1000.5', '2000.25', '9007199254740993']);
  });

  it('asks for bigint stats only when the plain inode may be rounded', () => {
    const file = join(root, 'f');
    writeFileSync(file, 'x');
    const s = statSync(file);
    expect(Number.isSafeInteger(s.ino)).toBe(true);
    expect(statSignature(s, () => expect.unreachable('bigint stats of a safe inode'))).toBe(`1\0${s.mtimeMs}\0${s.ctimeMs}\0${statSync(file, { bigint: true }).ino}`);
  });
});

describe('pruneCache: by last use', () => {
  const DAY = 24 * 3600 * 1000;
  let cache: string;
  let saved: string | undefined;
  beforeEach(() => {
    saved = process.env.PROFKIT_CACHE_DIR;
    cache = mkdtempSync(join(root, 'cache-'));
    process.env.PROFKIT_CACHE_DIR = cache;
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.PROFKIT_CACHE_DIR;
    else process.env.PROFKIT_CACHE_DIR = saved;
  });
  const age = (path: string, days: number) => utimesSync(path, (Date.now() - days * DAY) / 1000, (Date.now() - days * DAY) / 1000);

  it('keeps a discovery entry written a month ago but read since; deletes the one nobody read', () => {
    const entries = discoveryCacheFiles();
    entries.set('/used/node_modules', '{"used":true}');
    entries.set('/unused/node_modules', '{"used":false}');
    const used = join(cache, 'discover', `${fnv1a('/used/node_modules')}.json`);
    const unused = join(cache, 'discover', `${fnv1a('/unused/node_modules')}.json`);
    age(used, 30);
    age(unused, 30);
    expect(entries.get('/used/node_modules')).toBe('{"used":true}'); // a start using it
    pruneCache(cache, '0123456789abcdef');
    expect(existsSync(used)).toBe(true);
    expect(existsSync(unused)).toBe(false);
    expect(entries.get('/used/node_modules')).toBe('{"used":true}');
  });

  it("touches a file read at most once a day; prunes other bundles' unused code caches and markers, never this bundle's", () => {
    mkdirSync(join(cache, 'checked'), { recursive: true, mode: 0o700 });
    const otherCode = join(cache, 'cli-fedcba9876543210-top-node-x.v8cache');
    const otherMarker = join(cache, 'checked', 'fedcba9876543210-00000000');
    const ownCode = join(cache, 'cli-0123456789abcdef-top-node-x.v8cache');
    for (const f of [otherCode, otherMarker, ownCode]) {
      writeFileSync(f, 'data', { mode: 0o600 });
      age(f, 30);
    }
    // Read an hour after its last mark: the mark stands (no metadata write on every start).
    const entries = discoveryCacheFiles();
    entries.set('/recent/node_modules', 'r');
    const recent = join(cache, 'discover', `${fnv1a('/recent/node_modules')}.json`);
    age(recent, 1 / 24);
    const before = statSync(recent).mtimeMs;
    expect(entries.get('/recent/node_modules')).toBe('r');
    expect(statSync(recent).mtimeMs).toBe(before);
    pruneCache(cache, '0123456789abcdef');
    expect([otherCode, otherMarker, ownCode, recent].map(existsSync)).toEqual([false, false, true, true]);
  });
});
