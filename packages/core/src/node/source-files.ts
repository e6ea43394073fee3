/**
 * Reading the source files a profile names, as `go tool pprof -list` finds them
 * (`openSourceFile`), for `profkit list` and the source view of `profkit web`: the file name trimmed (`-trim_path`, or the base name of a source-path
 * directory), an absolute name opened as it is, a relative one looked up under each source-path
 * directory and each of its parents. Errors are pprof's texts, shown in the listing.
 */

import { readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Profile } from '../model.js';
import { goTrimPath, type SourceLines } from '../ops/index.js';
import { MAX_SOURCE_FILE_LINES } from '../ops/source.js';
import { cleanPath } from '../ops/internal.js';

// One bound for the listing and for the files read for it (see ops/source.ts).
export { MAX_SOURCE_FILE_LINES };

/** Go's `syscall.Errno` texts of the errors opening a file can give. */
const ERRNO_TEXT: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  ENOTDIR: 'not a directory',
  ELOOP: 'too many levels of symbolic links',
  ENAMETOOLONG: 'file name too long',
  EPERM: 'operation not permitted',
};

/** A source file larger than this is reported, not read (a listing shows a few lines of it). */
export const MAX_SOURCE_FILE_BYTES = 256 << 20;

/** Source text kept in memory between files: beyond it, the files read so far are forgotten. */
const MAX_CACHED_SOURCE_CHARS = 64 << 20;

/** Go's `bufio.Scanner` default limit: a longer line ends the scan (pprof then lists the lines before it). */
const MAX_SCANNED_LINE_BYTES = 64 * 1024;

/**
 * The lines as Go's `bufio.ScanLines` gives them: split at \n, a trailing \r removed, no empty
 * last line; undefined past MAX_SOURCE_FILE_LINES.
 */
function scanLines(bytes: Uint8Array): string[] | undefined {
  const lines: string[] = [];
  const decoder = new TextDecoder();
  let start = 0;
  while (start < bytes.length) {
    let end = bytes.indexOf(0x0a, start);
    const last = end < 0;
    if (last) end = bytes.length;
    if (end - start >= MAX_SCANNED_LINE_BYTES) break;
    const cut = end > start && bytes[end - 1] === 0x0d ? end - 1 : end;
    if (lines.length === MAX_SOURCE_FILE_LINES) return undefined;
    lines.push(decoder.decode(bytes.subarray(start, cut)));
    start = end + 1;
  }
  return lines;
}

type Opened = { lines: string[] } | { directory: true } | { errno: string };

/** The text Go gives the error of a failed file operation (`no such file or directory`). */
export function goErrnoText(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code ?? 'EIO';
  return ERRNO_TEXT[code] ?? code;
}

function open(path: string): Opened {
  try {
    const st = statSync(path);
    // Go opens a directory, then reads nothing from it: no lines and no error.
    if (st.isDirectory()) return { directory: true };
    // A device or FIFO named by a profile (/dev/zero, /dev/stdin) would be read without end or block.
    if (!st.isFile()) return { errno: 'not a regular file' };
    if (st.size > MAX_SOURCE_FILE_BYTES) return { errno: `larger than ${MAX_SOURCE_FILE_BYTES} bytes` };
    const lines = scanLines(readFileSync(path));
    return lines ? { lines } : { errno: `more than ${MAX_SOURCE_FILE_LINES} lines` };
  } catch (e) {
    return { errno: goErrnoText(e) };
  }
}

/**
 * A `file:` URL as its path: V8 names scripts by URL, and source maps resolve the original
 * sources against them (`profkit convert --source-maps` of a `.cpuprofile` names `file:///…/app.ts`,
 * which the report cleans to `file:/…/app.ts` as Go's filepath.Clean does).
 */
function localPath(file: string): string {
  if (!file.startsWith('file:/')) return file;
  try {
    return fileURLToPath(file);
  } catch {
    return file;
  }
}

/**
 * A `readSource` for `listReport`: files looked up like pprof (see above) under `searchPath`
 * (':'-separated; pprof's default is the working directory), each file read once while the
 * files kept stay under 64 Mi characters (pprof keeps every file; a profile naming thousands of
 * large files would otherwise hold them all).
 */
export function sourceFileReader(searchPath: string, trim: string): (file: string) => SourceLines {
  const cache = new Map<string, SourceLines>();
  let cachedChars = 0;
  const read = (file: string): SourceLines => {
    const path = goTrimPath(localPath(file), trim, searchPath);
    const linesOf = (o: Opened & ({ lines: string[] } | { directory: true })) => ({ lines: 'lines' in o ? o.lines : [] });
    if (isAbsolute(path)) {
      const o = open(path);
      return 'errno' in o ? { error: `open ${path}: ${o.errno}` } : linesOf(o);
    }
    for (const root of searchPath === '' ? [] : searchPath.split(':')) {
      // The directory and each of its parents, up to the root.
      for (let dir = root; ; ) {
        const o = open(join(dir, path));
        if (!('errno' in o)) return linesOf(o);
        const parent = dirname(dir);
        if (parent === dir) break;
        dir = parent;
      }
    }
    return { error: `could not find file ${path} on path ${searchPath}` };
  };
  return (file) => {
    let r = cache.get(file);
    if (!r) {
      r = read(file);
      const chars = 'lines' in r ? r.lines.reduce((n, l) => n + l.length + 1, 0) : 0;
      if (cachedChars + chars > MAX_CACHED_SOURCE_CHARS) {
        cache.clear();
        cachedChars = 0;
      }
      cache.set(file, r);
      cachedChars += chars;
    }
    return r;
  };
}

/**
 * The file names `listReport` asks `readSource` for, for any function of `p` listed with these
 * `trimPath`/`sourcePath` (its file names trimmed and cleaned as the report's graph does): what
 * a server may read for `p` and nothing else.
 */
export function listedSourceNames(p: Profile, trimPath: string, sourcePath: string): Set<string> {
  const names = new Set<string>();
  for (const f of new Set(p.functions.filename)) {
    const t = goTrimPath(f, trimPath, sourcePath);
    if (t !== '') names.add(cleanPath(t));
  }
  return names;
}
