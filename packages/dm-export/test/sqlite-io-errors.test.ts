import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ErrorCodes, isProfkitError, type ProfkitError } from '@profkit/core/node';
import { insertProfile, openDatabase } from '../src/sqlite.js';
import { cliBin, haveCli, repoRoot } from '@profkit/test-utils';
import { richProfile, syntheticProfile } from './helpers.js';

// A SQLite write that fails because of the disk or the file (full, I/O error, read-only, cannot
// be opened) is an I/O error (PROFKIT_E_IO, exit 3), not "the profile breaks a constraint of the
// relational model" (PROFKIT_E_INVALID_PROFILE, exit 1) as `dm-export append` said on a full disk.

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDb(): string {
  const d = mkdtempSync(join(tmpdir(), 'profkit-sqlite-io-'));
  dirs.push(d);
  return join(d, 'profiles.sqlite');
}

function thrown(f: () => unknown): ProfkitError {
  try {
    f();
  } catch (e) {
    if (isProfkitError(e)) return e;
    throw new Error(`expected a ProfkitError, got ${String(e)}`);
  }
  throw new Error('expected an error');
}

describe('SQLite failures of the disk or file are PROFKIT_E_IO', () => {
  it('a full database (PRAGMA max_page_count: SQLite\'s own SQLITE_FULL) while appending', () => {
    const path = tempDb();
    const db = openDatabase(path, 'profiles.sqlite');
    try {
      insertProfile(db, richProfile(), { file: 'profiles.sqlite', nonEmpty: false });
      const pages = Number(db.pragma('page_count', { simple: true }));
      // The disk is "full" one page after what the database holds now.
      db.pragma(`max_page_count = ${pages + 1}`);
      const e = thrown(() => insertProfile(db, syntheticProfile(5000), { file: 'profiles.sqlite', nonEmpty: true }));
      expect(e.code).toBe(ErrorCodes.IO);
      expect(e.detail.errno).toBe('SQLITE_FULL');
      expect(e.detail.file).toBe('profiles.sqlite');
      expect(e.message).not.toContain('constraint');
      // The failed transaction left the first profile alone.
      expect(Number(db.prepare('SELECT count(*) FROM profiles').pluck(true).get())).toBe(1);
    } finally {
      db.close();
    }
  });

  it('a read-only database (SQLITE_READONLY)', () => {
    const path = tempDb();
    const w = openDatabase(path, 'profiles.sqlite');
    insertProfile(w, richProfile(), { file: 'profiles.sqlite', nonEmpty: false });
    w.close();
    const db = openDatabase(path, 'profiles.sqlite', true);
    try {
      const e = thrown(() => insertProfile(db, richProfile(), { file: 'profiles.sqlite', nonEmpty: true }));
      expect(e.code).toBe(ErrorCodes.IO);
      expect(String(e.detail.errno)).toMatch(/^SQLITE_READONLY/);
    } finally {
      db.close();
    }
  });

  it('a database that cannot be opened (SQLITE_CANTOPEN, or a missing directory) is an I/O error, not "not a SQLite database"', () => {
    const dir = join(tempDb(), '..');
    const e = thrown(() => openDatabase(dir, 'x.sqlite'));
    expect(e.code).toBe(ErrorCodes.IO);
    expect(String(e.detail.errno)).toMatch(/^SQLITE_CANTOPEN/);
    const missing = thrown(() => openDatabase(join(dir, 'no-such-dir', 'x.sqlite'), 'x.sqlite'));
    expect(missing.code).toBe(ErrorCodes.IO);
    expect(missing.message).toContain('no such directory');
  });
});

const havePrlimit = spawnSync('prlimit', ['--version']).status === 0;
if (!havePrlimit) console.warn('sqlite-io-errors: prlimit (util-linux) is not installed; the CLI full-disk test is skipped');

describe.skipIf(!havePrlimit || !haveCli('sqlite-io-errors'))('profkit dm-export append on a full disk', () => {
  it('exits 3 with PROFKIT_E_IO (not 1, "breaks a constraint"), leaving no database and no temporary file', () => {
    const db = tempDb();
    const dir = join(db, '..');
    const input = join(dir, 'big.folded');
    const lines: string[] = [];
    for (let i = 0; i < 20_000; i++) lines.push(`main;f${i % 300};g${i} ${(i % 13) + 1}`);
    writeFileSync(input, lines.join('\n') + '\n');
    // RLIMIT_FSIZE of 256 KiB: SQLite's writes beyond it fail as a full disk does (EFBIG -> SQLITE_IOERR_WRITE/SQLITE_FULL).
    const r = spawnSync('prlimit', [`--fsize=${256 * 1024}`, '--', process.execPath, cliBin, 'dm-export', 'append', db, input], { cwd: repoRoot, encoding: 'utf8', timeout: 120_000 });
    expect(r.status, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/^profkit: .*profiles\.sqlite: writing the SQLite database failed: .*\(SQLITE_(IOERR_WRITE|FULL)\) \[PROFKIT_E_IO\]\n$/);
    expect(existsSync(db)).toBe(false);
    expect(readdirSync(dir).sort()).toEqual(['big.folded']);
  });
});
