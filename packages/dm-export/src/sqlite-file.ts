/**
 * SQLite databases as files, on disk: appending without loading the database into memory, under
 * a lock file so that concurrent appends never lose a profile.
 *
 * Append = lock `<db>.lock` (created exclusively; a lock whose process is gone is stale and
 * removed), copy the database to a temporary file in the same directory, open the copy on disk,
 * add the profiles (one transaction each), close, fsync, rename over the original, unlock. A crash
 * leaves the old database or the new one, never a half-written one; memory does not depend on the
 * database size (SQLite's page cache is bounded).
 */

import { closeSync, constants, copyFileSync, existsSync, fsyncSync, openSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { createReadStream } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { ErrorCodes, ProfkitError, ioError, type Profile } from '@profkit/core/node';
import { insertProfile, openDatabase } from './sqlite.js';

export interface LockOptions {
  /** How long to wait for another process's lock before failing (default 30 s). */
  waitMs?: number;
  /** Poll interval while waiting (default 50 ms). */
  pollMs?: number;
}

/** A held lock; `release()` removes the lock file (once; later calls do nothing). */
export interface DatabaseLock {
  path: string;
  release(): void;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: the process exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const sleep = (ms: number) => new Promise<void>((ok) => setTimeout(ok, ms));

/** Removes held locks when the process exits (e.g. a CLI run that ends before a deferred release). */
const held = new Set<string>();
let exitHook = false;
function track(path: string): void {
  held.add(path);
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const p of held) rmSync(p, { force: true });
    });
  }
}

/**
 * Takes `<db>.lock`: creates it exclusively with this process's pid. When it exists, waits
 * (bounded by `waitMs`) for its owner to remove it; a lock whose pid is not running (or that is
 * unreadable and older than 10 s) is stale and taken over. Fails with `PROFKIT_E_IO`
 * "database is locked by pid N".
 */
export async function lockDatabase(db: string, options: LockOptions = {}): Promise<DatabaseLock> {
  const path = `${db}.lock`;
  const waitMs = options.waitMs ?? 30_000;
  const pollMs = options.pollMs ?? 50;
  const deadline = Date.now() + waitMs;
  let owner: number | undefined;
  for (;;) {
    let fd: number | undefined;
    try {
      fd = openSync(path, 'wx', 0o644);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      track(path);
      let released = false;
      return {
        path,
        release() {
          if (released) return;
          released = true;
          held.delete(path);
          rmSync(path, { force: true });
        },
      };
    } catch (e) {
      if (fd !== undefined) closeSync(fd);
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw ioError(e, path, 'creating the lock file');
    }
    let text = '';
    let mtime = Date.now();
    try {
      text = readFileSync(path, 'utf8');
      mtime = statSync(path).mtimeMs;
    } catch {
      continue; // removed meanwhile: try again at once
    }
    const pid = /^\d+\s*$/.test(text) ? Number(text) : undefined;
    owner = pid;
    const stale = pid !== undefined ? pid !== process.pid && !alive(pid) : Date.now() - mtime > 10_000;
    if (stale) {
      // Only remove the lock we judged stale (not one another process took meanwhile).
      try {
        if (readFileSync(path, 'utf8') === text) rmSync(path, { force: true });
      } catch {
        // already gone
      }
      continue;
    }
    if (Date.now() >= deadline) {
      throw new ProfkitError(ErrorCodes.IO, `database is locked by ${owner !== undefined ? `pid ${owner}` : 'another process'} (lock file ${path}); waited ${Math.round(waitMs / 1000)} s`, {
        file: db,
        rule: 'one writer at a time: <db>.lock',
        lock: path,
        pid: owner,
      });
    }
    await sleep(pollMs);
  }
}

function tempName(db: string): string {
  return join(dirname(resolve(db)), `.profkit-tmp-${basename(db)}-${process.pid}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`);
}

