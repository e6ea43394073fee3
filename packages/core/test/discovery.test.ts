import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rejectionOf } from '@profkit/test-utils';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import {
  DiscoveryErrorCodes,
  ErrorCodes,
  buildRegistry,
  discoverAdapterPackages,
  findInstalledAdapterPackages,
  nodeModulesFolders,
  findConfigFile,
  loadConfigFile,
  resolveModule,
  type DiscoveryCache,
  type ProfkitError,
} from '../src/node/index.js';
import { headMatchesMagic } from '../src/discovery.js';

const coreDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const root = mkdtempSync(join(tmpdir(), 'profkit-discovery-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
function project(): string {
  const dir = join(root, `p${n++}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

function write(path: string, content: string | object): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return path;
}

/** Source of an adapter module that needs no import (plain contract object). */
function plainAdapter(name: string, extra = ''): string {
  return `export default {
  apiVersion: 1,
  name: ${JSON.stringify(name)},
  formats: [{ id: ${JSON.stringify(name)}, extensions: ['.${name}'], binary: false }],
  sniff: (head) => new TextDecoder().decode(head).startsWith('#${name}') ? 1 : 0,
  read: async () => { throw new Error('not used'); },
  ${extra}
};\n`;
}

/** An installed package in `dir/node_modules/<name>` with ESM-only exports (import condition only). */
function installPackage(dir: string, name: string, source: string, pkg: Record<string, unknown> = {}): string {
  const pkgDir = join(dir, 'node_modules', name);
  write(join(pkgDir, 'package.json'), {
    name,
    version: '1.0.0',
    type: 'module',
    exports: { '.': { types: './dist/index.d.ts', import: './dist/index.js' }, './package.json': './package.json' },
    keywords: ['profkit-adapter'],
    ...pkg,
  });
  write(join(pkgDir, 'dist', 'index.js'), source);
  return pkgDir;
}

const rejection = (p: Promise<unknown>) => rejectionOf<ProfkitError>(p);

describe('config file', () => {
  it('is found from the working directory upwards, json first', () => {
    const dir = project();
    const cfg = write(join(dir, 'profkit.config.json'), { adapters: [] });
    write(join(dir, 'profkit.config.mjs'), 'export default { adapters: [] };');
    const deep = join(dir, 'a', 'b', 'c');
    mkdirSync(deep, { recursive: true });
    expect(findConfigFile(deep)).toBe(cfg);
  });

  it('registers adapters named by path and by package, resolved from the config folder', async () => {
    const dir = project();
    write(join(dir, 'local-adapter.mjs'), plainAdapter('local'));
    installPackage(dir, 'profkit-adapter-pkg', plainAdapter('pkg'));
    const cfg = write(join(dir, 'profkit.config.json'), { adapters: ['./local-adapter.mjs', 'profkit-adapter-pkg'] });
    const sub = join(dir, 'sub');
    mkdirSync(sub);
    const { registry, config } = await buildRegistry({ cwd: sub });
    expect(config?.path).toBe(cfg);
    expect(registry.list().map((e) => [e.adapter.name, e.source.kind, e.source.specifier, e.source.from])).toEqual([
      ['local', 'config', './local-adapter.mjs', cfg],
      ['pkg', 'config', 'profkit-adapter-pkg', cfg],
    ]);
    expect(registry.list()[1]!.source.resolved).toBe(join(dir, 'node_modules', 'profkit-adapter-pkg', 'dist', 'index.js'));
  });

  it('falls back to the fallback folders (the CLI install) for packages the project lacks', async () => {
    const dir = project();
    const cliLike = project();
    installPackage(cliLike, 'profkit-adapter-beside-cli', plainAdapter('besidecli'));
    write(join(dir, 'profkit.config.json'), { adapters: ['profkit-adapter-beside-cli'] });
    const { registry } = await buildRegistry({ cwd: dir, fallbackDirs: [cliLike] });
    expect(registry.has('besidecli')).toBe(true);
    const e = await rejection(buildRegistry({ cwd: dir }));
    expect(e.code).toBe(DiscoveryErrorCodes.ADAPTER_NOT_FOUND);
  });

  it('says which specifier could not be found, from where, and how to install it', async () => {
    const dir = project();
    const cfg = write(join(dir, 'profkit.config.json'), { adapters: ['@profkit/not-there'] });
    const e = await rejection(buildRegistry({ cwd: dir }));
    expect(e.code).toBe(DiscoveryErrorCodes.ADAPTER_NOT_FOUND);
    expect(e.message).toContain('"@profkit/not-there"');
    expect(e.message).toContain(cfg);
    expect(e.message).toContain(`looked from ${dir}`);
    expect(e.message).toContain('npm install @profkit/not-there');
    expect(e.detail.file).toBe(cfg);
  });

  it('reports a module that throws on import, naming specifier and config', async () => {
    const dir = project();
    write(join(dir, 'broken.mjs'), 'throw new Error("kaput");');
    const cfg = write(join(dir, 'profkit.config.json'), { adapters: ['./broken.mjs'] });
    const e = await rejection(buildRegistry({ cwd: dir }));
    expect(e.code).toBe(DiscoveryErrorCodes.ADAPTER_LOAD);
    expect(e.message).toContain('./broken.mjs');
    expect(e.message).toContain(cfg);
    expect(e.message).toContain('kaput');
  });

  it('refuses a config-named adapter with an unsupported apiVersion, naming where it came from', async () => {
    const dir = project();
    write(join(dir, 'future.mjs'), plainAdapter('future').replace('apiVersion: 1', 'apiVersion: 2'));
    const cfg = write(join(dir, 'profkit.config.json'), { adapters: ['./future.mjs'] });
    const e = await rejection(buildRegistry({ cwd: dir }));
    expect(e.code).toBe(ErrorCodes.ADAPTER_API);
    expect(e.message).toContain('adapter future targets adapter API 2');
    expect(e.message).toContain(`./future.mjs named in ${cfg}`);
  });

  it('accepts arrays, factories and nested CommonJS defaults', async () => {
    const dir = project();
    write(
      join(dir, 'many.mjs'),
      plainAdapter('one').replace('export default', 'const one =') + plainAdapter('two').replace('export default', 'const two =') + 'export default [one, two];\n',
    );
    write(join(dir, 'factory.mjs'), plainAdapter('made').replace('export default', 'const made =') + 'export default async () => made;\n');
    write(join(dir, 'cjs.cjs'), plainAdapter('cjs').replace('export default', 'exports.default ='));
    write(join(dir, 'named.mjs'), plainAdapter('named').replace('export default', 'export const adapter ='));
    write(join(dir, 'profkit.config.json'), { adapters: ['./many.mjs', './factory.mjs', './cjs.cjs', './named.mjs'] });
    const { registry } = await buildRegistry({ cwd: dir });
    expect(registry.list().map((e) => e.adapter.name)).toEqual(['one', 'two', 'made', 'cjs', 'named']);
  });

  it('loads JS configs, which may hold adapter objects', async () => {
    const dir = project();
    write(join(dir, 'profkit.config.mjs'), plainAdapter('inline').replace('export default', 'const inline =') + 'export default { adapters: [inline] };\n');
    const { registry } = await buildRegistry({ cwd: dir });
    expect(registry.list().map((e) => [e.adapter.name, e.source.kind])).toEqual([['inline', 'config']]);
  });

  it('rejects malformed configs with the file and line', async () => {
    const dir = project();
    const bad = write(join(dir, 'profkit.config.json'), '{\n  "adapters": [\n    "a",\n  ]\n}\n');
    const e = await rejection(loadConfigFile(bad));
    expect(e.code).toBe(ErrorCodes.CONFIG);
    expect(e.detail.file).toBe(bad);
    expect(e.detail.line).toBe(4);
    const typo = write(join(dir, 'typo.json'), { adapter: ['x'] });
    const e2 = await rejection(loadConfigFile(typo));
    expect(e2.code).toBe(ErrorCodes.CONFIG);
    expect(e2.message).toContain('adapter');
    const notString = write(join(dir, 'num.json'), { adapters: [3] });
    expect((await rejection(loadConfigFile(notString))).message).toContain('adapters.0');
  });

  it('can be named explicitly, or skipped', async () => {
    const dir = project();
    write(join(dir, 'profkit.config.json'), { adapters: ['./missing.mjs'] });
    write(join(dir, 'a.mjs'), plainAdapter('viaexplicit'));
    const other = write(join(dir, 'other.json'), { adapters: ['./a.mjs'] });
    expect((await buildRegistry({ cwd: dir, config: other })).registry.has('viaexplicit')).toBe(true);
    expect((await buildRegistry({ cwd: dir, config: false })).registry.list()).toEqual([]);
  });
});

describe('--adapter flag', () => {
  it('resolves specifiers from the working directory, after config adapters', async () => {
    const dir = project();
    write(join(dir, 'profkit.config.json'), { adapters: ['./c.mjs'] });
    write(join(dir, 'c.mjs'), plainAdapter('fromconfig'));
    write(join(dir, 'tools', 'f.mjs'), plainAdapter('fromflag'));
    const { registry } = await buildRegistry({ cwd: dir, adapterSpecifiers: ['./tools/f.mjs'] });
    expect(registry.list().map((e) => [e.adapter.name, e.source.kind, e.source.specifier])).toEqual([
      ['fromconfig', 'config', './c.mjs'],
      ['fromflag', 'flag', './tools/f.mjs'],
    ]);
    const e = await rejection(buildRegistry({ cwd: dir, adapterSpecifiers: ['./nope.mjs'] }));
    expect(e.message).toContain('--adapter ./nope.mjs');
  });

  it('rejects a flagged adapter that clashes with a configured one', async () => {
    const dir = project();
    write(join(dir, 'profkit.config.json'), { adapters: ['./c.mjs'] });
    write(join(dir, 'c.mjs'), plainAdapter('same'));
    write(join(dir, 'd.mjs'), plainAdapter('same'));
    const e = await rejection(buildRegistry({ cwd: dir, adapterSpecifiers: ['./d.mjs'] }));
    expect(e.code).toBe(ErrorCodes.ADAPTER_DUPLICATE);
    expect(e.message).toContain('./c.mjs');
  });

  it('loads a real adapter built on @profkit/core from outside the repo', async () => {
    const dir = project();
    const pkgDir = installPackage(
      dir,
      'profkit-adapter-real',
      `import { defineAdapter, ProfileBuilder } from '@profkit/core/node';
export default defineAdapter({
  name: 'real', formats: [{ id: 'real', extensions: ['.real'], binary: false }],
  sniff: () => 0,
  read: async () => { const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] }); return { profile: b.build(), warnings: [] }; },
});\n`,
    );
    // The package finds @profkit/core as an installed peer would be found.
    mkdirSync(join(pkgDir, 'node_modules', '@profkit'), { recursive: true });
    symlinkSync(coreDir, join(pkgDir, 'node_modules', '@profkit', 'core'));
    const { registry } = await buildRegistry({ cwd: dir, adapterSpecifiers: ['profkit-adapter-real'], config: false });
    expect(registry.get('real')?.apiVersion).toBe(1);
  });
});

describe('zero-config discovery of installed adapter packages', () => {
  /** A project with adapters installed in its node_modules and one in its parent's. */
  function discoveryProject() {
    const parent = project();
    const dir = join(parent, 'app');
    write(join(dir, 'package.json'), { name: 'app', dependencies: { 'profkit-adapter-yes': '1.0.0' } });
    installPackage(dir, 'profkit-adapter-yes', plainAdapter('yes'));
    installPackage(dir, 'profkit-adapter-nokeyword', plainAdapter('nokeyword'), { keywords: ['other'] });
    installPackage(dir, '@profkit/scoped', plainAdapter('scoped'));
    installPackage(dir, '@profkit/not-an-adapter', 'throw new Error("must not be imported");', { keywords: [] });
    installPackage(dir, 'unlisted-but-keyworded', plainAdapter('unlisted'));
    write(join(dir, 'node_modules', 'broken-json', 'package.json'), '{ "keywords": ["profkit-adapter"');
    installPackage(parent, 'profkit-adapter-above', plainAdapter('above'));
    return dir;
  }
  const names = (r: Awaited<ReturnType<typeof buildRegistry>>) => r.registry.list().map((e) => [e.adapter.name, e.source.kind, e.source.specifier]);

  it('finds every package with the keyword in the node_modules of the folder and its ancestors, reading only package.json', () => {
    const dir = discoveryProject();
    expect(findInstalledAdapterPackages([dir]).map((p) => p.name)).toEqual(['@profkit/scoped', 'profkit-adapter-yes', 'unlisted-but-keyworded', 'profkit-adapter-above']);
    expect(nodeModulesFolders([dir]).slice(0, 2)).toEqual([join(dir, 'node_modules'), join(dirname(dir), 'node_modules')]);
  });

  it('is on without a config file: installed adapters are registered, nearest first', async () => {
    const dir = discoveryProject();
    const r = await buildRegistry({ cwd: dir });
    expect(names(r)).toEqual([
      ['scoped', 'discovered', '@profkit/scoped'],
      ['yes', 'discovered', 'profkit-adapter-yes'],
      ['unlisted', 'discovered', 'unlisted-but-keyworded'],
      ['above', 'discovered', 'profkit-adapter-above'],
    ]);
    expect(r.warnings).toEqual([]);
  });

  it("searches the fallback folders' node_modules too (a global install of the CLI)", async () => {
    const cwd = project();
    const globalRoot = project();
    const cliDir = installPackage(globalRoot, '@profkit/cli', 'export {};', { keywords: [] });
    installPackage(globalRoot, '@profkit/beside', plainAdapter('beside'));
    const r = await buildRegistry({ cwd, fallbackDirs: [cliDir] });
    expect(names(r)).toEqual([['beside', 'discovered', '@profkit/beside']]);
  });

  it('takes a package found in several folders from the nearest one', async () => {
    const dir = discoveryProject();
    installPackage(dirname(dir), 'profkit-adapter-yes', plainAdapter('yes-from-parent'));
    const r = await buildRegistry({ cwd: dir });
    expect(names(r).map((n) => n[0])).toContain('yes');
    expect(names(r).map((n) => n[0])).not.toContain('yes-from-parent');
  });

  it('adds to the config and --adapter, never shadowing them, and skips packages they already loaded', async () => {
    const dir = discoveryProject();
    write(join(dir, 'profkit.config.json'), { adapters: ['profkit-adapter-yes'] });
    const r = await buildRegistry({ cwd: dir });
    expect(names(r).map((n) => [n[0], n[1]])).toEqual([
      ['yes', 'config'],
      ['scoped', 'discovered'],
      ['unlisted', 'discovered'],
      ['above', 'discovered'],
    ]);
    expect(r.warnings).toEqual([]);
  });

  it('is switched off by "autoDiscover": false or discover: false, and then hints say "installed but not loaded"', async () => {
    const dir = discoveryProject();
    installPackage(dir, '@profkit/pprof', plainAdapter('pprof'));
    write(join(dir, 'profkit.config.json'), { adapters: [], autoDiscover: false });
    const off = await buildRegistry({ cwd: dir });
    expect(off.registry.list()).toEqual([]);
    const e = await rejection(off.registry.read(new Uint8Array([1, 2, 3]), { fileName: 'x.pb.gz' }));
    expect(e.message).toContain(`the pprof format is read by @profkit/pprof, which is installed in ${join(dir, 'node_modules', '@profkit', 'pprof')} but not loaded: "autoDiscover": false in ${join(dir, 'profkit.config.json')}`);
    expect(e.message).not.toContain('not installed');
    expect((await buildRegistry({ cwd: dir, discover: true })).registry.list().length).toBe(5);
    const flagOff = await buildRegistry({ cwd: dir, config: false, discover: false });
    expect(flagOff.registry.list()).toEqual([]);
    expect(flagOff.registry.unloadedPackages.get('@profkit/pprof')).toContain('--no-discover');
  });

  it('says "not installed" only when no folder holds the package', async () => {
    const r = await buildRegistry({ cwd: project() });
    const e = await rejection(r.registry.read(new Uint8Array([1, 2, 3]), { fileName: 'x.pb.gz' }));
    expect(e.message).toContain('@profkit/pprof, which is not installed');
  });

  it('turns a broken discovered package into a warning, and its hint says it could not be loaded', async () => {
    const dir = discoveryProject();
    installPackage(dir, 'profkit-adapter-yes', 'throw new Error("bad build");');
    installPackage(dir, '@profkit/pprof', 'throw new Error("pprof build broken");');
    const { registry, warnings } = await buildRegistry({ cwd: dir });
    expect(registry.list().map((e) => e.adapter.name)).toEqual(['scoped', 'unlisted', 'above']);
    expect(warnings.map((w) => w.code)).toEqual(['PROFKIT_W_DISCOVER_FAILED', 'PROFKIT_W_DISCOVER_FAILED']);
    expect(warnings[1]!.message).toContain('profkit-adapter-yes');
    const e = await rejection(registry.read(new Uint8Array([1, 2, 3]), { fileName: 'x.pb.gz' }));
    expect(e.message).toContain('which is installed in');
    expect(e.message).toContain('but could not be loaded');
    expect(e.message).toContain('pprof build broken');
  });

  it('still lists the candidates a package.json names (discoverAdapterPackages)', () => {
    const dir = discoveryProject();
    expect(discoverAdapterPackages(join(dir, 'package.json')).packages.map((p) => p.name)).toEqual(['profkit-adapter-yes']);
  });
});

describe('module resolution', () => {
  it('follows package exports (import condition, subpaths, patterns), main and index.js', () => {
    const dir = project();
    const a = join(dir, 'node_modules', 'a');
    write(join(a, 'package.json'), { name: 'a', exports: { '.': [{ import: './esm.js', require: './cjs.js' }], './sub/*': { default: './lib/*.js' } } });
    write(join(a, 'esm.js'), '');
    write(join(a, 'lib', 'x.js'), '');
    const b = join(dir, 'node_modules', 'b');
    write(join(b, 'package.json'), { name: 'b', main: 'main.js' });
    write(join(b, 'main.js'), '');
    const c = join(dir, 'node_modules', '@s', 'c');
    write(join(c, 'package.json'), { name: '@s/c' });
    write(join(c, 'index.js'), '');
    const deep = join(dir, 'x', 'y');
    mkdirSync(deep, { recursive: true });
    expect(resolveModule('a', deep)).toBe(join(a, 'esm.js'));
    expect(resolveModule('a/sub/x', deep)).toBe(join(a, 'lib', 'x.js'));
    expect(resolveModule('a/private', deep)).toBeUndefined();
    expect(resolveModule('b', deep)).toBe(join(b, 'main.js'));
    expect(resolveModule('@s/c', deep)).toBe(join(c, 'index.js'));
    expect(resolveModule('./node_modules/b/main.js', dir)).toBe(join(b, 'main.js'));
    expect(resolveModule('nothing', deep)).toBeUndefined();
  });
});

describe('lazy stand-ins from package.json metadata (lazy: true)', () => {
  /**
   * A package declaring adapter `lz` statically; its main module records that it was imported
   * (globalThis.__profkitLazyImports) and contributes a command; its sniff lives in sniff.js.
   */
  function lazyProject(metadata: Record<string, unknown> = {}) {
    const dir = project();
    const tag = `lz${n}`;
    const formats = [{ id: tag, extensions: [`.${tag}`], binary: false }];
    const pkgDir = installPackage(
      dir,
      `profkit-adapter-${tag}`,
      `import { sniff } from './sniff.js';
(globalThis.__profkitLazyImports ??= []).push(${JSON.stringify(tag)});
export default {
  apiVersion: 1, name: ${JSON.stringify(tag)}, formats: ${JSON.stringify(formats)}, sniff,
  read: async (input) => ({ profile: { text: new TextDecoder().decode(await input.bytes()) }, warnings: [] }),
  commands: [{ name: '${tag}-cmd', summary: 's', usage: 'u', run: async () => 0 }],
};\n`,
      { profkit: { adapters: [{ name: tag, formats, sniff: './dist/sniff.js#sniff', ...metadata }] } },
    );
    write(join(pkgDir, 'dist', 'sniff.js'), `export const sniff = (head) => new TextDecoder().decode(head).startsWith('#${tag}') ? 1 : 0;\n`);
    installPackage(dir, 'profkit-adapter-eager', plainAdapter('eager'));
    write(join(dir, 'in.txt'), `#${tag} hello`);
    return { dir, tag, imported: () => ((globalThis as { __profkitLazyImports?: string[] }).__profkitLazyImports ?? []).includes(tag) };
  }

  it('registers a stand-in without importing the main module, and imports it when a file of its format is read', async () => {
    const { dir, tag, imported } = lazyProject();
    const r = await buildRegistry({ cwd: dir, lazy: true, validator: null });
    expect(r.registry.list().map((e) => e.adapter.name)).toEqual(['eager', tag]);
    expect(r.registry.hasLazyAdapters()).toBe(true);
    expect(imported()).toBe(false);
    expect(r.registry.detect(new TextEncoder().encode(`#${tag} x`)).adapter).toBe(tag);
    expect(imported()).toBe(false);
    const read = await r.registry.read(join(dir, 'in.txt'));
    expect(read.profile).toEqual({ text: `#${tag} hello` });
    expect(imported()).toBe(true);
  });

  it('swaps stand-ins for the real adapters (commands, transforms) on loadLazyAdapters, keeping their order', async () => {
    const { dir, tag } = lazyProject();
    const r = await buildRegistry({ cwd: dir, lazy: true });
    expect(r.registry.commands()).toEqual([]);
    expect(await r.registry.loadLazyAdapters()).toEqual([]);
    expect(r.registry.hasLazyAdapters()).toBe(false);
    expect(r.registry.list().map((e) => [e.adapter.name, e.source.kind])).toEqual([['eager', 'discovered'], [tag, 'discovered']]);
    expect(r.registry.commands().map((c) => c.command.name)).toEqual([`${tag}-cmd`]);
  });

  it('imports every adapter without lazy: true (the default)', async () => {
    const { dir, tag, imported } = lazyProject();
    const r = await buildRegistry({ cwd: dir });
    expect(imported()).toBe(true);
    expect(r.registry.hasLazyAdapters()).toBe(false);
    expect(r.registry.commands().map((c) => c.command.name)).toEqual([`${tag}-cmd`]);
  });

  it('imports the adapter, with a warning, when the declared sniff module cannot be imported', async () => {
    const { dir, tag, imported } = lazyProject({ sniff: './dist/missing.js#sniff' });
    const r = await buildRegistry({ cwd: dir, lazy: true });
    expect(imported()).toBe(true);
    expect(r.registry.hasLazyAdapters()).toBe(false);
    expect(r.registry.get(tag)?.commands?.map((c) => c.name)).toEqual([`${tag}-cmd`]);
    expect(r.warnings.map((w) => w.code)).toEqual(['PROFKIT_W_DISCOVER_STATIC']);
    expect(r.warnings[0]!.message).toContain('missing.js');
  });

  it('ignores a "profkit" field declaring more adapters than a package has (imports the package instead)', async () => {
    const { dir, tag, imported } = lazyProject();
    const pkgJson = join(dir, 'node_modules', `profkit-adapter-${tag}`, 'package.json');
    const pkg = JSON.parse(readFileSync(pkgJson, 'utf8')) as { profkit: { adapters: unknown[] } };
    pkg.profkit.adapters = Array.from({ length: 65 }, () => pkg.profkit.adapters[0]);
    writeFileSync(pkgJson, JSON.stringify(pkg));
    const r = await buildRegistry({ cwd: dir, lazy: true });
    expect(imported()).toBe(true);
    expect(r.registry.hasLazyAdapters()).toBe(false);
    expect(r.registry.get(tag)?.commands?.map((c) => c.name)).toEqual([`${tag}-cmd`]);
  });

  describe('sniffing magic declared with the sniff ("magic")', () => {
    /** `lazyProject` whose sniff module records its import (globalThis.__profkitSniffImports). */
    function magicProject(magic: unknown) {
      const p = lazyProject({ magic });
      const sniffFile = join(p.dir, 'node_modules', `profkit-adapter-${p.tag}`, 'dist', 'sniff.js');
      writeFileSync(sniffFile, `(globalThis.__profkitSniffImports ??= []).push(${JSON.stringify(p.tag)});\n${readFileSync(sniffFile, 'utf8')}`);
      const sniffImported = () => ((globalThis as { __profkitSniffImports?: string[] }).__profkitSniffImports ?? []).includes(p.tag);
      return { ...p, sniffImported };
    }

    it('imports the sniff module only for a head that matches the magic, and detects as without it', async () => {
      const { dir, tag, imported, sniffImported } = magicProject({ prefixes: ['#lz', 'PK\u0003'] });
      write(join(dir, 'other.txt'), 'hello, not a profile');
      const r = await buildRegistry({ cwd: dir, lazy: true, validator: null });
      expect(r.warnings).toEqual([]);
      expect(r.registry.list().map((e) => e.adapter.name)).toEqual(['eager', tag]);
      expect(sniffImported()).toBe(false);
      const other = await r.registry.detectFile(join(dir, 'other.txt'));
      expect(other.scores.find((x) => x.adapter === tag)).toEqual({ adapter: tag, format: tag, score: 0, priority: 0 });
      expect(sniffImported()).toBe(false);
      expect((await r.registry.detectFile(join(dir, 'in.txt'))).adapter).toBe(tag);
      expect(sniffImported()).toBe(true);
      expect(imported()).toBe(false);
      expect((await r.registry.read(join(dir, 'in.txt'))).profile).toEqual({ text: `#${tag} hello` });
    });

    it('reads a file whose head matches, importing the sniff module on the way; a synchronous detect before prepareSniffs counts it as a sniff that threw', async () => {
      const { dir, tag, sniffImported } = magicProject({ prefixes: ['#'] });
      const r = await buildRegistry({ cwd: dir, lazy: true, validator: null });
      const head = new TextEncoder().encode(`#${tag} x`);
      const early = r.registry.detect(head);
      expect(early.adapter).toBeUndefined();
      expect(early.scores.find((x) => x.adapter === tag)?.error).toContain('prepareSniffs');
      await r.registry.prepareSniffs(head);
      expect(sniffImported()).toBe(true);
      expect(r.registry.detect(head).adapter).toBe(tag);
      expect((await r.registry.read(join(dir, 'in.txt'))).profile).toEqual({ text: `#${tag} hello` });
    });

    it('compares after a byte order mark and white space with skipLeadingSpace, and byte for byte without', () => {
      const bytes = (...parts: (string | number[])[]) => Uint8Array.from(parts.flatMap((x) => (typeof x === 'string' ? [...x].map((c) => c.charCodeAt(0)) : x)));
      const json = { prefixes: ['{', '['], skipLeadingSpace: true };
      expect(headMatchesMagic(bytes([0xef, 0xbb, 0xbf], ' \t\r\n{"a":1}'), json)).toBe(true);
      expect(headMatchesMagic(bytes('\n  [1]'), json)).toBe(true);
      expect(headMatchesMagic(bytes('  x{'), json)).toBe(false);
      expect(headMatchesMagic(bytes('   '), json)).toBe(false);
      expect(headMatchesMagic(bytes(' {'), { prefixes: ['{'] })).toBe(false);
      expect(headMatchesMagic(bytes([0x1f, 0x8b, 8]), { prefixes: ['\u001f\u008b'] })).toBe(true);
      expect(headMatchesMagic(bytes([0x1f]), { prefixes: ['\u001f\u008b'] })).toBe(false);
    });

    it('imports the package instead when the magic is malformed or the sniff module is missing (as for other malformed fields)', async () => {
      for (const magic of [{ prefixes: [] }, { prefixes: ['\u0100'] }, { prefixes: ['{'], skipLeadingSpace: 'yes' }, ['{']]) {
        const { dir, imported } = magicProject(magic);
        const r = await buildRegistry({ cwd: dir, lazy: true });
        expect({ magic, imported: imported() }).toEqual({ magic, imported: true });
        expect(r.registry.hasLazyAdapters()).toBe(false);
      }
      const { dir, imported } = lazyProject({ magic: { prefixes: ['#'] }, sniff: './dist/missing.js#sniff' });
      const r = await buildRegistry({ cwd: dir, lazy: true });
      expect(imported()).toBe(true);
      expect(r.warnings.map((w) => w.code)).toEqual(['PROFKIT_W_DISCOVER_STATIC']);
      expect(r.warnings[0]!.message).toContain('missing.js');
    });

    it('detects with the package\'s own adapter when the sniff module exists but cannot be used (as without magic)', async () => {
      // Without magic, a bad export fails at registration and the package is imported: the file is
      // still detected. With magic, the failure shows only once a head matches: same detection.
      const { dir, tag, imported } = lazyProject({ magic: { prefixes: ['#'] }, sniff: './dist/sniff.js#noSuchExport' });
      const r = await buildRegistry({ cwd: dir, lazy: true, validator: null });
      expect(imported()).toBe(false);
      const d = await r.registry.detectFile(join(dir, 'in.txt'));
      expect(d.scores.find((x) => x.adapter === tag)).toEqual({ adapter: tag, format: tag, score: 1, priority: 0 });
      expect(d.adapter).toBe(tag);
      expect(imported()).toBe(true);
    });

    it('trusts a wrong magic while the stand-in sniffs: its heads score 0 lazily, but not once the package is imported (docs/writing-an-adapter.md)', async () => {
      const { dir, tag, sniffImported } = magicProject({ prefixes: ['PK'] });
      const lazy = await buildRegistry({ cwd: dir, lazy: true, validator: null });
      const d = await lazy.registry.detectFile(join(dir, 'in.txt'));
      expect(d.scores.find((x) => x.adapter === tag)?.score).toBe(0);
      expect(d.adapter).toBeUndefined();
      expect(sniffImported()).toBe(false);
      const eager = await buildRegistry({ cwd: dir, validator: null });
      expect((await eager.registry.detectFile(join(dir, 'in.txt'))).adapter).toBe(tag);
    });
  });

  describe('config entries naming such a package', () => {
    it('registers a stand-in with the config as its source, imported only when a file of its format is read', async () => {
      const { dir, tag, imported } = lazyProject();
      const cfg = write(join(dir, 'profkit.config.json'), { adapters: [`profkit-adapter-${tag}`], autoDiscover: false });
      const r = await buildRegistry({ cwd: dir, lazy: true, validator: null });
      expect(r.registry.list().map((e) => [e.adapter.name, e.source.kind, e.source.specifier, e.source.from])).toEqual([[tag, 'config', `profkit-adapter-${tag}`, cfg]]);
      expect(r.registry.list()[0]!.source.resolved).toBe(join(dir, 'node_modules', `profkit-adapter-${tag}`, 'dist', 'index.js'));
      expect(imported()).toBe(false);
      expect((await r.registry.read(join(dir, 'in.txt'))).profile).toEqual({ text: `#${tag} hello` });
      expect(imported()).toBe(true);
      // Swapped for the real adapter (commands listed): still the config's.
      await r.registry.loadLazyAdapters();
      expect(r.registry.list().map((e) => [e.adapter.name, e.source.kind])).toEqual([[tag, 'config']]);
    });

    it('is not imported when a file of another format is read', async () => {
      const { dir, tag, imported } = lazyProject();
      write(join(dir, 'other.mjs'), plainAdapter('other').replace("{ throw new Error('not used'); }", "({ profile: { other: true }, warnings: [] })"));
      write(join(dir, 'x.other'), '#other');
      write(join(dir, 'profkit.config.json'), { adapters: [`profkit-adapter-${tag}`, './other.mjs'], autoDiscover: false });
      const r = await buildRegistry({ cwd: dir, lazy: true, validator: null });
      expect((await r.registry.read(join(dir, 'x.other'))).profile).toEqual({ other: true });
      expect(imported()).toBe(false);
    });

    it('overrides a discovered adapter of the same name, as an imported one does', async () => {
      const { dir, tag, imported } = lazyProject();
      // Another installed package whose adapter takes the same name.
      installPackage(dir, 'profkit-adapter-rival', plainAdapter(tag));
      write(join(dir, 'profkit.config.json'), { adapters: [`profkit-adapter-${tag}`] });
      const r = await buildRegistry({ cwd: dir, lazy: true, validator: null });
      expect(r.registry.list().find((e) => e.adapter.name === tag)?.source).toMatchObject({ kind: 'config', specifier: `profkit-adapter-${tag}` });
      expect(r.warnings.map((w) => w.message).join('\n')).toContain(`discovered adapter ${tag} from profkit-adapter-rival`);
      expect((await r.registry.read(join(dir, 'in.txt'))).profile).toEqual({ text: `#${tag} hello` });
      expect(imported()).toBe(true);
    });

    it('imports the package, with a warning, when its "profkit" field declares malformed formats', async () => {
      const { dir, tag, imported } = lazyProject({ formats: [{ id: 'x' }] });
      write(join(dir, 'profkit.config.json'), { adapters: [`profkit-adapter-${tag}`], autoDiscover: false });
      const r = await buildRegistry({ cwd: dir, lazy: true });
      expect(imported()).toBe(true);
      expect(r.registry.list().map((e) => [e.adapter.name, e.source.kind])).toEqual([[tag, 'config']]);
      expect(r.warnings.map((w) => w.code)).toEqual(['PROFKIT_W_DISCOVER_STATIC']);
      expect(r.warnings[0]!.message).toContain('formats');
    });

    it('fails at start, naming the config, when the package is not installed or its entry module is missing', async () => {
      const dir = project();
      const cfg = write(join(dir, 'profkit.config.json'), { adapters: ['@profkit/not-there'] });
      const e = await rejection(buildRegistry({ cwd: dir, lazy: true }));
      expect(e.code).toBe(DiscoveryErrorCodes.ADAPTER_NOT_FOUND);
      expect(e.message).toContain(`"@profkit/not-there" named in ${cfg}`);
      expect(e.message).toContain('npm install @profkit/not-there');
      const { dir: d2, tag } = lazyProject();
      rmSync(join(d2, 'node_modules', `profkit-adapter-${tag}`, 'dist', 'index.js'));
      const cfg2 = write(join(d2, 'profkit.config.json'), { adapters: [`profkit-adapter-${tag}`] });
      const e2 = await rejection(buildRegistry({ cwd: d2, lazy: true }));
      expect(e2.code).toBe(DiscoveryErrorCodes.ADAPTER_NOT_FOUND);
      expect(e2.detail.file).toBe(cfg2);
    });

    it('reports a module that throws on import as a typed error naming the config, when its file is read', async () => {
      const { dir, tag } = lazyProject();
      const main = join(dir, 'node_modules', `profkit-adapter-${tag}`, 'dist', 'index.js');
      writeFileSync(main, 'throw new Error("kaput");\n');
      const cfg = write(join(dir, 'profkit.config.json'), { adapters: [`profkit-adapter-${tag}`], autoDiscover: false });
      const r = await buildRegistry({ cwd: dir, lazy: true });
      const e = await rejection(r.registry.read(join(dir, 'in.txt')));
      expect(e.code).toBe(DiscoveryErrorCodes.ADAPTER_LOAD);
      expect(e.message).toContain(`named in ${cfg}`);
      expect(e.message).toContain('kaput');
    });

    it('imports paths and subpaths at start, as before', async () => {
      const { dir, tag, imported } = lazyProject();
      write(join(dir, 'profkit.config.json'), { adapters: [`./node_modules/profkit-adapter-${tag}/dist/index.js`], autoDiscover: false });
      const r = await buildRegistry({ cwd: dir, lazy: true });
      expect(imported()).toBe(true);
      expect(r.registry.hasLazyAdapters()).toBe(false);
    });
  });

  it('fails the read naming the package when the metadata declares an adapter its module does not export', async () => {
    const { dir } = lazyProject({ name: 'other-name' });
    const r = await buildRegistry({ cwd: dir, lazy: true });
    const e = await rejection(r.registry.read(join(dir, 'in.txt')));
    expect(e.code).toBe('PROFKIT_E_ADAPTER_LOAD');
    expect(e.message).toMatch(/declares adapter "other-name" but its module .* exports no adapter of that name/);
  });
});

