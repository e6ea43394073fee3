import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ProfileBuilder, type Profile } from '@profkit/core';
import { haveCli, runCli } from '@profkit/test-utils';
import { applySourceMaps, nodeSourceMapLoader, parseSourceMappingUrl } from '../src/node.js';
import { expectValid, stacksByMeaning } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'profkit-v8-maps-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A map written by hand: generated line 1 column 0 → orig.ts line 10 column 0 ("AASA"); generated
 * line 2 column 4 → line 20 column 2 ("IAUE": +4 columns, +10 lines, +2 columns).
 */
const MAP = { version: 3, sources: ['../src/orig.ts'], names: [], mappings: 'AASA;IAUE' };

function generatedProfile(): Profile {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
  // As the .cpuprofile reader makes them: start line = line, 1-based column.
  const f = b.internFunction({ name: 'work', filename: 'file:///gen/app.js', startLine: 2 });
  const g = b.internFunction({ name: 'lib', filename: 'file:///gen/lib.js', startLine: 1 });
  const top = b.internFunction({ name: 'top', filename: 'file:///gen/app.js', startLine: 1 });
  b.addSample([b.internLocation({ functionId: f, line: 2, column: 5 }), b.internLocation({ functionId: top, line: 1, column: 1 })], [3]);
  b.addSample([b.internLocation({ functionId: g, line: 1, column: 1 })], [1]);
  return b.build();
}

describe('applySourceMaps (platform-neutral, loader given)', () => {
  it('moves locations and functions of mapped scripts to the original file, line and 1-based column', async () => {
    const p = generatedProfile();
    const r = await applySourceMaps(p, async (url) => (url === 'file:///gen/app.js' ? { map: MAP, mapUrl: 'file:///gen/app.js.map', origin: 'test' } : undefined));
    expectValid(r.profile);
    expect(stacksByMeaning(r.profile)).toEqual(
      new Map([
        ['top@file:///src/orig.ts:10:1;work@file:///src/orig.ts:20:3', 3n],
        ['lib@file:///gen/lib.js:1:1', 1n],
      ]),
    );
    const f = r.profile.functions;
    expect(f.start_line[f.name.indexOf('work')]).toBe(20);
    expect(r.scripts.map((s) => [s.script, s.status, s.mapped])).toEqual([
      ['file:///gen/app.js', 'mapped', 2],
      ['file:///gen/lib.js', 'no-map', 0],
    ]);
    // The input is not changed.
    expect(p.functions.filename).toEqual(['file:///gen/app.js', 'file:///gen/lib.js', 'file:///gen/app.js']);
  });

  it('a loader that fails: a warning naming the script, its locations unchanged', async () => {
    const r = await applySourceMaps(generatedProfile(), async () => {
      throw new Error('boom');
    });
    expect(r.warnings.map((w) => w.message)).toEqual(['file:///gen/app.js: its source map could not be used: boom', 'file:///gen/lib.js: its source map could not be used: boom']);
    expect(stacksByMeaning(r.profile)).toEqual(stacksByMeaning(generatedProfile()));
  });

  it('parseSourceMappingUrl takes the last comment', () => {
    expect(parseSourceMappingUrl('x\n//# sourceMappingURL=a.map\ny\n//# sourceMappingURL=b.js.map\n')).toBe('b.js.map');
    expect(parseSourceMappingUrl('const s = "no map";')).toBeUndefined();
  });
});

describe('nodeSourceMapLoader (files)', () => {
  const gen = join(dir, 'gen');
  mkdirSync(gen, { recursive: true });
  const b64 = Buffer.from(JSON.stringify(MAP)).toString('base64');
  writeFileSync(join(gen, 'inline.js'), `a();\n//# sourceMappingURL=data:application/json;charset=utf-8;base64,${b64}\n`);
  writeFileSync(join(gen, 'beside.js'), 'a();\n');
  writeFileSync(join(gen, 'beside.js.map'), JSON.stringify(MAP));
  writeFileSync(join(gen, 'named.js'), 'a();\n//# sourceMappingURL=maps/named.map\n');
  writeFileSync(join(gen, 'broken.js'), 'a();\n//# sourceMappingURL=missing.map\n');

  it('inline data: URL, a .map beside the script, a relative sourceMappingURL; none for node: URLs', async () => {
    const inline = await nodeSourceMapLoader(pathToFileURL(join(gen, 'inline.js')).href);
    expect([inline?.origin, inline?.mapUrl]).toEqual(['inline', pathToFileURL(join(gen, 'inline.js')).href]);
    const beside = await nodeSourceMapLoader(join(gen, 'beside.js'));
    expect(beside?.origin).toBe(join(gen, 'beside.js.map'));
    expect(await nodeSourceMapLoader('node:internal/main/run_main_module')).toBeUndefined();
    await expect(nodeSourceMapLoader(join(gen, 'named.js'))).rejects.toMatchObject({ code: 'PROFKIT_E_IO', detail: { file: join(gen, 'maps', 'named.map') } });
  });

  it('through applySourceMaps: a missing named map is a warning, not a failure', async () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const f = b.internFunction({ name: 'a', filename: join(gen, 'broken.js'), startLine: 1 });
    b.addSample([b.internLocation({ functionId: f, line: 1, column: 1 })], [1]);
    const r = await applySourceMaps(b.build(), nodeSourceMapLoader);
    expect(r.warnings.map((w) => w.code)).toEqual(['PROFKIT_W_V8_SOURCE_MAP']);
    expect(r.warnings[0]!.message).toMatch(/missing\.map, which cannot be read/);
  });
});