function fsyncFile(path: string): void {
  const fd = openSync(path, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function fsyncDir(path: string): void {
  try {
    const fd = openSync(dirname(resolve(path)), 'r');
    try {
      fsyncSync(fd);
    } catch {
      // some file systems cannot sync directories; the rename already happened
    } finally {
      closeSync(fd);
    }
  } catch {
    // cannot open the directory: nothing more to do
  }
}

function sameFile(a: string, b: string): boolean {
  try {
    const sa = statSync(realpathSync(a));
    const sb = statSync(realpathSync(b));
    return sa.ino === sb.ino && sa.dev === sb.dev;
  } catch {
    return resolve(a) === resolve(b);
  }
}

export interface SqliteFileOptions extends LockOptions {
  /** true: add to the database (created when absent); false: replace the file with a new database. */
  append: boolean;
  /** Files that must not be overwritten (the inputs of the operation). */
  inputs?: string[];
}

/**
 * Adds one profile to the open (temporary) database, in one transaction; returns its profile_id.
 * `onRows` reports progress: rows loaded so far and the profile's total row count.
 */
export type AddProfile = (profile: Profile, options?: { name?: string; profileId?: number; onRows?: (done: number, total: number) => void }) => number;

/**
 * Opens `<db>` for writing (see the module comment): a copy (append) or a new database (replace)
 * in a temporary file beside it, handed to `fill`, which adds profiles with `add`. Returns what
 * `fill` returns, the temporary file (closed and fsync'ed, not yet renamed) and the held lock; the
 * caller renames or streams the file, then removes it and releases the lock. On error, the
 * temporary file is removed and the lock released here.
 */
async function prepare<T>(db: string, options: SqliteFileOptions, fill: (add: AddProfile) => Promise<T>): Promise<{ result: T; tmp: string; lock: DatabaseLock }> {
  if (db === '-') throw new ProfkitError(ErrorCodes.USAGE, 'a SQLite database file cannot be written to stdout: name the file', { option: 'append' });
  for (const input of options.inputs ?? []) {
    if (input !== '-' && existsSync(db) && sameFile(input, db)) {
      throw new ProfkitError(ErrorCodes.CLOBBER, `refusing to overwrite the input file ${input}; write to another path`, { file: db });
    }
  }
  const lock = await lockDatabase(db, options);
  const tmp = tempName(db);
  try {
    const existed = options.append && existsSync(db);
    try {
      if (existed) copyFileSync(db, tmp, constants.COPYFILE_EXCL);
      // An empty file is an empty database to SQLite; creating it here names the real problem
      // (a missing directory, no permission) as an I/O error.
      else closeSync(openSync(tmp, 'wx', 0o644));
    } catch (e) {
      throw ioError(e, existed ? db : tmp, existed ? 'copying' : 'creating');
    }
    const handle = openDatabase(tmp, db);
    let result: T;
    try {
      // The copy is private until renamed: no rollback journal needed on disk, and the fsync
      // below makes it durable before the rename.
      handle.pragma('journal_mode = MEMORY');
      handle.pragma('synchronous = OFF');
      handle.pragma('temp_store = MEMORY');
      // Page cache bounded to 64 MiB, whatever the database size.
      handle.pragma('cache_size = -65536');
      const add: AddProfile = (profile, o = {}) =>
        insertProfile(handle, profile, { profileId: o.profileId, name: o.name, file: db, nonEmpty: !!existed, onRows: o.onRows });
      result = await fill(add);
    } finally {
      handle.close();
    }
    try {
      fsyncFile(tmp);
    } catch (e) {
      // Delayed write errors (a full disk, EIO) surface here.
      throw ioError(e, db, 'writing');
    }
    return { result, tmp, lock };
  } catch (e) {
    rmSync(tmp, { force: true });
    lock.release();
    throw e;
  }
}

/**
 * Writes profiles into the database file `db` atomically and under its lock: appended to the
 * existing database (`append: true`, created when absent) or into a new one replacing the file.
 * Memory does not grow with the database size.
 */
export async function writeSqliteFile<T>(db: string, options: SqliteFileOptions, fill: (add: AddProfile) => Promise<T>): Promise<T> {
  const { result, tmp, lock } = await prepare(db, options, fill);
  try {
    try {
      renameSync(tmp, db);
    } catch (e) {
      throw ioError(e, db, 'writing');
    }
    fsyncDir(db);
    return result;
  } finally {
    rmSync(tmp, { force: true });
    lock.release();
  }
}

/**
 * For the registry's write path (`profkit convert ... --write-option append=true`), which writes
 * the returned bytes itself (temp file + rename): prepares the appended database in a temporary
 * file and streams it. The lock is held until the registry has renamed its file over `db` (the
 * file at `db` changes identity), or at most `waitMs`, or until the process exits, so a
 * concurrent append cannot start from the old database.
 */
export async function appendSqliteStream(db: string, profile: Profile, options: LockOptions & { name?: string; profileId?: number }): Promise<{ data: AsyncIterable<Uint8Array>; profileId: number }> {
  const before = identity(db);
  const { result: profileId, tmp, lock } = await prepare(db, { ...options, append: true }, async (add) => add(profile, { name: options.name, profileId: options.profileId }));
  const holdMs = options.waitMs ?? 30_000;
  async function* data(): AsyncGenerator<Uint8Array> {
    let complete = false;
    try {
      for await (const chunk of createReadStream(tmp, { highWaterMark: 1 << 20 })) yield chunk as Buffer;
      complete = true;
    } catch (e) {
      throw ioError(e, tmp, 'reading');
    } finally {
      rmSync(tmp, { force: true });
      if (complete) releaseWhenReplaced(db, before, lock, holdMs);
      else lock.release();
    }
  }
  return { data: data(), profileId };
}

function identity(path: string): string | undefined {
  try {
    const s = statSync(path);
    return `${s.dev}:${s.ino}`;
  } catch {
    return undefined;
  }
}

function releaseWhenReplaced(db: string, before: string | undefined, lock: DatabaseLock, maxMs: number): void {
  const until = Date.now() + maxMs;
  const poll = () => {
    const now = identity(db);
    if ((now !== undefined && now !== before) || Date.now() >= until) lock.release();
    else setTimeout(poll, 10).unref();
  };
  poll();
}
