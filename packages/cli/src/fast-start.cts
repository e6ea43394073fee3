/**
 * The CLI's fast start (issue 16 item 4; docs/performance.md "Start-up"). `npm run build` writes
 * `dist/bundle/` (tools/scripts/bundle-cli.mjs): the CLI, @profkit/core and the first-party
 * adapters in one script, and a manifest with the SHA-1 of every file that went into it. Node 20
 * has no compile cache for ES modules, so loading ~100 modules and compiling their code on first
 * call is most of a small command's time; one script compiled through a V8 code cache
 * (`vm.Script` `cachedData`) skips both.
 *
 * Never stale: the bundle runs only while every file of the CLI and of what it imports is byte for
 * byte what it was built from (after a bare `tsc -b` it is not, and bin.cts imports dist/cli.js as
 * before). An adapter package's code is taken from the bundle only when its own files match too;
 * any other module (a third-party adapter, a config file, an adapter whose files differ) is
 * imported as usual, and its `import '@profkit/core'` is redirected to the bundle's core (a
 * resolve hook, bundle-hooks.ts) so that there is one core instance per process.
 *
 * Hashing ~180 files costs more than it saves, so a check that passed is remembered in the cache
 * folder under the files' (path, size, mtime, ctime, inode): the next run only stats them.
 *
 * `PROFKIT_NO_BUNDLE=1` starts unbundled; `PROFKIT_CACHE_DIR` moves the cache folder (default:
 * `$XDG_CACHE_HOME/profkit` or `~/.cache/profkit`, else the temporary folder).
 */

import type { Stats } from 'node:fs';
import type { DiscoveryCache } from '@profkit/core/node';
import type { Script as VmScript } from 'node:vm';
// A CommonJS module (as bin.cts): a bundled start then never sets up Node's ES module loader,
// ~4 ms of CPU for an ES module entry (docs/performance.md "Twelfth session: CommonJS entry").
// Built-ins through require() (what tsc makes of these imports here), not an ES module import,
// which reads every export (node:fs's getters load its streams and promises).
import { closeSync, constants as fsConstants, fstatSync, futimesSync, mkdirSync, openSync, readdirSync, readFileSync, realpathSync, renameSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Script } from 'node:vm';

type Main = (argv: string[], io?: { handleSignals?: boolean }) => Promise<number>;

interface Manifest {
  bundle: string;
  bundleSha1: string;
  /** 'latin1' when the bundle is ASCII only (read without UTF-8 decoding); absent in older manifests. */
  encoding?: 'latin1' | 'utf8';
  packages: Record<string, { version: string; files: Record<string, string> }>;
  /**
   * The modules discovery may import from the bundle, each with the files (by package) of the
   * bundled code it can run: its static and dynamic imports, transitively.
   */
  modules: { package: string; path: string; files: Record<string, string[]> }[];
  eager: string[];
  bundledCoreKey: string;
  coreBridges: Record<string, string>;
  /** The built-in command names: each has a code cache of its own. */
  commands: string[];
}

interface BundleExports {
  main: Main;
  /**
   * Each module discovery may take from the bundle, as a function returning it: core's entries
   * made on first call (an object of their exports, as their namespace has), the adapters'
   * modules evaluated on first call (a promise of their namespace).
   */
  modules: [packageName: string, path: string, load: () => object | Promise<object>][];
}

export interface StartedBundle {
  main: Main;
  /** Writes the code cache when there was none (or V8 rejected it); after the command ran, so that it holds the functions the command compiled. */
  saveCodeCache(): void;
}

const cliRoot = join(__dirname, '..');
const bundleDir = join(cliRoot, 'dist', 'bundle');

function cacheDir(): string {
  if (process.env.PROFKIT_CACHE_DIR) return process.env.PROFKIT_CACHE_DIR;
  const xdg = process.env.XDG_CACHE_HOME;
  if (xdg) return join(xdg, 'profkit');
  try {
    return join(homedir(), '.cache', 'profkit');
  } catch {
    return join(tmpdir(), `profkit-${process.getuid?.() ?? 'user'}`);
  }
}

