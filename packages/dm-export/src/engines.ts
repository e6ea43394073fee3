/**
 * The two native engines, optional peer dependencies loaded on first use: better-sqlite3 for the
 * SQLite file (read, write, append, list) and DuckDB (`@duckdb/node-api`) for the Parquet
 * directories and for importing any directory. CSV export, the PostgreSQL script, the diagrams
 * and sniffing never load either, so `npm install @profkit/dm-export` installs no native build.
 *
 * When an engine is missing, the error says the exact `npm install` (the range is the peer range
 * in this package's package.json, so the hint cannot drift from what is tested).
 */

import { createRequire } from 'node:module';
import { ErrorCodes, ProfkitError } from '@profkit/core/node';
import type BetterSqlite3 from 'better-sqlite3';

/** An engine: its npm package and what needs it (for the message). */
export interface Engine {
  /** The npm package name. */
  pkg: 'better-sqlite3' | '@duckdb/node-api';
  /** What it is, for messages: "the SQLite engine". */
  title: string;
  /** What needs it, for messages. */
  neededFor: string;
}

export const SQLITE_ENGINE: Engine = {
  pkg: 'better-sqlite3',
  title: 'the SQLite engine',
  neededFor: 'SQLite files (read, write, append, list)',
};

export const DUCKDB_ENGINE: Engine = {
  pkg: '@duckdb/node-api',
  title: 'the DuckDB engine',
  neededFor: 'Parquet export and importing Parquet or CSV directories',
};

const require = createRequire(import.meta.url);

/** `npm install <pkg>@<peer range>`, the range read from this package's package.json. */
export function installCommand(engine: Engine): string {
  let range: string | undefined;
  try {
    // dist/engines.js and src/engines.ts are both one folder below package.json.
    const manifest = require('../package.json') as { peerDependencies?: Record<string, string> };
    range = manifest.peerDependencies?.[engine.pkg];
  } catch {
    range = undefined;
  }
  return `npm install ${engine.pkg}${range ? `@${range}` : ''}`;
}

/** Whether the package itself cannot be found (rather than found but failing to load). */
function isInstalled(engine: Engine, resolve: (specifier: string) => string): boolean {
  try {
    resolve(engine.pkg);
    return true;
  } catch {
    return false;
  }
}

/**
 * The typed error for an engine that cannot be loaded: not installed (the usual case since the
 * engines are optional peers), or installed but failing to load (a native build that failed or
 * was built for another Node version).
 */
export function engineUnavailable(engine: Engine, cause: unknown, installed: boolean): ProfkitError {
  const install = installCommand(engine);
  const reason = cause instanceof Error ? cause.message.split('\n')[0] : String(cause);
  const message = installed
    ? `${engine.title} (npm package ${engine.pkg}) is installed but cannot be loaded (${reason}); ${engine.neededFor} need it: reinstall it with \`${install}\` (or \`npm rebuild ${engine.pkg}\`)`
    : `${engine.title} (npm package ${engine.pkg}) is not installed; ${engine.neededFor} need it: \`${install}\``;
  return new ProfkitError(ErrorCodes.UNSUPPORTED, message, { rule: `${engine.pkg} is installed (an optional peer dependency of @profkit/dm-export)`, install }, { cause });
}

type DatabaseCtor = typeof BetterSqlite3;
let sqliteCtor: DatabaseCtor | undefined;

/** better-sqlite3's `Database` constructor, loaded on first use (synchronously: it is CommonJS).
 * @internal
 */
export function loadSqlite(): DatabaseCtor {
  if (!sqliteCtor) {
    try {
      sqliteCtor = require(SQLITE_ENGINE.pkg) as DatabaseCtor;
    } catch (e) {
      throw engineUnavailable(SQLITE_ENGINE, e, isInstalled(SQLITE_ENGINE, (s) => require.resolve(s)));
    }
  }
  return sqliteCtor;
}

type DuckDBModule = typeof import('@duckdb/node-api');
let duckdbModule: Promise<DuckDBModule> | undefined;

/** `@duckdb/node-api`, imported on first use.
 * @internal
 */
export function loadDuckDB(): Promise<DuckDBModule> {
  duckdbModule ??= import('@duckdb/node-api').catch((e: unknown) => {
    duckdbModule = undefined; // let a later call retry (e.g. after installing it in a long-lived process)
    throw engineUnavailable(DUCKDB_ENGINE, e, isInstalled(DUCKDB_ENGINE, (s) => import.meta.resolve(s)));
  });
  return duckdbModule;
}
