/**
 * Discovery's cache signs each checked path with its inode among other things; inode numbers past
 * 2^53 (XFS, btrfs, NFS, overlay file systems) must not be rounded, or a package.json replaced by
 * one whose inode differs only in the rounded bits looks unchanged. No test file system hands out
 * such inodes, so node:fs's statSync is wrapped to report one for a single file.
 */

import * as fs from 'node:fs';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { findInstalledAdapterPackages, type DiscoveryCache } from '../src/node/index.js';

vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  return { ...actual, statSync: vi.fn(actual.statSync) };
});

const root = mkdtempSync(join(tmpdir(), 'profkit-discovery-inode-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(() => {
  vi.useRealTimers();
  vi.mocked(fs.statSync).mockRestore();
});

/** Two inode numbers that are one double: 2^53 and 2^53 + 1. */
const INODES = [2n ** 53n, 2n ** 53n + 1n] as const;

describe('discovery cache: inode numbers past 2^53', () => {
  it('sees a package.json replaced by one whose inode differs only beyond double precision', async () => {
    expect(Number(INODES[0])).toBe(Number(INODES[1]));
    const { statSync: realStatSync } = await vi.importActual<typeof import('node:fs')>('node:fs');
    const dir = join(root, 'project');
    const pkgJson = join(dir, 'node_modules', 'profkit-adapter-a', 'package.json');
    mkdirSync(join(dir, 'node_modules', 'profkit-adapter-a'), { recursive: true });
    writeFileSync(pkgJson, JSON.stringify({ name: 'profkit-adapter-a', keywords: ['profkit-adapter'] }));
    // The file's inode is the fake one; its times are fixed (a replacement can keep them: npm
    // extracts every file with the same mtime), so only the inode tells the two files apart.
    let inode: bigint = INODES[0];
    vi.mocked(fs.statSync).mockImplementation(((path: fs.PathLike, options?: fs.StatSyncOptions) => {
      const st = realStatSync(path, options);
      if (!st || String(path) !== pkgJson) return st;
      const fixed = options?.bigint ? { ino: inode, mtimeMs: 1000n, ctimeMs: 1000n } : { ino: Number(inode), mtimeMs: 1000, ctimeMs: 1000 };
      return Object.assign(Object.create(Object.getPrototypeOf(st) as object) as object, st, fixed);
    }) as typeof fs.statSync);
    const entries = new Map<string, string>();
    const cache: DiscoveryCache = { get: (folder) => entries.get(folder), set: (folder, text) => void entries.set(folder, text) };
    // Discovery does not remember paths changed in the last 2 s: move the clock on.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 60_000);
    const found = () => findInstalledAdapterPackages([dir], cache).map((p) => p.name);

    expect(found()).toEqual(['profkit-adapter-a']);
    expect(entries.size).toBe(1);
    // Replaced: same size, same times, no longer an adapter, the next inode.
    writeFileSync(pkgJson, JSON.stringify({ name: 'profkit-adapter-a', keywords: ['profkit-adaptex'] }));
    inode = INODES[1];
    expect(found()).toEqual([]);
    // Unchanged, it is remembered again.
    const before = entries.get(join(dir, 'node_modules'));
    expect(found()).toEqual([]);
    expect(entries.get(join(dir, 'node_modules'))).toBe(before);
  });
});