/** SHA-1 in hex. node:crypto is loaded only when a file is hashed (loading it costs ~3 ms; a start with its checks remembered hashes nothing). */
const sha1 = (data: Uint8Array) => (require('node:crypto') as typeof import('node:crypto')).createHash('sha1').update(data).digest('hex');

/** FNV-1a (32 bits) of `text` in hex: names a check marker, whose content is then compared in full. */
export function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, '0');
}

/**
 * A file's (size, mtime, ctime, inode) as a check marker holds them. Plain stats give the inode
 * as a double, which rounds inode numbers past 2^53 (XFS, btrfs, NFS and overlay file systems can
 * hand them out): a file replaced by one whose inode differs only in the rounded bits would keep
 * its signature. Such an inode (never a safe integer once rounded) is read again exactly with
 * bigint stats (`exactStats`); every other start pays nothing, where bigint stats of all ~110
 * checked files cost 3–4× the plain ones. Core's discovery (`changeSignature`) follows the same
 * rule; this file imports no core code (that is what the bundle saves).
 */
export function statSignature(s: Pick<Stats, 'size' | 'mtimeMs' | 'ctimeMs' | 'ino'>, exactStats: () => { ino: bigint } | undefined): string {
  const ino = Number.isSafeInteger(s.ino) ? s.ino : (exactStats()?.ino ?? '-');
  return `${s.size}\0${s.mtimeMs}\0${s.ctimeMs}\0${ino}`;
}

/**
 * True when nobody but this user (or root) can have written the file: owned by this user and not
 * writable by group or others. The cache folder may be one others can write to (a shared /tmp, a
 * PROFKIT_CACHE_DIR set so): a planted code cache would run its bytecode, a planted check marker
 * would skip the stale-bundle check. No owner to compare on Windows (per-user cache folders).
 */
function writtenByUs(s: Stats): boolean {
  const uid = process.getuid?.();
  return uid === undefined || (s.isFile() && s.uid === uid && (s.mode & 0o022) === 0);
}

/**
 * How stale a cache file's mtime may get while it is in use: a file read is touched (its mtime set
 * to now) when its mtime is older than this, so that the mtime says when it was last used, within
 * a day, for `pruneCache`. Once a day per file: a start reads ~5 cache files, and a touch is a
 * system call (and a metadata write) that a start otherwise does not make.
 */
const MARK_USE_AFTER_MS = 24 * 3600 * 1000;

/**
 * The cache file at `path` when this user wrote it (`writtenByUs`), else undefined; symbolic links
 * are not followed, and a FIFO planted there is opened without waiting for a writer (then refused).
 * A file read is marked as used (`MARK_USE_AFTER_MS`).
 */
function readCacheFile(path: string): Buffer | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0) | (fsConstants.O_NONBLOCK ?? 0));
    const s = fstatSync(fd);
    if (!writtenByUs(s)) return undefined;
    const data = readFileSync(fd);
    const now = Date.now();
    if (now - s.mtimeMs > MARK_USE_AFTER_MS) markUsed(fd, path, now / 1000);
    return data;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Sets the access and modification times of the cache file open as `fd` to `seconds`. The owner
 * may set them through a read-only descriptor on POSIX systems; Windows needs write access, so there
 * the path is touched instead. Errors are ignored (a read-only cache folder: pruned by write time).
 */
function markUsed(fd: number, path: string, seconds: number): void {
  try {
    futimesSync(fd, seconds, seconds);
  } catch {
    try {
      utimesSync(path, seconds, seconds);
    } catch {
      // not ours to touch
    }
  }
}

/** Writes `data` to `path` through a new private temporary file and a rename (a concurrent reader sees all or nothing); errors are ignored: the cache is optional. */
function writeCacheFile(path: string, data: string | Uint8Array): void {
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const tmp = `${path}.${process.pid}.tmp`;
    // 'wx': never through a link or into a file someone else created at that name.
    const writeNew = () => writeFileSync(tmp, data, { flag: 'wx', mode: 0o600 });
    try {
      writeNew();
    } catch (e) {
      // Left by a process with this pid that died before its rename (a container's pids repeat).
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      unlinkSync(tmp);
      writeNew();
    }
    renameSync(tmp, path);
  } catch {
    // a read-only or full cache folder: the next start checks (or compiles) again
  }
}

