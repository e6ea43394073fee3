/** The on-disk SQLite append: atomic, under `<db>.lock`, concurrent appends lose nothing. */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createRegistry } from '@profkit/core/node';
import { dmExportAdapter, listProfiles, lockDatabase, readSqlite, writeSqlite, writeSqliteFile } from '../src/index.js';
import { meaning, richProfile, syntheticProfile } from './helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'dm-export-file-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const noTemps = () => expect(readdirSync(tmp).filter((f) => f.startsWith('.profkit-tmp-') || f.endsWith('.lock'))).toEqual([]);

/** The pid of a process that has exited (so nothing runs under it, for a while). */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

describe('writeSqliteFile', () => {
  it('creates, then appends on disk; each profile reads back by profile_id', async () => {
    const db = join(tmp, 'a.sqlite');
    const p1 = richProfile();
    const p2 = syntheticProfile(300, 5);
    expect(await writeSqliteFile(db, { append: true }, async (add) => add(p1, { name: 'one' }))).toBe(1);
    const ino = statSync(db).ino;
    expect(await writeSqliteFile(db, { append: true }, async (add) => [add(p2, { name: 'two' }), add(p1, { profileId: 9 })])).toEqual([2, 9]);
    // Replaced by rename, not rewritten in place.
    expect(statSync(db).ino).not.toBe(ino);
    expect(listProfiles(db).map((r) => [r.profileId, r.name])).toEqual([[1, 'one'], [2, 'two'], [9, '']]);
    expect(meaning((await readSqlite(db, { profileId: 2 })).profile)).toEqual(meaning(p2));
    expect(meaning((await readSqlite(db, { profileId: 9 })).profile)).toEqual(meaning(p1));
    // The same database as the in-memory writer produces, in meaning.
    const mem = writeSqlite(p2, { append: true, existing: writeSqlite(p1, { name: 'one' }).bytes, name: 'two' }).bytes;
    expect(meaning((await readSqlite(mem, { profileId: 2 })).profile)).toEqual(meaning((await readSqlite(db, { profileId: 2 })).profile));
    noTemps();
  });

  it('leaves the database untouched when a profile is refused, and unlocks', async () => {
    const db = join(tmp, 'b.sqlite');
    await writeSqliteFile(db, { append: true }, async (add) => add(richProfile()));
    const before = readFileSync(db);
    await expect(writeSqliteFile(db, { append: true }, async (add) => [add(syntheticProfile(20)), add(richProfile(), { profileId: 1 })])).rejects.toMatchObject({
      code: 'PROFKIT_E_USAGE',
      message: expect.stringMatching(/profile_id 1 already exists/),
    });
    expect(readFileSync(db)).toEqual(before);
    noTemps();
  });

  it('append: false replaces the file with a new database; an input is never overwritten', async () => {
    const db = join(tmp, 'c.sqlite');
    await writeSqliteFile(db, { append: true }, async (add) => [add(richProfile()), add(richProfile())]);
    await writeSqliteFile(db, { append: false }, async (add) => add(syntheticProfile(10), { name: 'only' }));
    expect(listProfiles(db).map((r) => r.name)).toEqual(['only']);
    await expect(writeSqliteFile(db, { append: true, inputs: [db] }, async (add) => add(richProfile()))).rejects.toMatchObject({ code: 'PROFKIT_E_CLOBBER' });
    await expect(writeSqliteFile(join(tmp, 'no-such-dir', 'x.sqlite'), { append: false }, async (add) => add(richProfile()))).rejects.toMatchObject({ code: 'PROFKIT_E_IO' });
    await expect(writeSqliteFile(join(tmp, 'no-such-dir', 'x.sqlite'), { append: true }, async (add) => add(richProfile()))).rejects.toMatchObject({ code: 'PROFKIT_E_IO' });
    noTemps();
  });

  it('two concurrent appends in one process: both profiles are kept', async () => {
    const db = join(tmp, 'd.sqlite');
    const slow = (name: string) =>
      writeSqliteFile(db, { append: true, pollMs: 5 }, async (add) => {
        await new Promise((r) => setTimeout(r, 50));
        return add(syntheticProfile(200, name.length), { name });
      });
    const ids = await Promise.all([slow('first'), slow('second!')]);
    expect(ids.sort()).toEqual([1, 2]);
    expect(listProfiles(db).map((r) => r.name).sort()).toEqual(['first', 'second!']);
    noTemps();
  });

  it('a lock held by a running process: waits (bounded), then fails with "database is locked by pid N"', async () => {
    const db = join(tmp, 'e.sqlite');
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 20000)']);
    try {
      writeFileSync(`${db}.lock`, `${holder.pid}\n`);
      const t0 = Date.now();
      const err = await writeSqliteFile(db, { append: true, waitMs: 300 }, async (add) => add(richProfile())).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'PROFKIT_E_IO', message: expect.stringMatching(new RegExp(`^database is locked by pid ${holder.pid} `)), detail: { file: db, pid: holder.pid } });
      expect(Date.now() - t0).toBeGreaterThanOrEqual(300);
      expect(existsSync(db)).toBe(false);
      // The lock of another process is left alone.
      expect(readFileSync(`${db}.lock`, 'utf8')).toBe(`${holder.pid}\n`);
    } finally {
      holder.kill();
      rmSync(`${db}.lock`, { force: true });
    }
  });

  it('a stale lock (its process is gone) is taken over', async () => {
    const db = join(tmp, 'f.sqlite');
    writeFileSync(`${db}.lock`, `${deadPid()}\n`);
    expect(await writeSqliteFile(db, { append: true, waitMs: 2000 }, async (add) => add(richProfile()))).toBe(1);
    noTemps();
    const lock = await lockDatabase(db);
    expect(readFileSync(lock.path, 'utf8')).toBe(`${process.pid}\n`);
    lock.release();
    lock.release();
    expect(existsSync(lock.path)).toBe(false);
  });
});

