/**
 * The release check (issue 16): what a user gets from the registry, before it is on the registry.
 * Packs every published package with `npm pack`, checks what each tarball holds, installs the
 * `cli`, `core` and `pprof` tarballs into a scratch project in the OS temp folder (outside the
 * repository, no config file), then runs `npx profkit top`, an ESM `import`, a `require` and the
 * README examples of core and pprof there. npm fetches the packages' own dependencies (pako…) from
 * the registry (its cache makes later runs fast). Skipped, saying why, when npm is not on PATH.
 */

import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProfileBuilder } from '@profkit/core';
import { serializePprof } from '@profkit/pprof';
import { repoRoot, which } from '@profkit/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const haveNpm = which('npm') !== undefined && which('npx') !== undefined;
if (!haveNpm) console.warn('release check: skipped: npm/npx are not on PATH (they come with Node.js; apt-get install -y npm)');

/** The published packages: every `packages/*` folder whose package.json is not private. */
const published = readdirSync(join(repoRoot, 'packages'))
  .map((folder) => ({ folder, pkg: JSON.parse(readFileSync(join(repoRoot, 'packages', folder, 'package.json'), 'utf8')) as { name: string; version: string; private?: boolean } }))
  .filter((p) => !p.pkg.private);

/**
 * The environment of the npm/npx/node children: without the `npm_*` variables of the `npm test`
 * running this file (they name the workspace, its prefix and its config, which would send the
 * scratch install back into the repository).
 */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k) && k !== 'INIT_CWD' && k !== 'NODE_OPTIONS') env[k] = v;
  return { ...env, NO_COLOR: '1', npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };
}

function run(cmd: string, args: string[], cwd: string, timeoutMs = 120_000): SpawnSyncReturns<string> {
  return spawnSync(cmd, args, { cwd, env: cleanEnv(), encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 << 20 });
}

