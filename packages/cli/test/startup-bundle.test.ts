/**
 * The start-up bundle (src/fast-start.cts, tools/scripts/bundle-cli.mjs; issue 16 item 4): `profkit`
 * runs the CLI, core and the first-party adapters from one code-cached script when it matches the
 * installed files, and never runs it when a file changed since it was built (a bare `tsc -b`);
 * modules from outside it get the bundle's @profkit/core (one core instance per process).
 * Requires `npm run build` (the CLI's nx build writes the bundle).
 */

import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cliBin, runWithModuleLog } from '@profkit/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
const cliDir = resolve(here, '..');
const packagesDir = resolve(cliDir, '..');
const repoRoot = resolve(packagesDir, '..');
const root = mkdtempSync(join(tmpdir(), 'profkit-startup-bundle-'));
const cacheDir = join(root, 'cache');
afterAll(() => rmSync(root, { recursive: true, force: true }));

const env = (extra: Record<string, string> = {}) => ({ ...process.env, PROFKIT_CACHE_DIR: cacheDir, ...extra });
const run = (bin: string, args: string[], extra: Record<string, string> = {}): SpawnSyncReturns<string> =>
  spawnSync(process.execPath, [bin, ...args], { cwd: root, env: env(extra), encoding: 'utf8', timeout: 60_000 });
const fileModules = (urls: string[]) => urls.filter((u) => u.startsWith('file:')).map((u) => fileURLToPath(u));
const under = (dir: string) => (file: string) => file.startsWith(dir + '/');

/** A copy of the CLI package (package.json, dist with its bundle) in `root/<name>/cli`, beside the repository's node_modules. */
function copyOfCli(name: string): string {
  const copy = join(root, name);
  mkdirSync(join(copy, 'cli'), { recursive: true });
  symlinkSync(join(repoRoot, 'node_modules'), join(copy, 'node_modules'), 'dir');
  cpSync(join(cliDir, 'package.json'), join(copy, 'cli/package.json'));
  cpSync(join(cliDir, 'dist'), join(copy, 'cli/dist'), { recursive: true });
  return copy;
}

let profile: string;
let unbundledTop: string;
beforeAll(() => {
  expect(existsSync(join(cliDir, 'dist/bundle/manifest.json')), 'the bundle is built (npm run build)').toBe(true);
  profile = join(root, 'fib.pb.gz');
  const made = run(cliBin, ['convert', join(repoRoot, 'examples/r/fib.Rprof.out'), profile, '--quiet'], { PROFKIT_NO_BUNDLE: '1' });
  expect(made.stderr).toBe('');
  const top = run(cliBin, ['top', profile], { PROFKIT_NO_BUNDLE: '1' });
  expect(top.status).toBe(0);
  unbundledTop = top.stdout;
  const probe = runWithModuleLog([cliBin, '--version'], { cwd: root, env: env() });
  expect(fileModules(probe.urls), 'the bundle matches dist (a `tsc -b` after `npm run build` makes it stale: run `npm run build`)').not.toContain(join(cliDir, 'dist/cli.js'));
});