describe('reading a database file on disk', () => {
  it('the codec opens the named file read-only instead of loading it, when the input is that file', async () => {
    const db = join(tmp, 'r.sqlite');
    await writeSqliteFile(db, { append: true }, async (add) => [add(richProfile(), { name: 'a' }), add(syntheticProfile(40), { name: 'b' })]);
    const registry = createRegistry([dmExportAdapter]);
    const r = await registry.read(db, { options: { profileId: 1 } });
    expect(meaning(r.profile)).toEqual(meaning(richProfile()));
    const last = await registry.read(db);
    expect(meaning(last.profile)).toEqual(meaning(syntheticProfile(40)));
    expect(last.warnings.map((w) => w.code)).toContain('PROFKIT_W_DM_SEVERAL_PROFILES');
    // Bytes handed with the name of a different file on disk are read from the bytes.
    const other = writeSqlite(syntheticProfile(7), { name: 'other' }).bytes;
    const viaBytes = await registry.read(other, { fileName: db });
    expect(meaning(viaBytes.profile)).toEqual(meaning(syntheticProfile(7)));
    // Reading never writes: no journal or lock beside the file.
    noTemps();
    expect(readdirSync(tmp).filter((f) => f.startsWith('r.sqlite'))).toEqual(['r.sqlite']);
  });

  it('a file that is not SQLite fails with PROFKIT_E_DM_NOT_SQLITE naming the file', async () => {
    const f = join(tmp, 'not.sqlite');
    writeFileSync(f, 'x'.repeat(200));
    await expect(readSqlite(f)).rejects.toMatchObject({ code: 'PROFKIT_E_DM_NOT_SQLITE', detail: { file: f, offset: 0 } });
    expect(() => listProfiles(f)).toThrow(expect.objectContaining({ code: 'PROFKIT_E_DM_NOT_SQLITE' }));
    expect(() => listProfiles(join(tmp, 'missing.sqlite'))).toThrow(expect.objectContaining({ code: 'PROFKIT_E_IO' }));
  });
});