function ok(r: SpawnSyncReturns<string>, what: string): string {
  if (r.status !== 0) throw new Error(`${what} exited ${r.status ?? r.signal}${r.error ? ` (${r.error.message})` : ''}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r.stdout;
}

/** The ```js blocks of a package's README. */
function readmeExamples(folder: string): string[] {
  const text = readFileSync(join(repoRoot, 'packages', folder, 'README.md'), 'utf8');
  return [...text.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** A small CPU profile with named functions, gzipped pprof (made with the workspace's build). */
function smallPprof(): Uint8Array {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }, { type: 'cpu', unit: 'nanoseconds' }] });
  const fn = (name: string) => b.internLocation({ functionId: b.internFunction({ name, filename: 'app.go' }) });
  const [main, parse, hash] = [fn('main.main'), fn('main.parseInput'), fn('main.hashBlock')];
  b.addSample([hash, parse, main], [7, 70_000_000]);
  b.addSample([parse, main], [2, 20_000_000]);
  b.addSample([main], [1, 10_000_000]);
  return serializePprof(b.build());
}

describe.skipIf(!haveNpm)('release: the packed packages, installed outside the repository', () => {
  let root: string;
  let packs: string;
  let project: string;
  const tarballs = new Map<string, { filename: string; files: string[] }>();

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'profkit-release-'));
    packs = join(root, 'packs');
    project = join(root, 'project');
    mkdirSync(packs);
    mkdirSync(project);
    // One npm process packs them all (the builds come from nx's ^build before this test).
    const args = ['pack', '--json', '--ignore-scripts', '--pack-destination', packs, ...published.flatMap((p) => ['-w', `packages/${p.folder}`])];
    const listed = JSON.parse(ok(run('npm', args, repoRoot), 'npm pack')) as { name: string; filename: string; files: { path: string }[] }[];
    for (const t of listed) tarballs.set(t.name, { filename: join(packs, t.filename), files: t.files.map((f) => f.path) });

    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'scratch', version: '1.0.0', private: true }, null, 2));
    // The CLI depends on @profkit/web (`profkit web`).
    const wanted = ['@profkit/cli', '@profkit/core', '@profkit/pprof', '@profkit/web'].map((n) => tarballs.get(n)?.filename ?? n);
    ok(run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', ...wanted], project, 180_000), 'npm install of the tarballs');
    writeFileSync(join(project, 'x.pb.gz'), smallPprof());
  }, 240_000);

  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('packs every published package, each with LICENSE, README.md and nothing a user does not need', () => {
    expect([...tarballs.keys()].sort()).toEqual(published.map((p) => p.pkg.name).sort());
    for (const [name, t] of tarballs) {
      expect(t.files, name).toContain('LICENSE');
      expect(t.files, name).toContain('README.md');
      expect(t.files, name).toContain('dist/index.js');
      expect(t.files, name).toContain('dist/index.d.ts');
      const unwanted = t.files.filter((f) => /(^|\/)\.tsbuildinfo$|(^|\/)test\/|\.test\.|(^|\/)fixtures\/|loadtest|vitest\.config|tsconfig\.json$/.test(f));
      expect(unwanted, name).toEqual([]);
    }
  });

  it('npm publish --dry-run corrects nothing in any package.json (a corrected bin would be dropped)', () => {
    const r = run('npm', ['publish', '--dry-run', '--ignore-scripts', ...published.flatMap((p) => ['-w', `packages/${p.folder}`])], repoRoot);
    expect(r.status, r.stderr).toBe(0);
    // Only the not-logged-in notice of a dry run is expected; "auto-corrected … errors" is not.
    const warnings = r.stderr.split('\n').filter((l) => /\bwarn\b/i.test(l) && !/requires you to be logged in/.test(l));
    expect(warnings).toEqual([]);
  });

  it('npx profkit top reads a pprof file with no config file: the installed @profkit/pprof is found', () => {
    const r = run('npx', ['--no-install', 'profkit', 'top', 'x.pb.gz'], project);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/70ms\s+70\.00%\s+70\.00%\s+70ms\s+70\.00%\s+main\.hashBlock/);
    expect(r.stdout).toContain('main.parseInput');
    const formats = JSON.parse(ok(run('npx', ['--no-install', 'profkit', 'formats', '--json'], project), 'profkit formats')) as { adapters: { name: string; source: { kind: string; from: string } }[] };
    expect(formats.adapters.map((a) => [a.name, a.source.kind, a.source.from])).toEqual([['pprof', 'discovered', join(project, 'node_modules', '@profkit', 'pprof')]]);
  });

  it('imports @profkit/pprof as an ES module', () => {
    writeFileSync(
      join(project, 'esm.mjs'),
      `import { readFileSync } from 'node:fs';
import pprof, { parsePprof } from '@profkit/pprof';
const { profile } = parsePprof(readFileSync('x.pb.gz'), { file: 'x.pb.gz' });
console.log(pprof.name, profile.sample_types.type.join(','));
`,
    );
    expect(ok(run('node', ['esm.mjs'], project), 'node esm.mjs').trim()).toBe('pprof samples,cpu');
  });

  it('requires @profkit/pprof from CommonJS (Node >= 20.19 loads the ES module)', () => {
    writeFileSync(
      join(project, 'cjs.cjs'),
      `const { readFileSync } = require('node:fs');
const { parsePprof, pprofAdapter } = require('@profkit/pprof');
const { profile } = parsePprof(readFileSync('x.pb.gz'), { file: 'x.pb.gz' });
console.log(pprofAdapter.name, profile.sample_types.type.join(','));
`,
    );
    const r = run('node', ['cjs.cjs'], project);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('pprof samples,cpu');
  });

  it('runs the README examples of @profkit/core and @profkit/pprof as written', () => {
    writeFileSync(join(project, 'cpu.pb.gz'), smallPprof());
    const outputs: string[] = [];
    for (const folder of ['core', 'pprof']) {
      const examples = readmeExamples(folder);
      expect(examples.length, folder).toBeGreaterThan(0);
      examples.forEach((code, i) => {
        const file = join(project, `readme-${folder}-${i}.mjs`);
        writeFileSync(file, code);
        outputs.push(ok(run('node', [file], project), `the README example of @profkit/${folder}`));
      });
    }
    expect(outputs.join('\n')).toContain('main.hashBlock');
  });
});