describe.skipIf(!haveCli('v8 source-maps'))('tsc --sourceMap → node --cpu-prof → profkit convert --source-maps → top --by line', () => {
  const proj = join(dir, 'ts');
  mkdirSync(join(proj, 'src'), { recursive: true });
  const source = [
    'interface Point { x: number; y: number }',
    '',
    '// A comment so that the TypeScript and JavaScript lines differ.',
    'function distance(a: Point, b: Point): number {',
    '  return Math.sqrt((a.x - b.x) ** 2 + (a.y - b.y) ** 2);',
    '}',
    '',
    'type Totals = { total: number };',
    '',
    'export function busyLoop(n: number): number {',
    '  const t: Totals = { total: 0 };',
    '  for (let i = 0; i < n; i++) t.total += distance({ x: i, y: i * 2 }, { x: Math.sin(i), y: Math.cos(i) });',
    '  return t.total;',
    '}',
    '',
    'const until = Date.now() + 400;',
    'let sink = 0;',
    'while (Date.now() < until) sink += busyLoop(50000);',
    'if (sink < 0) console.log(sink);',
    '',
  ].join('\n');
  writeFileSync(join(proj, 'src', 'app.ts'), source);
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '--sourceMap', '--outDir', join(proj, 'out'), '--target', 'es2022', '--module', 'commonjs', join(proj, 'src', 'app.ts')]);
  execFileSync(process.execPath, ['--cpu-prof', '--cpu-prof-dir', join(proj, 'prof'), join(proj, 'out', 'app.js')]);
  const profile = join(proj, 'prof', readdirSync(join(proj, 'prof')).find((f) => f.endsWith('.cpuprofile'))!);
  const lineOf = (text: string, what: string) => text.split('\n').findIndex((l) => l.includes(what)) + 1;

  it('top --by line shows app.ts and the TypeScript line of busyLoop (distance is inlined by V8)', () => {
    const js = readFileSync(join(proj, 'out', 'app.js'), 'utf8');
    expect(lineOf(js, 'function busyLoop')).not.toBe(lineOf(source, 'function busyLoop'));
    const mapped = join(proj, 'mapped.pb.gz');
    const c = runCli(['convert', profile, mapped, '--source-maps']);
    expect(c.code, c.stderr).toBe(0);
    expect(c.stderr).toMatch(/source-maps: file:\/\/.*app\.js: \d+ location\(s\) mapped through .*app\.js\.map/);
    const top = runCli(['top', mapped, '--by', 'line', '--node-fraction', '0']);
    expect(top.code, top.stderr).toBe(0);
    expect(top.stdout).toContain(`busyLoop ${pathToFileURL(join(proj, 'src', 'app.ts')).href.replace('file://', 'file:')}:${lineOf(source, 'function busyLoop')}`);
    expect(top.stdout).not.toMatch(/busyLoop .*app\.js/);
    // list reads the .ts file the mapped profile names and shows its lines.
    const list = runCli(['list', mapped, '^busyLoop$']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/ROUTINE =+ busyLoop in file:.*\/src\/app\.ts\n/);
    expect(list.stdout).toMatch(new RegExp(`\\s${lineOf(source, 'function busyLoop')}:export function busyLoop\\(n: number\\): number \\{\\n`));
    expect(list.stdout).not.toMatch(/Error:|app\.js/);
    // Without the transform, the JavaScript lines.
    const plain = runCli(['top', profile, '--by', 'line', '--node-fraction', '0']);
    expect(plain.stdout).toMatch(new RegExp(`busyLoop .*app\\.js:${lineOf(js, 'function busyLoop')}`));
  });
});