/** Checks the files of packages against the manifest, remembering checks that passed. */
class InputCheck {
  private readonly checked = new Map<string, boolean>();

  constructor(
    private readonly manifest: Manifest,
    private readonly cache: string,
  ) {}

  /**
   * True when the files of `name` installed at `root` are the ones the bundle holds: all of them,
   * or only `files` (paths in the package; e.g. a sniff module's, ~1 file of an adapter's ~15).
   */
  matches(name: string, root: string, files?: string[]): boolean {
    const whole = `${name}\0${root}`;
    if (files && this.checked.get(whole) === true) return true;
    const key = files ? `${whole}\0${files.join('\0')}` : whole;
    let ok = this.checked.get(key);
    if (ok === undefined) {
      ok = this.compare(name, root, files);
      this.checked.set(key, ok);
    }
    return ok;
  }

  private compare(name: string, root: string, only: string[] | undefined): boolean {
    const expected = this.manifest.packages[name];
    if (!expected) return false;
    const files = only ?? Object.keys(expected.files);
    if (files.some((file) => expected.files[file] === undefined)) return false;
    let signature = `${name}\0${root}\0${files.join('\0')}`;
    // The marker of these files at this root holds their (size, mtime, ctime, inode) when they
    // last matched: the same signature now means the same files, with nothing hashed. ctime
    // because mtime can be set back (npm extracts every file with the same 1985 mtime; utimes).
    const marker = join(this.cache, 'checked', `${this.manifest.bundleSha1.slice(0, 16)}-${fnv1a(signature)}`);
    // Plain (not bigint) stats and string paths: this runs on every start, ~110 files for the CLI
    // and core (~1 ms; bigint stats and path.join cost 3–4× that). Bigint only for an inode past 2^53.
    for (const file of files) {
      const path = `${root}/${file}`;
      let s: Stats | undefined;
      try {
        s = statSync(path, { throwIfNoEntry: false });
        if (s) signature += `\0${statSignature(s, () => statSync(path, { bigint: true, throwIfNoEntry: false }))}`;
      } catch {
        return false; // ENOTDIR, EACCES: not the file the bundle holds
      }
      if (!s) return false;
    }
    if (readCacheFile(marker)?.toString('utf8') === signature) return true; // else not checked yet, or the files changed since: hash them
    for (const file of files) {
      try {
        if (sha1(readFileSync(`${root}/${file}`)) !== expected.files[file]) return false;
      } catch {
        return false;
      }
    }
    writeCacheFile(marker, signature);
    return true;
  }

