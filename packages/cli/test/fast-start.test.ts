/**
 * Fast start (issue 16 item 4): `profkit top FILE` imports only the command that runs and the
 * adapter the file needs; the static adapter metadata in each first-party package.json (what
 * discovery registers lazily) matches what the adapter module declares, so the two cannot drift.
 */

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cliBin, runWithModuleLog } from '@profkit/test-utils';
import { afterAll, describe, expect, it } from 'vitest';
import { BUILTIN_COMMANDS } from '../src/commands/index.js';
import { BUILTIN_COMMAND_NAMES } from '../src/commands/lazy.js';
import { GLOBAL_OPTIONS } from '../src/cli.js';
import { GLOBAL_VALUE_OPTIONS, codeCacheCommand } from '../src/fast-start.cjs';

const here = dirname(fileURLToPath(import.meta.url));
const packagesDir = resolve(here, '../..');
const ADAPTER_PACKAGES = ['pprof', 'rprof', 'gperftools-heap', 'fuchsia-sampler', 'dm-export', 'symbolize', 'v8', 'perf', 'speedscope'];
const root = mkdtempSync(join(tmpdir(), 'profkit-fast-start-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface StaticEntry {
  name: string;
  description?: string;
  priority?: number;
  formats: unknown[];
  sniff?: string;
}

describe('static adapter metadata (package.json "profkit")', () => {
  // With the repository's example third-party adapter, which discovery finds in every CLI run here.
  const adapterDirs = [...ADAPTER_PACKAGES.map((name) => join(packagesDir, name)), resolve(packagesDir, '../tools/adapter-example-speedscope')];
  for (const pkgDir of adapterDirs) {
    it(`${pkgDir.split('/').slice(-2).join('/')}: name, description, priority, formats and sniff are the adapter module's`, async () => {
      const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { name: string; profkit?: { adapters?: StaticEntry[] } };
      const declared = pkg.profkit?.adapters ?? [];
      const mod = (await import(pathToFileURL(join(pkgDir, 'dist', 'index.js')).href)) as { default: unknown };
      const adapters = (Array.isArray(mod.default) ? mod.default : [mod.default]) as { name: string; packageName?: string; description?: string; priority?: number; formats: unknown[]; sniff: unknown }[];
      expect(declared.map((d) => d.name)).toEqual(adapters.map((a) => a.name));
      // The stand-in takes its packageName from package.json's name.
      for (const a of adapters) expect(a.packageName).toBe(pkg.name);
      for (const [i, a] of adapters.entries()) {
        const d = declared[i]!;
        expect({ description: d.description, priority: d.priority, formats: d.formats }).toEqual({ description: a.description, priority: a.priority, formats: a.formats });
        if (d.sniff === undefined) {
          // "never sniffs": the adapter's sniff scores nothing, whatever the bytes.
          expect(a.sniff.toString()).toMatch(/^\(\) => 0$/);
        } else {
          const [path, name] = d.sniff.split('#') as [string, string];
          const sniffModule = (await import(pathToFileURL(join(pkgDir, path)).href)) as Record<string, unknown>;
          expect(sniffModule[name]).toBe(a.sniff);
        }
      }
    });
  }
});

describe('the code cache a run takes (codeCacheCommand)', () => {
  const commands = ['top', 'convert'];
  it('is the first word that is neither an option nor the value of a global option that takes one', () => {
    expect(codeCacheCommand(['top', 'x.pb.gz'], commands)).toBe('top');
    expect(codeCacheCommand(['--config', 'x.json', 'top', 'x.pb.gz'], commands)).toBe('top');
    expect(codeCacheCommand(['-config', 'x.json', '--adapter', './a.mjs', '--limit', 'maxSamples=9', 'convert', 'a', 'b'], commands)).toBe('convert');
    expect(codeCacheCommand(['--config=x.json', '--json', 'top'], commands)).toBe('top');
    expect(codeCacheCommand(['--', 'top'], commands)).toBe('top');
    expect(codeCacheCommand(['--version'], commands)).toBe('other');
    expect(codeCacheCommand(['fuchsia-sampler', 'serve'], commands)).toBe('other');
  });

  it("skips the values of exactly the global options that take one (cli.ts's GLOBAL_OPTIONS)", () => {
    expect([...GLOBAL_VALUE_OPTIONS].sort()).toEqual(Object.keys(GLOBAL_OPTIONS).filter((k) => GLOBAL_OPTIONS[k]!.type === 'string').sort());
  });
});

describe('the CLI entry', () => {
  it('lists the built-in commands in the lazy table as commands/index.ts does', () => {
    expect(BUILTIN_COMMAND_NAMES).toEqual(BUILTIN_COMMANDS.map((c) => c.name));
  });

  /**
   * Runs the CLI under a module hook that logs every URL loaded; returns exit code and the URLs.
   * Without the start-up bundle (startup-bundle.test.ts tests it): this is the module graph that
   * runs when the bundle does not match the files, and the one library users load.
   */
  function loadedModules(args: string[], cwd: string): { status: number | null; stderr: string; urls: string[] } {
    return runWithModuleLog([cliBin, ...args], { cwd, env: { ...process.env, PROFKIT_NO_BUNDLE: '1' } });
  }

  /** A small pprof profile (examples/r/fib.Rprof.out converted), made once. */
  let smallProfile: string | undefined;
  function pprofProfile(): string {
    if (smallProfile) return smallProfile;
    const profile = join(root, 'fib.pb.gz');
    const made = spawnSync(process.execPath, [cliBin, 'convert', resolve(packagesDir, '../examples/r/fib.Rprof.out'), profile, '--quiet'], { cwd: root, encoding: 'utf8' });
    expect(made.stderr).toBe('');
    return (smallProfile = profile);
  }

  it('`top` on a pprof file imports the pprof adapter and the top command only', () => {
    const { status, stderr, urls } = loadedModules(['top', pprofProfile()], root);
    expect(stderr).toBe('');
    expect(status).toBe(0);
    const mainModule = (pkg: string) => pathToFileURL(join(packagesDir, pkg, 'dist', 'index.js')).href;
    expect(urls).toContain(mainModule('pprof'));
    for (const other of ['rprof', 'gperftools-heap', 'fuchsia-sampler', 'dm-export', 'symbolize', 'v8']) expect(urls).not.toContain(mainModule(other));
    const commandModules = urls.filter((u) => u.includes('/packages/cli/dist/commands/')).map((u) => u.slice(u.lastIndexOf('/') + 1));
    expect(commandModules.filter((m) => m !== 'lazy.js' && m !== 'shared.js')).toEqual(['top.js']);
  });

  /**
   * Start-up is module loading (docs/performance.md, "Start-up"; ~0.6 ms CPU per module): zod/mini
   * alone was 92 modules and ~70 ms of a `top` that must stay within 2× `node -e 0`. What `top`
   * loads today (92): core's entry (63 modules), the CLI's (10), the pprof adapter (7) and the sniff
   * modules of the installed adapters, no npm dependency at all; the bound leaves room for a few
   * core modules more. Raise it only with a start-up measurement (`npm run bench -- startup`
   * reports `top_small.modules`) showing the cost is worth it.
   */
  const MAX_TOP_MODULES = 110;

  it(`\`top\` on a pprof file loads no npm dependency and at most ${MAX_TOP_MODULES} modules`, () => {
    const { status, urls } = loadedModules(['top', pprofProfile()], root);
    expect(status).toBe(0);
    const files = urls.filter((u) => u.startsWith('file:'));
    // Workspace packages resolve to their real paths (packages/…, tools/…), so a module under a
    // node_modules folder is a third-party dependency (zod, re2js, pako…) loaded on the hot path.
    expect(files.filter((u) => u.includes('/node_modules/'))).toEqual([]);
    expect(files.length).toBeLessThanOrEqual(MAX_TOP_MODULES);
  });

  it('`top` with a config listing every first-party adapter imports the pprof adapter only; `formats` names the config as their source', () => {
    // What the repository's own profkit.config.json was: every run from its root imported them all.
    const project = join(root, 'configured');
    mkdirSync(project, { recursive: true });
    const config = join(project, 'profkit.config.json');
    writeFileSync(config, JSON.stringify({ adapters: ADAPTER_PACKAGES.map((name) => `@profkit/${name}`) }));
    const mainModule = (pkg: string) => pathToFileURL(join(packagesDir, pkg, 'dist', 'index.js')).href;
    for (const args of [['top', pprofProfile()], ['--config', config, 'top', pprofProfile()]]) {
      const { status, stderr, urls } = loadedModules(args, args[0] === 'top' ? project : root);
      expect({ args, stderr, status }).toEqual({ args, stderr: '', status: 0 });
      expect(urls).toContain(mainModule('pprof'));
      for (const other of ADAPTER_PACKAGES.filter((name) => name !== 'pprof')) expect(urls).not.toContain(mainModule(other));
    }
    const formats = spawnSync(process.execPath, [cliBin, 'formats', '--json'], { cwd: project, encoding: 'utf8', env: { ...process.env, PROFKIT_NO_BUNDLE: '1' } });
    const listed = JSON.parse(formats.stdout) as { adapters: { name: string; source: { kind: string; specifier?: string; from?: string } }[] };
    expect(listed.adapters.find((a) => a.name === 'pprof')?.source).toMatchObject({ kind: 'config', specifier: '@profkit/pprof', from: config });
  });

  it('`formats` still imports every adapter and lists their commands', () => {
    const { status, urls } = loadedModules(['formats'], root);
    expect(status).toBe(0);
    for (const pkg of ADAPTER_PACKAGES) expect(urls).toContain(pathToFileURL(join(packagesDir, pkg, 'dist', 'index.js')).href);
  });
});

describe('process.stdout is made only when used (whenStdoutCreated in bin.ts)', () => {
  // A preload that records whether Node's process.stdout getter ran (making the stream costs
  // ~3 ms of a start) and whether the stream had an 'error' listener by the time the process exited.
  const preload = join(root, 'stdout-probe.mjs');
  writeFileSync(
    preload,
    [
      "import { writeSync } from 'node:fs';",
      "const own = Object.getOwnPropertyDescriptor(process, 'stdout');",
      'let made;',
      "Object.defineProperty(process, 'stdout', { configurable: true, enumerable: true, get() { made ??= own.get.call(process); return made; } });",
      "process.on('exit', () => writeSync(2, `stdout made: ${made !== undefined}, error listeners: ${made?.listenerCount('error') ?? 0}\\n`));",
    ].join('\n'),
  );
  const run = (args: string[], stdout: 'ignore' | 'pipe', env: NodeJS.ProcessEnv = {}) =>
    spawnSync(process.execPath, ['--import', pathToFileURL(preload).href, cliBin, ...args], { cwd: root, encoding: 'utf8', stdio: ['ignore', stdout, 'pipe'], env: { ...process.env, ...env } });
  const rprof = resolve(packagesDir, '../examples/r/fib.Rprof.out');

  /**
   * The modules a run of `args` loads from files although the start-up bundle holds them: none
   * when the bundle matches the files (only bin.cjs and fast-start.cjs load from dist). A bundle
   * left stale by a `tsc -b` of an adapter still runs, but loads that adapter from dist through
   * module hooks, and registering hooks starts Node's hooks worker, which makes process.stdout.
   */
  function modulesMissedByBundle(args: string[]): string[] {
    const { status, urls } = runWithModuleLog([cliBin, ...args], { cwd: root });
    expect(status).toBe(0);
    const startFiles = [cliBin, join(dirname(cliBin), 'fast-start.cjs')].map((f) => pathToFileURL(f).href);
    return urls.filter((u) => u.startsWith('file:') && !startFiles.includes(u) && !u.startsWith(pathToFileURL(root).href));
  }

  it('`convert --quiet` never makes it (it prints nothing), with the start-up bundle or without', () => {
    const args = ['convert', rprof, join(root, 'quiet.pb.gz'), '--quiet'];
    const unbundled = run(args, 'ignore', { PROFKIT_NO_BUNDLE: '1' });
    expect(unbundled.status).toBe(0);
    expect(unbundled.stderr).toBe('stdout made: false, error listeners: 0\n');
    const bundled = run(args, 'ignore');
    expect(bundled.status).toBe(0);
    if (bundled.stderr !== unbundled.stderr && existsSync(join(dirname(cliBin), 'bundle/manifest.json'))) {
      // Says why instead of a bare "stdout made: true" (this failed twice right after a `tsc -b`).
      expect(modulesMissedByBundle(args), 'the start-up bundle is stale: these modules no longer match it (a `tsc -b` since `npm run build`); run `npm run build`').toEqual([]);
    }
    expect(bundled.stderr).toBe('stdout made: false, error listeners: 0\n');
  });

  it('a command printing to a pipe makes it, with the error listener that keeps a closed pipe from crashing the process', () => {
    const r = run(['convert', rprof, join(root, 'printed.pb.gz')], 'pipe');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('printed.pb.gz');
    expect(r.stderr).toMatch(/\nstdout made: true, error listeners: [1-9]\d*\n$/); // after convert's warning
  });
});