describe('discovery cache (DiscoveryCache: what each node_modules folder held, checked before use)', () => {
  /** A cache in memory that counts what discovery stored. */
  function memoryCache(): DiscoveryCache & { entries: Map<string, string>; sets: number } {
    const entries = new Map<string, string>();
    const cache = { entries, sets: 0, get: (folder: string) => entries.get(folder), set: (folder: string, text: string) => void (cache.sets++, entries.set(folder, text)) };
    return cache;
  }
  // Discovery does not remember a folder changed within the last 2 s (a change in the same
  // timestamp tick would go unseen): the clock is moved on instead of waiting, and real time is
  // let pass before each change (so that it gets a new timestamp, as it would in use).
  const afterAWhile = () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(performance.timeOrigin + performance.now() + 60_000);
  };
  const tick = () => new Promise((r) => setTimeout(r, 30));
  afterEach(() => vi.useRealTimers());
  const found = (dir: string, cache?: DiscoveryCache) => findInstalledAdapterPackages([dir], cache).map((p) => p.name);

  it('uses what it remembered while nothing changed', () => {
    const dir = project();
    installPackage(dir, 'profkit-adapter-a', plainAdapter('a'));
    installPackage(dir, 'plain', '', { keywords: [] });
    afterAWhile();
    const cache = memoryCache();
    expect(found(dir, cache)).toEqual(['profkit-adapter-a']);
    const nm = join(dir, 'node_modules');
    expect(cache.sets).toBe(1);
    // The remembered list is what a second run answers (here made to say more than the files).
    const entry = JSON.parse(cache.entries.get(nm)!) as { packages: { name: string; dir: string }[] };
    entry.packages.push({ name: 'plain', dir: join(nm, 'plain') });
    cache.entries.set(nm, JSON.stringify(entry));
    expect(found(dir, cache)).toEqual(['profkit-adapter-a', 'plain']);
    expect(cache.sets).toBe(1);
  });

  it('sees a package added, an adapter edited in place, a package added to a scope, a linked package edited and an install in place', async () => {
    const dir = project();
    const nm = join(dir, 'node_modules');
    const a = installPackage(dir, 'profkit-adapter-a', plainAdapter('a'));
    installPackage(dir, '@scope/first', '', { keywords: [] });
    const plain = installPackage(dir, 'plain', '', { keywords: [] });
    const linkedTarget = join(project(), 'linked');
    write(join(linkedTarget, 'package.json'), { name: 'linked', keywords: [] });
    symlinkSync(linkedTarget, join(nm, 'linked'));
    write(join(nm, '.package-lock.json'), '{}');
    const cache = memoryCache();
    const step = async (change: () => void, expected: string[]) => {
      afterAWhile();
      found(dir, cache); // remembered now
      vi.useRealTimers();
      await tick();
      change();
      afterAWhile();
      expect(found(dir, cache)).toEqual(expected);
      expect(found(dir)).toEqual(expected);
    };
    await step(() => installPackage(dir, 'profkit-adapter-b', plainAdapter('b')), ['profkit-adapter-a', 'profkit-adapter-b']);
    await step(() => writeFileSync(join(a, 'package.json'), readFileSync(join(a, 'package.json'), 'utf8').replace('"profkit-adapter"', '"other"')), ['profkit-adapter-b']);
    await step(() => installPackage(dir, '@scope/profkit-adapter-c', plainAdapter('c')), ['@scope/profkit-adapter-c', 'profkit-adapter-b']);
    await step(() => write(join(linkedTarget, 'package.json'), { name: 'linked', keywords: ['profkit-adapter'] }), ['@scope/profkit-adapter-c', 'linked', 'profkit-adapter-b']);
    // A package manager updating a package's files in place rewrites its install marker.
    await step(() => {
      writeFileSync(join(plain, 'package.json'), JSON.stringify({ name: 'plain', keywords: ['profkit-adapter'] }));
      writeFileSync(join(nm, '.package-lock.json'), '{"updated":true}');
    }, ['@scope/profkit-adapter-c', 'linked', 'plain', 'profkit-adapter-b']);
  });

  /** A package declaring adapter `tag` statically (description `description`), with its sniff module. */
  function declaredAdapter(dir: string, tag: string, description: string): string {
    const formats = [{ id: tag, extensions: [`.${tag}`], binary: false }];
    const pkgDir = installPackage(dir, `profkit-adapter-${tag}`, plainAdapter(tag), { profkit: { adapters: [{ name: tag, description, formats, sniff: './dist/sniff.js#sniff' }] } });
    write(join(pkgDir, 'dist', 'sniff.js'), `export const sniff = (head) => new TextDecoder().decode(head).startsWith('#${tag}') ? 1 : 0;\n`);
    return pkgDir;
  }
  const descriptionOf = async (dir: string, tag: string, cache: DiscoveryCache) =>
    (await buildRegistry({ cwd: dir, lazy: true, validator: null, discoveryCache: cache })).registry.get(tag)?.description;

  it("remembers the package.json fields of the adapters it found, and lazy registration takes them from there (no package.json read again)", async () => {
    const dir = project();
    const tag = `dc${n}`;
    declaredAdapter(dir, tag, 'as installed');
    afterAWhile();
    const cache = memoryCache();
    expect(await descriptionOf(dir, tag, cache)).toBe('as installed');
    const nm = join(dir, 'node_modules');
    const entry = JSON.parse(cache.entries.get(nm)!) as { packages: { name: string; declared: { name: string; version: string; profkit: { adapters: { description: string }[] } } }[] };
    const remembered = entry.packages.find((p) => p.name === `profkit-adapter-${tag}`)!.declared;
    // Only what lazy registration reads: not the exports, keywords...
    expect(Object.keys(remembered).sort()).toEqual(['name', 'profkit', 'version']);
    // A second run registers the stand-in from the remembered fields (here made to differ from the file).
    remembered.profkit.adapters[0]!.description = 'as remembered';
    cache.entries.set(nm, JSON.stringify(entry));
    expect(await descriptionOf(dir, tag, cache)).toBe('as remembered');
    // An entry remembered without the fields (as a hand-made one) still works: the package.json is read.
    for (const p of entry.packages) delete (p as { declared?: unknown }).declared;
    cache.entries.set(nm, JSON.stringify(entry));
    expect(await descriptionOf(dir, tag, cache)).toBe('as installed');
  });

  it("sees an adapter's package.json edited in place: the remembered fields are not used then", async () => {
    const dir = project();
    const tag = `dc${n}`;
    const pkgDir = declaredAdapter(dir, tag, 'before');
    afterAWhile();
    const cache = memoryCache();
    expect(await descriptionOf(dir, tag, cache)).toBe('before');
    vi.useRealTimers();
    await tick();
    writeFileSync(join(pkgDir, 'package.json'), readFileSync(join(pkgDir, 'package.json'), 'utf8').replace('"before"', '"after"'));
    afterAWhile();
    expect(await descriptionOf(dir, tag, cache)).toBe('after');
  });

  it('does not remember a folder changed within the last seconds', () => {
    const dir = project();
    installPackage(dir, 'profkit-adapter-a', plainAdapter('a'));
    const cache = memoryCache();
    expect(found(dir, cache)).toEqual(['profkit-adapter-a']);
    expect(cache.sets).toBe(0);
  });

  it('ignores a remembered entry that names a folder outside its node_modules, or is not its own', () => {
    const dir = project();
    installPackage(dir, 'profkit-adapter-a', plainAdapter('a'));
    afterAWhile();
    const cache = memoryCache();
    found(dir, cache);
    const nm = join(dir, 'node_modules');
    const entry = JSON.parse(cache.entries.get(nm)!) as { folder: string; packages: { name: string; dir: string }[] };
    cache.entries.set(nm, JSON.stringify({ ...entry, packages: [{ name: 'evil', dir: '/tmp' }] }));
    expect(found(dir, cache)).toEqual(['profkit-adapter-a']);
    // Names that climb out of the folder (their dir is what `join` makes of them, so only the name rule stops them).
    for (const name of ['..', '../evil', '@scope/../../evil', '@../evil', 'a/b']) {
      cache.entries.set(nm, JSON.stringify({ ...entry, packages: [...entry.packages, { name, dir: join(nm, name) }] }));
      expect(found(dir, cache)).toEqual(['profkit-adapter-a']);
    }
    cache.entries.set(nm, JSON.stringify({ ...entry, folder: '/elsewhere/node_modules', packages: [] }));
    expect(found(dir, cache)).toEqual(['profkit-adapter-a']);
    cache.entries.set(nm, 'not json');
    expect(found(dir, cache)).toEqual(['profkit-adapter-a']);
  });
});