  /**
   * The bundle's text when its bytes are the ones the manifest names (`bundleSha1`), else
   * undefined. Checked as the files are, and needed: V8 takes a code cache for any source of the
   * same length, so an edited bundle would run the bytecode of the one the cache was made from.
   */
  bundleText(path: string): string | undefined {
    let fd: number | undefined;
    try {
      fd = openSync(path, fsConstants.O_RDONLY);
      const s = fstatSync(fd);
      const signature = `bundle\0${path}\0${statSignature(s, () => fstatSync(fd!, { bigint: true }))}`;
      const marker = join(this.cache, 'checked', `${this.manifest.bundleSha1.slice(0, 16)}-${fnv1a(`bundle\0${path}`)}`);
      const bytes = readFileSync(fd);
      const remembered = readCacheFile(marker)?.toString('utf8') === signature;
      if (!remembered && sha1(bytes) !== this.manifest.bundleSha1) return undefined;
      if (!remembered) writeCacheFile(marker, signature);
      return bytes.toString(this.manifest.encoding === 'latin1' ? 'latin1' : 'utf8');
    } catch {
      return undefined;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }
}

/**
 * Discovery's cache (core's `DiscoveryCache`): what it found in each \`node_modules\` folder, one
 * private file per folder (\`discover/<FNV-1a of the folder>.json\` in the cache folder, read only
 * when written by this user, as the code caches). Discovery checks an entry against the files
 * before using it; the bundled or unbundled CLI gets it from bin.cts.
 */
export function discoveryCacheFiles(): DiscoveryCache {
  const fileOf = (folder: string) => join(cacheDir(), 'discover', `${fnv1a(folder)}.json`);
  return {
    get: (folder) => readCacheFile(fileOf(folder))?.toString('utf8'),
    set: (folder, text) => writeCacheFile(fileOf(folder), text),
  };
}

/** Code caches and check markers of other bundles (other builds, other installs), and discovery entries, unused for a week. */
const PRUNE_AFTER_MS = 7 * 24 * 3600 * 1000;

/**
 * Deletes what other bundles and discovery left in the cache folder and nobody used for a week
 * (every `npm run build` makes a new bundle, ~600 KB of code cache). A file's mtime is its last
 * use, within a day (`readCacheFile` touches what it reads), not its last write: an entry read on
 * every start but written long ago (a discovery entry of a folder that never changes, the code
 * cache of another install in daily use) stays. Runs only when this bundle writes its code cache;
 * errors are ignored. Exported for tests.
 */
export function pruneCache(cache: string, bundleKey: string): void {
  const now = Date.now();
  // Discovery's entries too: one per node_modules folder ever searched (test projects come and go).
  for (const dir of [cache, join(cache, 'checked'), join(cache, 'discover')]) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      if (name.includes(bundleKey) || !(name.endsWith('.v8cache') || dir !== cache)) continue;
      try {
        const path = join(dir, name);
        if (now - statSync(path).mtimeMs > PRUNE_AFTER_MS) unlinkSync(path); // last used more than a week ago
      } catch {
        // gone already, or not ours to delete
      }
    }
  }
}

/**
 * Where package `name` is installed as seen from `fromRoot` (a package folder), or undefined: the
 * first `node_modules/<name>` folder from `fromRoot` upwards, symbolic links resolved, as Node's
 * ES module resolution finds a bare specifier. (A `require.resolve` of
 * `<name>/package.json` finds the same folder but costs ~2.5 ms on every start: it builds a
 * CommonJS resolver and reads the package's `exports`.)
 */
