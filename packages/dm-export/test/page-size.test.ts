import { describe, expect, it } from 'vitest';
import { isProfkitError } from '@profkit/core/node';
import { readSqlite, writeSqlite } from '../src/index.js';
import { meaning, richProfile } from './helpers.js';

/** The page size recorded in a SQLite header (offset 16, big-endian; 1 means 65536). */
function headerPageSize(b: Uint8Array): number {
  const v = (b[16]! << 8) | b[17]!;
  return v === 1 ? 65536 : v;
}

describe('writeSqlite pageSize', () => {
  it('writes a new database with the page size asked, smaller for small pages, same meaning', async () => {
    const p = richProfile();
    const normal = writeSqlite(p).bytes;
    const small = writeSqlite(p, { pageSize: 512 }).bytes;
    expect(headerPageSize(normal)).toBe(4096);
    expect(headerPageSize(small)).toBe(512);
    expect(small.length).toBeLessThan(normal.length / 2);
    expect(meaning((await readSqlite(small)).profile)).toEqual(meaning((await readSqlite(normal)).profile));
    expect(headerPageSize(writeSqlite(p, { pageSize: 65536 }).bytes)).toBe(65536);
  });

  it('keeps the existing page size when appending', async () => {
    const first = writeSqlite(richProfile(), { pageSize: 1024 }).bytes;
    const both = writeSqlite(richProfile(), { append: true, existing: first, pageSize: 8192 }).bytes;
    expect(headerPageSize(both)).toBe(1024);
    expect((await readSqlite(both, { profileId: 2 })).profileId).toBe(2);
  });

  it.each([100, 1000, 131072, 1.5])('refuses %s (not a power of two in 512..65536)', (pageSize) => {
    let e: unknown;
    try {
      writeSqlite(richProfile(), { pageSize });
    } catch (x) {
      e = x;
    }
    expect(isProfkitError(e) && e.code).toBe('PROFKIT_E_USAGE');
    expect(isProfkitError(e) && e.detail.option).toBe('pageSize');
  });
});
