/** The heavy half of the adapter (SQLite engine, DuckDB), loaded on first read/write. */

import { existsSync } from 'node:fs';
import { ErrorCodes, ProfkitError, readInput, type AdapterCodec, type ReadResult, type WriteResult } from '@profkit/core';
import { readSqlite, writeSqlite } from './sqlite.js';
import { postgresScript } from './text.js';

function optNumber(v: unknown, name: string): number | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 0xffffffff) throw new ProfkitError(ErrorCodes.USAGE, `option ${name} must be an integer in 1..4294967295, got ${String(v)}`, { option: name });
  return n;
}

async function* toAsync(chunks: Iterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  for (const c of chunks) yield c;
}

export const codec: AdapterCodec = {
  async read(input, options): Promise<ReadResult> {
    const format = options.format ?? 'sqlite';
    if (format !== 'sqlite') {
      throw new ProfkitError(ErrorCodes.UNSUPPORTED, `dm-export reads format ${format} from a directory only: use \`profkit dm-export import DIR OUT\``, { file: input.fileName });
    }
    const r = await readSqlite(await input.bytes(), { file: input.fileName, profileId: optNumber(options.options?.profileId, 'profileId') });
    return { profile: r.profile, warnings: r.warnings, format: 'sqlite' };
  },
  async write(profile, options): Promise<WriteResult> {
    const format = options.format ?? (options.fileName?.endsWith('.sql') ? 'sql' : 'sqlite');
    const o = options.options ?? {};
    const name = typeof o.name === 'string' ? o.name : undefined;
    const profileId = optNumber(o.profileId, 'profileId');
    if (format === 'sqlite') {
      let existing: Uint8Array | undefined;
      const append = o.append === true || o.append === 'true';
      if (append) {
        if (!options.fileName || options.fileName === '-') {
          throw new ProfkitError(ErrorCodes.USAGE, 'append needs the target database file name', { option: 'append' });
        }
        if (existsSync(options.fileName)) existing = await readInput(options.fileName);
      }
      const r = writeSqlite(profile, { append, existing, profileId, name, file: options.fileName });
      return { data: r.bytes, warnings: r.warnings };
    }
    if (format === 'sql') {
      const r = postgresScript(profile, { profileId, name });
      return { data: toAsync(r.chunks), warnings: r.warnings };
    }
    throw new ProfkitError(ErrorCodes.UNSUPPORTED, `dm-export writes ${format} as a directory of files: use \`profkit dm-export export PROFILE DIR --to ${format}\``, {
      file: options.fileName,
      rule: 'one file per table',
    });
  },
};
