/**
 * The published types need @types/node only in Node entries (issue 16, item 5). A tiny consumer
 * project outside the repository imports every main entry and is compiled with `tsc`
 * (`skipLibCheck: false`, so the packages' .d.ts files are checked too):
 *
 * - for a browser: `"lib": ["es2022", "dom"]`, `"types": []`;
 * - for no platform at all (a worker, Deno, a library's own build): `"lib": ["es2022"]`,
 *   `"types": []`: the main entries may name no global that only the DOM lib or @types/node
 *   declares (`Blob`, `ReadableStream`, `AbortSignal`, `URLSearchParams`; core declares
 *   structural types for them, see packages/core/src/web-types.ts);
 *
 * and a Node consumer (`"lib": ["es2022"]`, `"types": ["node"]`) imports the `/node` entries.
 * The browser and platform-free consumers must not load any file of @types/node (a
 * `/// <reference types="node" />` in a .d.ts would).
 */

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '@profkit/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** The packages whose main entry is platform-neutral, and their Node entries. */
const MAIN_ENTRIES = ['@profkit/core', '@profkit/pprof', '@profkit/rprof', '@profkit/gperftools-heap', '@profkit/fuchsia-sampler'];
const NODE_ENTRIES = ['@profkit/core/node', '@profkit/gperftools-heap/node', '@profkit/fuchsia-sampler/node'];

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'profkit-types-'));
  mkdirSync(join(dir, 'node_modules', '@profkit'), { recursive: true });
  mkdirSync(join(dir, 'node_modules', '@types'), { recursive: true });
  for (const name of MAIN_ENTRIES) symlinkSync(join(repoRoot, 'packages', name.slice('@profkit/'.length)), join(dir, 'node_modules', name), 'dir');
  // Only the Node consumer names it ("types": ["node"]); the others must not reach it.
  symlinkSync(join(repoRoot, 'node_modules', '@types', 'node'), join(dir, 'node_modules', '@types', 'node'), 'dir');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'types-consumer', private: true, type: 'module' }));
}, 60_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/**
 * The platform's own objects where core's API takes or gives them: a `Blob`/`File` and a
 * `ReadableStream` are read sources, an `AbortSignal` is an option, and the `signal` core hands
 * to adapters and transforms is the platform's `AbortSignal` (m0 is @profkit/core).
 */
const PLATFORM_OBJECTS = `
declare const stream: ReadableStream<Uint8Array>;
export const sources: m0.ReadSource[] = [new Blob([]), new File([], 'x.pb.gz'), stream, new Uint8Array(1)];
export const readOptions: m0.ReadOptions = { signal: new AbortController().signal };
export const given = (ctx: m0.TransformContext): AbortSignal => ctx.signal;
`;

/** Writes `<name>.ts` importing `entries` (then `uses`) and its tsconfig; runs tsc; returns its output and the files it loaded. */
function compile(name: string, entries: readonly string[], compilerOptions: { lib: string[]; types: string[] }, uses = ''): { status: number | null; errors: string[]; files: string[] } {
  const source = entries.map((e, i) => `import * as m${i} from '${e}';`).join('\n') + `\nexport const modules = [${entries.map((_, i) => `m${i}`).join(', ')}];\n${uses}`;
  writeFileSync(join(dir, `${name}.ts`), source);
  const tsconfig = {
    compilerOptions: { target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', strict: true, noEmit: true, skipLibCheck: false, ...compilerOptions },
    files: [`${name}.ts`],
  };
  writeFileSync(join(dir, `tsconfig.${name}.json`), JSON.stringify(tsconfig, null, 2));
  const r = spawnSync(process.execPath, [join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', `tsconfig.${name}.json`, '--listFiles'], { cwd: dir, encoding: 'utf8', maxBuffer: 64 << 20 });
  const lines = r.stdout.split('\n').filter((l) => l.trim() !== '');
  return { status: r.status, errors: lines.filter((l) => /error TS\d+/.test(l)), files: lines.filter((l) => !/error TS\d+/.test(l) && !l.startsWith(' ')) };
}

describe('published types', () => {
  it('every main entry compiles for a browser (lib es2022 + dom, no @types)', () => {
    const r = compile('browser', MAIN_ENTRIES, { lib: ['es2022', 'dom'], types: [] }, PLATFORM_OBJECTS);
    expect(r.errors).toEqual([]);
    expect(r.status).toBe(0);
    expect(r.files.filter((f) => f.includes('@types/node'))).toEqual([]);
  }, 120_000);

  it('every main entry compiles with neither the DOM lib nor @types/node (lib es2022 only)', () => {
    const r = compile('neutral', MAIN_ENTRIES, { lib: ['es2022'], types: [] });
    expect(r.errors).toEqual([]);
    expect(r.status).toBe(0);
    expect(r.files.filter((f) => f.includes('@types/node'))).toEqual([]);
  }, 120_000);

  it('the /node entries compile for Node (lib es2022 + @types/node, no DOM)', () => {
    const r = compile('node', ['@profkit/core', ...NODE_ENTRIES, '@profkit/pprof', '@profkit/rprof'], { lib: ['es2022'], types: ['node'] }, PLATFORM_OBJECTS);
    expect(r.errors).toEqual([]);
    expect(r.status).toBe(0);
  }, 120_000);
});