describe('the start-up bundle', () => {
  it('runs `top` with no module of the CLI, core or pprof loaded from dist, with and without its code cache, printing what the unbundled CLI prints', () => {
    rmSync(cacheDir, { recursive: true, force: true });
    for (const attempt of ['no code cache yet', 'code cache']) {
      const { status, stderr, urls } = runWithModuleLog([cliBin, 'top', profile], { cwd: root, env: env() });
      expect({ attempt, stderr, status }).toEqual({ attempt, stderr: '', status: 0 });
      const files = fileModules(urls);
      expect(files.filter(under(join(packagesDir, 'core')))).toEqual([]);
      expect(files.filter(under(join(packagesDir, 'pprof')))).toEqual([]);
      expect(files.filter(under(join(cliDir, 'dist')))).not.toContain(join(cliDir, 'dist/cli.js'));
    }
    expect(readdirSync(cacheDir).filter((f) => f.endsWith('.v8cache'))).toHaveLength(1);
    expect(run(cliBin, ['top', profile]).stdout).toBe(unbundledTop);
  });

  it('starts a bundled `top` without Node\'s ES module loader (a CommonJS entry and launcher), and `dist/bin.js` still runs it', () => {
    // Setting up the ES module loader for an ES module entry cost ~4.5 ms of every start's CPU
    // (docs/performance.md "Twelfth session: CommonJS entry"). Its translators and resolver are
    // loaded only when an ES module is (`internal/modules/esm/loader` itself is loaded at boot).
    const preload = join(root, 'log-esm-loader.cjs');
    const log = join(root, 'esm-loader.log');
    writeFileSync(preload, "process.on('exit', () => require('node:fs').writeFileSync(process.env.ESM_LOG, process.moduleLoadList.filter((m) => /esm\\/(translators|resolve|module_job)$/.test(m)).join('\\n')));\n");
    const launcher = join(cliDir, JSON.parse(readFileSync(join(cliDir, 'package.json'), 'utf8')).bin.profkit);
    for (const bin of [cliBin, launcher]) {
      const r = spawnSync(process.execPath, ['--require', preload, bin, 'top', profile], { cwd: root, env: env({ ESM_LOG: log }), encoding: 'utf8' });
      expect({ bin, stderr: r.stderr, status: r.status, stdout: r.stdout }).toEqual({ bin, stderr: '', status: 0, stdout: unbundledTop });
      expect({ bin, esmLoader: readFileSync(log, 'utf8') }).toEqual({ bin, esmLoader: '' });
    }
    // The unbundled start imports dist/cli.js (an ES module) from the CommonJS entry.
    const unbundled = spawnSync(process.execPath, ['--require', preload, cliBin, 'top', profile], { cwd: root, env: env({ ESM_LOG: log, PROFKIT_NO_BUNDLE: '1' }), encoding: 'utf8' });
    expect({ stderr: unbundled.stderr, status: unbundled.status, stdout: unbundled.stdout }).toEqual({ stderr: '', status: 0, stdout: unbundledTop });
    expect(readFileSync(log, 'utf8')).toContain('translators');
    // The former entry and launcher forward to the new ones (links made before, scripts naming them).
    for (const old of [join(cliDir, 'dist/bin.js'), join(cliDir, 'bin/profkit.js')]) {
      const r = run(old, ['top', profile]);
      expect({ old, stderr: r.stderr, status: r.status, stdout: r.stdout }).toEqual({ old, stderr: '', status: 0, stdout: unbundledTop });
    }
    const usage = run(join(cliDir, 'dist/bin.js'), ['top', profile, '--no-such-option']);
    expect({ status: usage.status, stderr: usage.stderr }).toEqual({ status: 2, stderr: run(cliBin, ['top', profile, '--no-such-option']).stderr });
  });

  it('says the CLI is not built when its launcher finds no dist/bin.cjs, and nothing else', () => {
    const copy = join(root, 'copy-unbuilt');
    mkdirSync(join(copy, 'cli/dist'), { recursive: true });
    cpSync(join(cliDir, 'bin'), join(copy, 'cli/bin'), { recursive: true });
    const launcher = join(copy, 'cli/bin/profkit.cjs');
    const unbuilt = run(launcher, ['top', profile]);
    expect({ status: unbuilt.status, stdout: unbuilt.stdout }).toEqual({ status: 2, stdout: '' });
    expect(unbuilt.stderr).toBe('profkit: @profkit/cli is not built; run `npm run build` (or `npx tsc -b`) first [PROFKIT_E_USAGE]\n');
    // A build missing a module the entry requires is a broken build, not an unbuilt one: Node's error.
    writeFileSync(join(copy, 'cli/dist/bin.cjs'), "require('./fast-start.cjs');\n");
    const broken = run(launcher, ['top', profile]);
    expect(broken.status).toBe(1);
    expect(broken.stderr).toContain("Cannot find module './fast-start.cjs'");
  });

  it('keeps a code cache per built-in command (a cache holds the functions the run that wrote it compiled)', () => {
    rmSync(cacheDir, { recursive: true, force: true });
    expect(run(cliBin, ['top', profile]).status).toBe(0);
    expect(run(cliBin, ['convert', profile, join(root, 'again.pb.gz'), '--quiet']).status).toBe(0);
    expect(run(cliBin, ['--version']).status).toBe(0);
    const caches = readdirSync(cacheDir).filter((f) => f.endsWith('.v8cache'));
    expect(caches.map((f) => f.split('-')[2]).sort()).toEqual(['convert', 'other', 'top']);
    expect(run(cliBin, ['top', profile]).stdout).toBe(unbundledTop);
  });

  it('ignores a code cache V8 rejects and writes a new one', () => {
    run(cliBin, ['top', profile]);
    const cacheFile = join(cacheDir, readdirSync(cacheDir).find((f) => f.endsWith('.v8cache') && f.includes('-top-'))!);
    writeFileSync(cacheFile, 'not a code cache');
    const r = run(cliBin, ['top', profile]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(unbundledTop);
    expect(readFileSync(cacheFile, 'utf8')).not.toBe('not a code cache');
  });

  it.skipIf(process.platform === 'win32')('trusts no code cache or check marker that others could have written (a shared cache folder): it writes its own, private', () => {
    rmSync(cacheDir, { recursive: true, force: true });
    run(cliBin, ['top', profile]);
    const cacheFile = join(cacheDir, readdirSync(cacheDir).find((f) => f.endsWith('.v8cache') && f.includes('-top-'))!);
    const markers = readdirSync(join(cacheDir, 'checked')).map((f) => join(cacheDir, 'checked', f));
    expect(markers.length).toBeGreaterThan(0);
    for (const file of [cacheFile, ...markers]) expect(statSync(file).mode & 0o077).toBe(0);
    // As if another user had planted them: group- and world-writable.
    for (const file of [cacheFile, ...markers]) chmodSync(file, 0o666);
    const r = run(cliBin, ['top', profile]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(unbundledTop);
    // Not used: the files were checked and compiled again, and replaced by private ones.
    for (const file of [cacheFile, ...markers]) expect(statSync(file).mode & 0o077).toBe(0);
  });

  it('gives a module from outside the bundle the bundle\'s @profkit/core (one core instance)', () => {
    // A third-party adapter (here: one that hands on the pprof adapter) importing @profkit/core
    // from its own node_modules, as installed adapters do.
    const project = join(root, 'project');
    mkdirSync(join(project, 'node_modules/@profkit'), { recursive: true });
    for (const pkg of ['core', 'pprof']) symlinkSync(join(packagesDir, pkg), join(project, 'node_modules/@profkit', pkg), 'dir');
    writeFileSync(
      join(project, 'third-party.mjs'),
      "import { ProfkitError } from '@profkit/core';\nimport * as coreNode from '@profkit/core/node';\nif (ProfkitError !== coreNode.ProfkitError) throw new Error('two cores');\nexport { default } from '@profkit/pprof';\n",
    );
    const { status, stderr, urls } = runWithModuleLog([cliBin, 'top', profile, '--no-discover', '--adapter', './third-party.mjs'], { cwd: project, env: env() });
    expect(stderr).toBe('');
    expect(status).toBe(0);
    const files = fileModules(urls);
    expect(files).toContain(join(project, 'third-party.mjs'));
    expect(files).toContain(join(packagesDir, 'pprof/dist/index.js'));
    expect(files.filter(under(join(packagesDir, 'core')))).toEqual([]);
    expect(files).toContain(join(cliDir, 'dist/bundle/core-index.mjs'));
    const again = spawnSync(process.execPath, [cliBin, 'top', profile, '--no-discover', '--adapter', './third-party.mjs'], { cwd: project, env: env(), encoding: 'utf8' });
    expect(again.stdout).toBe(unbundledTop);
  });

  it("makes the objects of core's exports (what the bridges re-export) only when first read: a start builds no namespace of core's ~630 exports", async () => {
    const probe = join(root, 'core-entries-probe.cjs');
    writeFileSync(
      probe,
      `process.on('exit', () => {
  const entries = globalThis[Symbol.for('profkit.cli.bundledCore')];
  const paths = ['dist/index.js', 'dist/node/index.js'];
  const kinds = paths.map((p) => typeof Object.getOwnPropertyDescriptor(entries, p).get);
  const [index, node] = paths.map((p) => entries[p]);
  const seen = { kinds, index: Object.keys(index), node: Object.keys(node), once: node === entries['dist/node/index.js'], frozen: Object.isFrozen(node), sameClass: index.ProfkitError === node.ProfkitError };
  process.stderr.write(JSON.stringify(seen) + '\\n');
});\n`,
    );
    const r = spawnSync(process.execPath, ['--require', probe, cliBin, 'top', profile], { cwd: root, env: env(), encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(unbundledTop);
    const seen = JSON.parse(r.stderr.trim().split('\n').at(-1)!) as { kinds: string[]; index: string[]; node: string[]; once: boolean; frozen: boolean; sameClass: boolean };
    // Getters until something reads them (before: the namespaces themselves, built at every start).
    expect(seen.kinds).toEqual(['function', 'function']);
    // Then the entries' exports, made once, as their modules export them.
    const names = async (entry: string) => Object.keys(await import(pathToFileURL(join(packagesDir, 'core', entry)).href)).sort();
    expect([...seen.index].sort()).toEqual(await names('dist/index.js'));
    expect([...seen.node].sort()).toEqual(await names('dist/node/index.js'));
    expect(seen).toMatchObject({ once: true, frozen: true, sameClass: true });
  });

  it('starts no resolve hook (a loader thread) for a discovered adapter whose sniff module imports nothing', () => {
    // The repository's example adapter (tools/adapter-example-speedscope) is discovered from the
    // CLI's own node_modules and declares itself statically: only its sniff module, which has no
    // import once tsc erased its `import type`, is loaded (for a JSON input: its declared magic),
    // and the core redirect is never needed. The first-party speedscope adapter reads the file.
    const speedscope = join(repoRoot, 'tools/adapter-example-speedscope/test/fixtures/sampled.speedscope.json');
    const { status, stderr, urls } = runWithModuleLog([cliBin, 'top', speedscope], { cwd: root, env: env() });
    expect({ stderr, status }).toEqual({ stderr: '', status: 0 });
    const files = fileModules(urls);
    expect(files).toContain(join(repoRoot, 'tools/adapter-example-speedscope/dist/sniff.js'));
    expect(files).not.toContain(join(cliDir, 'dist/bundle-hooks.js'));
    expect(files).not.toContain(join(repoRoot, 'tools/adapter-example-speedscope/dist/index.js'));
  });

  it('imports no module of a discovered adapter whose declared magic rules the input out (`convert` of an Rprof file, `top` of a pprof file)', () => {
    // Before the example adapter declared its magic (a JSON object), every run imported its
    // sniff module from outside the bundle, through the ES module loader.
    const rprof = join(repoRoot, 'examples/r/fib.Rprof.out');
    for (const args of [['convert', rprof, join(root, 'magic.pb.gz'), '--quiet'], ['top', profile]]) {
      const { status, stderr, urls } = runWithModuleLog([cliBin, ...args], { cwd: root, env: env() });
      expect({ args, stderr, status }).toEqual({ args, stderr: '', status: 0 });
      // Only the entry is a file (it requires fast-start.cjs, CommonJS, which no module hook sees); the CLI, core and the adapters come from the bundle.
      expect(fileModules(urls).filter((f) => !f.startsWith(join(cliDir, 'dist') + '/'))).toEqual([]);
      expect(fileModules(urls).map((f) => f.slice(cliDir.length + 1)).sort()).toEqual(['dist/bin.cjs']);
    }
  });

  it('imports a config-named package with static declarations only for its own files, and `--config FILE top` takes top\'s code cache', () => {
    // A third-party adapter named by a config (no profkit-adapter keyword: only the config finds
    // it), whose main module leaves a marker file when it is imported.
    const project = join(root, 'configured');
    const pkgDir = join(project, 'node_modules/profkit-side-effect');
    mkdirSync(join(pkgDir, 'dist'), { recursive: true });
    const marker = join(project, 'imported');
    const formats = [{ id: 'side', extensions: ['.side'], binary: false }];
    writeFileSync(
      join(pkgDir, 'package.json'),
      JSON.stringify({ name: 'profkit-side-effect', version: '1.0.0', type: 'module', exports: './dist/index.js', profkit: { adapters: [{ name: 'side', formats, sniff: './dist/sniff.js#sniff' }] } }),
    );
    writeFileSync(join(pkgDir, 'dist/sniff.js'), "export const sniff = (head) => (head[0] === 0x23 && head[1] === 0x73 ? 1 : 0);\n");
    writeFileSync(
      join(pkgDir, 'dist/index.js'),
      `import { writeFileSync } from 'node:fs';\nimport { sniff } from './sniff.js';\nwriteFileSync(${JSON.stringify(marker)}, 'yes');\nexport default { apiVersion: 1, name: 'side', formats: ${JSON.stringify(formats)}, sniff, read: async () => ({ profile: {}, warnings: [] }) };\n`,
    );
    const config = join(project, 'profkit.config.json');
    writeFileSync(config, JSON.stringify({ adapters: ['profkit-side-effect', '@profkit/pprof'] }));
    rmSync(cacheDir, { recursive: true, force: true });
    const top = spawnSync(process.execPath, [cliBin, 'top', profile], { cwd: project, env: env(), encoding: 'utf8' });
    expect({ stderr: top.stderr, status: top.status }).toEqual({ stderr: '', status: 0 });
    expect(top.stdout).toBe(unbundledTop);
    expect(existsSync(marker)).toBe(false);
    const elsewhere = run(cliBin, ['--config', config, 'top', profile]);
    expect(elsewhere.stdout).toBe(unbundledTop);
    expect(existsSync(marker)).toBe(false);
    expect(readdirSync(cacheDir).filter((f) => f.endsWith('.v8cache')).map((f) => f.split('-')[2])).toEqual(['top']);
    // `formats` imports every adapter and names the config as the source.
    const listing = spawnSync(process.execPath, [cliBin, 'formats'], { cwd: project, env: env(), encoding: 'utf8' });
    expect(listing.stdout.split('\n').find((l) => l.startsWith('side '))).toContain(`config profkit-side-effect (${config})`);
    expect(existsSync(marker)).toBe(true);
  });

  it('never runs a bundle older than the files it was built from (a `tsc -b` after the build)', () => {
    const copy = copyOfCli('copy');
    const bin = join(copy, 'cli/dist/bin.cjs');
    const before = runWithModuleLog([bin, 'top', profile], { cwd: root, env: env() });
    expect(before.status).toBe(0);
    expect(fileModules(before.urls)).not.toContain(join(copy, 'cli/dist/cli.js'));
    // What a rebuild of one module does: the bundle still holds the old code.
    appendFileSync(join(copy, 'cli/dist/commands/top.js'), "\nprocess.stderr.write('top.js as rebuilt\\n');\n");
    for (let i = 0; i < 2; i++) {
      const after = spawnSync(process.execPath, [bin, 'top', profile], { cwd: root, env: env(), encoding: 'utf8' });
      expect(after.stderr).toBe('top.js as rebuilt\n');
      expect(after.stdout).toBe(unbundledTop);
    }
  });

  it('never runs a bundle older than a file rewritten in place with its size and mtime kept (an npm extraction sets every mtime to 1985)', () => {
    const copy = copyOfCli('copy-same-mtime');
    const bin = join(copy, 'cli/dist/bin.cjs');
    const topJs = join(copy, 'cli/dist/commands/top.js');
    const mtime = 499162500; // 1985-10-26T08:15:00Z, whole seconds: set back exactly below
    utimesSync(topJs, mtime, mtime);
    const before = runWithModuleLog([bin, 'top', profile], { cwd: root, env: env() });
    expect(before.status).toBe(0);
    expect(fileModules(before.urls)).not.toContain(join(copy, 'cli/dist/cli.js'));
    // The same number of bytes, written into the same file (same inode), its mtime set back.
    const text = readFileSync(topJs, 'latin1');
    const at = text.lastIndexOf('.js.map'); // in the sourceMappingURL comment: harmless to change
    expect(at).toBeGreaterThan(0);
    writeFileSync(topJs, text.slice(0, at) + '.js.MAP' + text.slice(at + 7), 'latin1');
    utimesSync(topJs, mtime, mtime);
    const after = runWithModuleLog([bin, 'top', profile], { cwd: root, env: env() });
    expect(after.status).toBe(0);
    expect(fileModules(after.urls)).toContain(join(copy, 'cli/dist/cli.js'));
  });

  it('looks for a package past a file named node_modules (ENOTDIR), as Node does, instead of crashing', () => {
    const copy = copyOfCli('copy-enotdir');
    writeFileSync(join(copy, 'cli/node_modules'), 'not a folder\n');
    const { status, stderr, urls } = runWithModuleLog([join(copy, 'cli/dist/bin.cjs'), 'top', profile], { cwd: root, env: env() });
    expect({ status, stderr }).toEqual({ status: 0, stderr: '' });
    expect(fileModules(urls)).not.toContain(join(copy, 'cli/dist/cli.js'));
  });

  it('takes a sniff module from the bundle when only other files of its adapter changed, and runs those files as they are now', () => {
    // A copy of the CLI beside a node_modules whose @profkit/rprof is a copy with a rebuilt
    // read.js (its sniff module does not import it; the adapter's index does).
    const copy = join(root, 'copy-rprof');
    mkdirSync(join(copy, 'cli'), { recursive: true });
    cpSync(join(cliDir, 'package.json'), join(copy, 'cli/package.json'));
    cpSync(join(cliDir, 'dist'), join(copy, 'cli/dist'), { recursive: true });
    const modules = join(copy, 'node_modules');
    mkdirSync(join(modules, '@profkit'), { recursive: true });
    for (const entry of readdirSync(join(repoRoot, 'node_modules'))) {
      if (entry !== '@profkit') symlinkSync(join(repoRoot, 'node_modules', entry), join(modules, entry));
    }
    for (const entry of readdirSync(join(repoRoot, 'node_modules/@profkit'))) {
      if (entry !== 'rprof') symlinkSync(join(repoRoot, 'node_modules/@profkit', entry), join(modules, '@profkit', entry));
    }
    const rprof = join(modules, '@profkit/rprof');
    mkdirSync(rprof);
    cpSync(join(packagesDir, 'rprof/package.json'), join(rprof, 'package.json'));
    cpSync(join(packagesDir, 'rprof/dist'), join(rprof, 'dist'), { recursive: true });
    appendFileSync(join(rprof, 'dist/read.js'), "\nprocess.stderr.write('read.js as rebuilt\\n');\n");
    const bin = join(copy, 'cli/dist/bin.cjs');
    // Detection runs every adapter's sniff: rprof's comes from the bundle, nothing else of rprof loads.
    const top = runWithModuleLog([bin, 'top', profile], { cwd: root, env: env() });
    expect({ status: top.status, stderr: top.stderr }).toEqual({ status: 0, stderr: '' });
    const files = fileModules(top.urls);
    expect(files).not.toContain(join(copy, 'cli/dist/cli.js'));
    expect(files.filter(under(rprof))).toEqual([]);
    // Reading Rprof imports the adapter, whose files differ from the bundled ones: from disk.
    const converted = run(bin, ['convert', join(repoRoot, 'examples/r/fib.Rprof.out'), join(root, 'fib-copy.pb.gz'), '--quiet']);
    expect({ status: converted.status, stderr: converted.stderr }).toEqual({ status: 0, stderr: 'read.js as rebuilt\n' });
  });

  it('runs another copy of @profkit/core imported by file (a config naming its entry) from disk when its files differ from the bundled ones', () => {
    // Core is checked before the bundle runs, at the CLI's install only: a copy elsewhere is not that check.
    const copy = join(root, 'copy-core');
    mkdirSync(join(copy, 'core'), { recursive: true });
    symlinkSync(join(repoRoot, 'node_modules'), join(copy, 'node_modules'), 'dir');
    cpSync(join(packagesDir, 'core/package.json'), join(copy, 'core/package.json'));
    cpSync(join(packagesDir, 'core/dist'), join(copy, 'core/dist'), { recursive: true });
    appendFileSync(join(copy, 'core/dist/index.js'), "\nprocess.stderr.write('core copy ran\\n');\n");
    const r = run(cliBin, ['--config', join(copy, 'core/dist/index.js'), 'top', profile]);
    expect(r.stderr).toContain('core copy ran\n');
  });

  it('requires a Node built-in only when the command uses it, and is read as a one-byte string', () => {
    // `--version` uses neither zlib nor a terminal: the bundle's core and CLI modules import
    // node:zlib and node:tty, required on first use. node:crypto hashes the bundled files only
    // when their check is not remembered yet (the first run here).
    const preload = join(root, 'log-builtins.cjs');
    const log = join(root, 'builtins.log');
    writeFileSync(preload, "process.on('exit', () => require('node:fs').writeFileSync(process.env.BUILTINS_LOG, process.moduleLoadList.join('\\n')));\n");
    for (let i = 0; i < 2; i++) {
      const r = spawnSync(process.execPath, ['--require', preload, cliBin, '--version'], { cwd: root, env: env({ BUILTINS_LOG: log }), encoding: 'utf8' });
      expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    }
    const loaded = readFileSync(log, 'utf8').split('\n');
    expect(loaded.filter((m) => /^NativeModule (zlib|tty|crypto)$/.test(m))).toEqual([]);
    expect(loaded.some((m) => m === 'NativeModule vm')).toBe(true); // the bundle ran (fast-start.cts compiles it with node:vm)
    const manifest = JSON.parse(readFileSync(join(cliDir, 'dist/bundle/manifest.json'), 'utf8')) as { bundle: string; encoding?: string };
    expect(manifest.encoding).toBe('latin1');
    expect(readFileSync(join(cliDir, 'dist/bundle', manifest.bundle)).every((byte) => byte < 0x80)).toBe(true);
  });

  it('starts unbundled when the bundle fails while it loads', () => {
    const copy = copyOfCli('copy-throwing');
    const bundleFile = join(copy, 'cli/dist/bundle/cli.cjs');
    const code = readFileSync(bundleFile, 'utf8');
    const body = code.indexOf('{') + 1;
    const broken = code.slice(0, body) + "throw new Error('bundle broken');" + code.slice(body);
    writeFileSync(bundleFile, broken);
    // The manifest names the broken bundle (else its hash, not its loading, keeps it from running).
    const manifestFile = join(copy, 'cli/dist/bundle/manifest.json');
    writeFileSync(manifestFile, JSON.stringify({ ...JSON.parse(readFileSync(manifestFile, 'utf8')), bundleSha1: createHash('sha1').update(broken).digest('hex') }));
    const { status, stderr, urls } = runWithModuleLog([join(copy, 'cli/dist/bin.cjs'), 'top', profile], { cwd: root, env: env() });
    expect(stderr).toBe('');
    expect(status).toBe(0);
    expect(fileModules(urls)).toContain(join(copy, 'cli/dist/cli.js'));
  });

  it('never runs a bundle edited since the build, even one of the same length whose code cache V8 would take', () => {
    const copy = copyOfCli('copy-edited');
    const bin = join(copy, 'cli/dist/bin.cjs');
    expect(run(bin, ['top', profile]).status).toBe(0); // writes the code cache and the check markers
    const bundleFile = join(copy, 'cli/dist/bundle/cli.cjs');
    const code = readFileSync(bundleFile, 'latin1');
    const at = code.indexOf('profkit');
    expect(at).toBeGreaterThan(0);
    writeFileSync(bundleFile, code.slice(0, at) + 'profkiT' + code.slice(at + 7), 'latin1');
    const { status, stderr, urls } = runWithModuleLog([bin, 'top', profile], { cwd: root, env: env() });
    expect({ status, stderr }).toEqual({ status: 0, stderr: '' });
    expect(fileModules(urls)).toContain(join(copy, 'cli/dist/cli.js'));
  });

  it('ends errors with the exit codes and messages of the unbundled CLI', () => {
    const garbage = join(root, 'garbage.pb.gz');
    writeFileSync(garbage, 'neither gzip nor a profile\n');
    const cases = [
      ['top', join(root, 'missing.pb.gz')], // I/O: 3
      ['top', garbage], // unknown format: 4
      ['top', profile, '--no-such-option'], // usage: 2
      ['convert', profile, join(root, 'out.unknownext')], // no writer: 4
    ];
    for (const args of cases) {
      const bundled = run(cliBin, args);
      const unbundled = run(cliBin, args, { PROFKIT_NO_BUNDLE: '1' });
      expect(unbundled.status).not.toBe(0);
      expect({ args, status: bundled.status, stderr: bundled.stderr, stdout: bundled.stdout }).toEqual({ args, status: unbundled.status, stderr: unbundled.stderr, stdout: unbundled.stdout });
    }
  });

  it('deletes the code caches, check markers and discovery entries other bundles left more than a week ago when it writes its own', () => {
    run(cliBin, ['top', profile]);
    const ours = readdirSync(cacheDir).find((f) => f.endsWith('.v8cache') && f.includes('-top-'))!;
    const weekAgo = (Date.now() - 8 * 24 * 3600 * 1000) / 1000;
    const old = join(cacheDir, 'cli-0000000000000000-nodev0.0.0-x64.v8cache');
    const recent = join(cacheDir, 'cli-1111111111111111-nodev0.0.0-x64.v8cache');
    const oldMarker = join(cacheDir, 'checked', '0000000000000000-0123456789abcdef0123456789abcdef01234567');
    const notOurs = join(cacheDir, 'notes.txt');
    // Discovery's entry for a node_modules folder not searched for a week (a test project's).
    const oldDiscovery = join(cacheDir, 'discover', '0badc0de.json');
    mkdirSync(dirname(oldDiscovery), { recursive: true });
    for (const f of [old, recent, oldMarker, notOurs, oldDiscovery]) writeFileSync(f, 'x');
    for (const f of [old, oldMarker, notOurs, oldDiscovery]) utimesSync(f, weekAgo, weekAgo);
    run(cliBin, ['top', profile]); // has its code cache: prunes nothing
    expect([old, oldMarker, oldDiscovery].map((f) => existsSync(f))).toEqual([true, true, true]);
    rmSync(join(cacheDir, ours));
    expect(run(cliBin, ['top', profile]).stdout).toBe(unbundledTop);
    expect([old, recent, oldMarker, notOurs, join(cacheDir, ours), oldDiscovery].map((f) => existsSync(f))).toEqual([false, true, false, true, true, false]);
  });

  it('remembers the adapter packages discovery found in each node_modules folder, privately, in the cache folder', () => {
    const ownCache = join(root, 'discovery-cache');
    const first = run(cliBin, ['top', profile], { PROFKIT_CACHE_DIR: ownCache });
    expect(first.status).toBe(0);
    const files = readdirSync(join(ownCache, 'discover'));
    const entries = files.map((f) => JSON.parse(readFileSync(join(ownCache, 'discover', f), 'utf8')) as { folder: string; packages: { name: string }[] });
    // The CLI's own install is found from any working folder: the repository's node_modules.
    const repoModules = entries.find((e) => e.folder === join(repoRoot, 'node_modules'));
    expect(repoModules?.packages.map((p) => p.name)).toContain('@profkit/pprof');
    for (const f of files) expect(statSync(join(ownCache, 'discover', f)).mode & 0o077).toBe(0);
    const second = run(cliBin, ['top', profile], { PROFKIT_CACHE_DIR: ownCache });
    expect(second.stdout).toBe(first.stdout);
    expect(second.stdout).toBe(unbundledTop);
  });

  it('is not used with PROFKIT_NO_BUNDLE=1', () => {
    const { status, urls } = runWithModuleLog([cliBin, 'top', profile], { cwd: root, env: env({ PROFKIT_NO_BUNDLE: '1' }) });
    expect(status).toBe(0);
    expect(fileModules(urls)).toContain(join(cliDir, 'dist/cli.js'));
  });
});
