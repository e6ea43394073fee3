/**
 * The heavy half of the adapter (SQLite engine, DuckDB), loaded on first read/write. A SQLite file
 * is read on disk (read-only), and appended to on disk under its lock (`sqlite-file.ts`).
 */

import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { ErrorCodes, ProfkitError, type AdapterCodec, type ReadInput, type ReadResult, type WriteResult } from '@profkit/core/node';
import { appendSqliteStream } from './sqlite-file.js';
import { readSqlite, writeSqlite } from './sqlite.js';
import { postgresScript } from './text.js';

function optNumber(v: unknown, name: string): number | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 0xffffffff) throw new ProfkitError(ErrorCodes.USAGE, `option ${name} must be an integer in 1..4294967295, got ${String(v)}`, { option: name });
  return n;
}

/**
 * Whether the input is the regular, uncompressed file named `fileName` (so SQLite can open it
 * read-only on disk instead of loading it): the registry may also hand bytes with only a name
 * hint, so the first chunk must equal the file's beginning and the file's size must be the one
 * the SQLite header states.
 */
async function onDisk(input: ReadInput): Promise<boolean> {
  if (input.gzipped || input.fileName === '-' || input.fileName.startsWith('<')) return false;
  let size: number;
  try {
    const st = statSync(input.fileName);
    if (!st.isFile()) return false;
    size = st.size;
  } catch {
    return false;
  }
  let first: Uint8Array | undefined;
  for await (const c of input.chunks()) {
    first = c;
    break;
  }
  if (!first || first.length < 100) return false;
  const h = Buffer.from(first.buffer, first.byteOffset, first.byteLength);
  const page = h.readUInt16BE(16) === 1 ? 65536 : h.readUInt16BE(16);
  // In-header database size is valid when the version-valid-for number equals the change counter.
  if (h.readUInt32BE(92) !== h.readUInt32BE(24) || page * h.readUInt32BE(28) !== size) return false;
  const fd = openSync(input.fileName, 'r');
  try {
    const buf = Buffer.alloc(first.length);
    const got = readSync(fd, buf, 0, first.length, 0);
    return got === first.length && buf.equals(h);
  } finally {
    closeSync(fd);
  }
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
    const profileId = optNumber(options.options?.profileId, 'profileId');
    const limits = options.limits;
    const r = (await onDisk(input)) ? await readSqlite(input.fileName, { profileId, limits }) : await readSqlite(await input.bytes(), { file: input.fileName, profileId, limits });
    return { profile: r.profile, warnings: r.warnings, format: 'sqlite' };
  },
  async write(profile, options): Promise<WriteResult> {
    const format = options.format ?? (options.fileName?.endsWith('.sql') ? 'sql' : 'sqlite');
    const o = options.options ?? {};
    const name = typeof o.name === 'string' ? o.name : undefined;
    const profileId = optNumber(o.profileId, 'profileId');
    if (format === 'sqlite') {
      const append = o.append === true || o.append === 'true';
      if (append) {
        if (!options.fileName || options.fileName === '-') {
          throw new ProfkitError(ErrorCodes.USAGE, 'append needs the target database file name', { option: 'append' });
        }
        // On disk, under the database's lock; the registry renames the result over the file.
        const r = await appendSqliteStream(options.fileName, profile, { name, profileId });
        return { data: r.data, warnings: [] };
      }
      const r = writeSqlite(profile, { profileId, name, file: options.fileName });
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
