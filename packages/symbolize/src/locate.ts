/**
 * Where to look for a mapping's binary, in google/pprof's order (`locateBinaries`), plus the
 * GDB/debuginfod `.build-id` layout. For every directory of the search path:
 *
 * 1. with a build id: `<dir>/<buildid>/<basename>`, every file in `<dir>/<buildid>/`,
 *    `<dir>/<path>/<buildid>` (perf's layout), `<dir>/<id[0:2]>/<id[2:]>.debug` (LLVM's),
 *    `<dir>/.build-id/<id[0:2]>/<id[2:]>.debug` (GDB's);
 * 2. with a file name: `<dir>/<basename>`, `<dir>/<path>`, `<dir>/<path>.debug`,
 *    `<dir>/<dirname>/.debug/<basename>.debug`, `<dir>/usr/lib/debug/<dirname>/<basename>.debug`.
 *
 * Then the mapping's own file. The search path is `--search-path`, else `$PPROF_BINARY_PATH`,
 * else `$HOME/pprof/binaries` (directories separated by the platform delimiter, `:`).
 */

import { readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, delimiter, dirname, join } from 'node:path';

/** The default search path (pprof's): `$PPROF_BINARY_PATH` or `$HOME/pprof/binaries`. */
export function defaultSearchPath(env: NodeJS.ProcessEnv = process.env): string[] {
  const v = env.PPROF_BINARY_PATH;
  if (v !== undefined && v !== '') return splitSearchPath(v);
  return [join(env.HOME ?? homedir(), 'pprof', 'binaries')];
}

export function splitSearchPath(v: string): string[] {
  return v.split(delimiter).filter((d) => d !== '');
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/** Candidate paths for a mapping, most specific first, deduplicated, existing files only. */
export function candidateBinaries(mapping: { filename: string; buildId: string }, searchPath: string[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const add = (p: string) => {
    if (seen.has(p)) return;
    seen.add(p);
    if (isFile(p)) out.push(p);
  };
  const file = mapping.filename;
  const id = mapping.buildId.toLowerCase();
  const base = file ? basename(file) : '';
  const dir = file ? dirname(file) : '';
  for (const d of searchPath) {
    if (id) {
      if (base) add(join(d, id, base));
      try {
        for (const e of readdirSync(join(d, id)).sort()) add(join(d, id, e));
      } catch {
        // no such directory
      }
      if (file) add(join(d, file, id));
      if (id.length > 2) {
        add(join(d, id.slice(0, 2), id.slice(2) + '.debug'));
        add(join(d, '.build-id', id.slice(0, 2), id.slice(2) + '.debug'));
      }
    }
    if (file) {
      add(join(d, base));
      add(join(d, file));
      add(join(d, file + '.debug'));
      add(join(d, dir, '.debug', base + '.debug'));
      add(join(d, 'usr', 'lib', 'debug', dir, base + '.debug'));
    }
  }
  if (file) add(file);
  return out;
}

/**
 * google/pprof's `Mapping.Unsymbolizable` plus remote file names: pseudo files (`[vdso]`,
 * `[heap]`), `linux-vdso*`, `/dev/dri/*`, `/memfd:*`, `//anon`, empty names and URLs.
 *
 * Deliberate difference from pprof: an empty name is symbolizable when the mapping has a build
 * id (`buildId`), because the binary can then be found by build id alone (`.build-id/xx/rest.debug`,
 * `xx/rest.debug`, `<buildid>/…`). Fuchsia's sampler and other embedded profilers record
 * mappings that way.
 */
export function unsymbolizableReason(filename: string, buildId = ''): string | undefined {
  const name = basename(filename);
  if (filename === '') return buildId === '' ? 'the mapping has neither a file name nor a build id' : undefined;
  if (name.startsWith('[')) return `${filename} is a pseudo mapping`;
  if (name.startsWith('linux-vdso')) return `${filename} is the kernel's vDSO`;
  if (filename.startsWith('/dev/dri/')) return `${filename} is a device mapping`;
  if (filename.startsWith('/memfd:')) return `${filename} is an anonymous memory file`;
  if (filename === '//anon') return 'the mapping is anonymous memory';
  if (/^https?:\/\//.test(filename)) return `${filename} is a URL, not a local file`;
  return undefined;
}