function packageRoot(name: string, fromRoot: string): string | undefined {
  for (let dir = fromRoot; ; ) {
    const candidate = join(dir, 'node_modules', name);
    let isDirectory = false;
    try {
      isDirectory = statSync(candidate, { throwIfNoEntry: false })?.isDirectory() === true;
    } catch {
      // ENOTDIR (a file named node_modules), EACCES: not here, as for Node's resolution
    }
    if (isDirectory) {
      try {
        return realpathSync.native(candidate); // one system call; Node's JavaScript realpath lstats every part of the path
      } catch {
        return undefined;
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/**
 * True when the module at `url` can load no other module: its text has no `import` and no
 * `require` at all (e.g. an adapter's sniff module whose only imports were `import type`, which
 * tsc erases). Such a module needs no core redirect, and registering the resolve hook costs a
 * loader thread (~50 ms of CPU on Node 20), so it is not registered for it. Unreadable: false.
 */
function importsNothing(url: string): boolean {
  try {
    return !/\bimport\b|\brequire\b/.test(readFileSync(fileURLToPath(url), 'utf8'));
  } catch {
    return false;
  }
}

/** The package.json name at `root`, or undefined. */
function packageName(root: string): string | undefined {
  try {
    return String(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).name);
  } catch {
    return undefined;
  }
}

/**
 * Calls `then` with `process.stdout` once something reads `process.stdout`, instead of creating
 * the stream now. Creating it loads node:tty (a terminal), node:net (a pipe) or a file stream,
 * ~3 ms of CPU that a command printing nothing (`convert --quiet`) never needs, nor one whose
 * stdout is a file or /dev/null (core's `writeToStdout` writes those with `fs.writeSync`):
 * `profkit top` of a 1 KB profile to /dev/null, 129 → 124 ms CPU. When `process.stdout` is not
 * Node's configurable getter (an embedder replaced it), `then` runs at once.
 */
export function whenStdoutCreated(then: (stdout: NodeJS.WriteStream) => void): void {
  const own = Object.getOwnPropertyDescriptor(process, 'stdout');
  if (!own?.get || !own.configurable) {
    then(process.stdout);
    return;
  }
  Object.defineProperty(process, 'stdout', {
    configurable: true,
    enumerable: own.enumerable,
    get() {
      // Node's getter makes the stream once and keeps it: put it back, then hand the stream on.
      Object.defineProperty(process, 'stdout', own);
      const stdout = own.get!.call(process) as NodeJS.WriteStream;
      then(stdout);
      return stdout;
    },
  });
}

/**
 * The global options that take a value (cli.ts's `GLOBAL_OPTIONS` of type string; a test keeps the
 * two lists equal): `--config x.json top` runs `top`, not a command named `x.json`. Written here,
 * not imported from cli.ts, whose import is what the bundle saves.
 */
export const GLOBAL_VALUE_OPTIONS: readonly string[] = ['config', 'adapter', 'limit'];

/**
 * The built-in command whose code cache a run uses: the first argument that is neither an option
 * (`--json`, `--config=x.json`) nor the value of a global option that takes one (`--config
 * x.json`; pprof's single-dash spelling `-config x.json` too), when it names one of `commands`;
 * else `other`. Which cache a run takes only decides what is compiled already: V8 checks every
 * cache against the bundle's source, and a config's adapters outside the bundle are never in it.
 */
export function codeCacheCommand(argv: readonly string[], commands: readonly string[]): string {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') return commands.includes(argv[i + 1] ?? '') ? argv[i + 1]! : 'other';
    if (!a.startsWith('-')) return commands.includes(a) ? a : 'other';
    const option = /^--?([^=]+)$/.exec(a)?.[1];
    if (option !== undefined && GLOBAL_VALUE_OPTIONS.includes(option)) i++;
  }
  return 'other';
}

/**
 * Starts the bundle when it is built and matches the installed files; undefined otherwise (the
 * caller then imports dist/cli.js). Never throws for a missing, stale or rejected bundle or cache.
 */
export function startBundle(argv: string[] = []): StartedBundle | undefined {
  if (process.env.PROFKIT_NO_BUNDLE) return undefined;
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(join(bundleDir, 'manifest.json'), 'utf8')) as Manifest;
  } catch {
    return undefined; // not built (esbuild missing, or only `tsc -b` ran)
  }
  const cache = cacheDir();
  const check = new InputCheck(manifest, cache);
  const roots = new Map<string, string>([['@profkit/cli', cliRoot]]);
  for (const name of manifest.eager) {
    const root = roots.get(name) ?? packageRoot(name, cliRoot);
    if (!root || !check.matches(name, root)) return undefined;
    roots.set(name, root);
  }
  const coreRoot = roots.get('@profkit/core')!;

  const bundlePath = join(bundleDir, manifest.bundle);
  // One code cache per built-in command: a cache holds the functions the run that wrote it
  // compiled, and a command run with another's cache compiles its own code from source again
  // (`convert` of the Rprof benchmark file with `top`'s cache: ~30 ms more CPU). The command is
  // the first argument that is no option nor an option's value; anything else shares one cache.
  const command = codeCacheCommand(argv, manifest.commands ?? []);
  const codeCachePath = join(cache, `cli-${manifest.bundleSha1.slice(0, 16)}-${command}-node${process.version}-${process.arch}.v8cache`);
  const cachedData = readCacheFile(codeCachePath);
  const source = check.bundleText(bundlePath);
  if (source === undefined) return undefined; // edited or damaged since the build: start unbundled
  let script: VmScript;
  try {
    script = new Script(source, { filename: bundlePath, ...(cachedData ? { cachedData } : {}) });
  } catch {
    return undefined; // an unreadable or damaged bundle file: start unbundled
  }
  const needsCodeCache = !cachedData || script.cachedDataRejected === true;

  const bundled = new Map<string, () => object | Promise<object>>(); // `${package}\0${path}` -> its module
  let hooksRegistered = false;
  const importMetaUrl = (name: string, path: string) => pathToFileURL(join(roots.get(name) ?? cliRoot, path)).href;

  const names = new Map<string, string | undefined>(); // package folder -> its package.json name
  const nameAt = (root: string) => {
    if (!names.has(root)) names.set(root, packageName(root));
    return names.get(root);
  };

  /**
   * A module from the bundle when `url` is one of its bundled modules and the files of the code
   * it can run (its imports, transitively; `files` in the manifest) match: a sniff module is
   * checked alone, its adapter's other modules when they are imported.
   */
  const fromBundle = (url: string): (() => object | Promise<object>) | undefined => {
    const file = fileURLToPath(url).replaceAll('\\', '/');
    for (const { package: name, path, files } of manifest.modules) {
      const suffix = '/' + path;
      if (!file.endsWith(suffix)) continue;
      const root = file.slice(0, file.length - suffix.length);
      if (nameAt(root) !== name) continue;
      // An eager package's files (core's) are in no module's `files`: they were checked at its
      // install only, so another copy of it (a config naming its dist/index.js) is checked whole.
      const filesMatch = manifest.eager.includes(name)
        ? check.matches(name, root)
        : files[name]?.includes(path) === true &&
          Object.entries(files).every(([pkg, paths]) => {
            const pkgRoot = pkg === name ? root : pkg === '@profkit/core' ? coreRoot : packageRoot(pkg, root);
            return pkgRoot !== undefined && check.matches(pkg, pkgRoot, paths);
          });
      if (!filesMatch) continue;
      roots.set(name, root);
      return bundled.get(`${name}\0${path}`);
    }
    return undefined;
  };

  /** Any other module imports @profkit/core from the bundle (one core instance per process). */
  const redirectCore = () => {
    if (hooksRegistered) return;
    hooksRegistered = true;
    const redirects: Record<string, string> = {};
    for (const [entry, bridge] of Object.entries(manifest.coreBridges)) redirects[pathToFileURL(join(coreRoot, entry)).href] = pathToFileURL(join(bundleDir, bridge)).href;
    register('./bundle-hooks.js', pathToFileURL(__filename), { data: { redirects, coreRoot: pathToFileURL(coreRoot).href + '/' } });
  };

  const importModule = async (specifier: string): Promise<unknown> => {
    if (specifier.startsWith('file:')) {
      const mod = fromBundle(specifier);
      if (mod) return mod();
      if (!importsNothing(specifier)) redirectCore();
    }
    return import(specifier);
  };

  const module = { exports: {} as BundleExports };
  try {
    const fn = script.runInThisContext() as (...args: unknown[]) => void;
    fn(module.exports, createRequire(bundlePath), module, bundlePath, bundleDir, importMetaUrl, importModule);
  } catch {
    return undefined; // a bundle that fails while it loads (edited or damaged after the build): start unbundled
  }
  const exports = module.exports;
  for (const [name, path, load] of exports.modules) bundled.set(`${name}\0${path}`, load);
  // What the bridges (dist/bundle/core-*.mjs) re-export, made when one is first imported.
  const coreEntry = (path: string) => bundled.get(`@profkit/core\0${path}`)?.();
  (globalThis as Record<symbol, unknown>)[Symbol.for(manifest.bundledCoreKey)] = {
    get 'dist/index.js'() {
      return coreEntry('dist/index.js');
    },
    get 'dist/node/index.js'() {
      return coreEntry('dist/node/index.js');
    },
  };
  return {
    main: exports.main,
    saveCodeCache() {
      if (!needsCodeCache) return;
      writeCacheFile(codeCachePath, script.createCachedData());
      pruneCache(cache, manifest.bundleSha1.slice(0, 16));
    },
  };
}
