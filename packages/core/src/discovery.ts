/**
 * Adapter discovery: builds a registry from, in order (an adapter registered earlier wins; later
 * sources never shadow it),
 * 1. adapters passed programmatically,
 * 2. the config file `profkit.config.{json,js,mjs}` (searched from the working directory
 *    upwards, or named explicitly), whose `adapters` are module specifiers resolved from the
 *    config file's folder first, then from the fallback folders (the CLI's own install),
 * 3. `--adapter <specifier>` flags, resolved from the working directory (then the fallbacks),
 * 4. zero-config discovery (on unless the config says `"autoDiscover": false` or the caller
 *    passes `discover: false`, the CLI's `--no-discover`): the installed packages, found like
 *    Node resolution finds them, in the `node_modules` folder of the working directory and of
 *    each of its ancestors, then in those of the config's folder and of the fallback folders (so
 *    a global install of the CLI finds adapters installed globally beside it). A package is an
 *    adapter when its package.json lists the `profkit-adapter` keyword (`@profkit/*` packages
 *    included). Only package.json files are read to find them.
 *
 * Specifiers are resolved like Node's ESM loader (package `exports` with the `import`/`node`/
 * `default` conditions, else `main`, else `index.js`), then loaded with `import()`. A module may
 * export (as default, or as `adapter`/`adapters`) an adapter, an array of adapters, or a factory
 * function returning either; nested `default`s (CommonJS interop) are unwrapped.
 *
 * Lazy loading (`lazy: true`, what the CLI's file commands use): a discovered package whose
 * package.json has a `"profkit"` field declaring its adapters statically (name, formats and the
 * module and export of its sniff function, see `StaticAdapterMetadata` and
 * docs/writing-an-adapter.md) is registered as lazy stand-ins: only the small sniff module is
 * imported when the registry is built (or, when the entry declares its sniffing `magic`, only
 * when an input's head matches it), the adapter's main module when a file of its format is
 * read or written (or `registry.loadLazyAdapters()` asks for commands and transforms). A config
 * entry naming such a package (`"@profkit/pprof"`, resolved from the config file's folder) is
 * registered the same way, with the config as its source. Packages without the field, config
 * entries that are paths or subpaths, and `--adapter` modules are imported eagerly; a config
 * entry that cannot be resolved is imported too, so it fails at start as before.
 */

import { readFileSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, extname, isAbsolute, join, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { defineAdapter, type Adapter, type FormatInfo, type SniffHints, type SniffResult } from './adapter.js';
import { ErrorCodes, ProfkitError, isProfkitError } from './errors.js';
import { Registry, checkAdapter, type AdapterSource, type RegisterOptions, type RegistryOptions } from './registry.js';
import { nodeFileAccess } from './node/files.js';
import { jsonSyntaxErrorAt } from './sniff-util.js';
import * as s from './shape.js';

/** Error codes of discovery (beyond `ErrorCodes.CONFIG`). */
export const DiscoveryErrorCodes = {
  /** A named adapter module cannot be found from any of the folders searched. */
  ADAPTER_NOT_FOUND: 'PROFKIT_E_ADAPTER_NOT_FOUND',
  /** A named adapter module was found but importing or evaluating it failed. */
  ADAPTER_LOAD: 'PROFKIT_E_ADAPTER_LOAD',
} as const;

/** Config file names, in the order they are looked for in each folder. */
export const CONFIG_FILE_NAMES = ['profkit.config.json', 'profkit.config.js', 'profkit.config.mjs'] as const;

/** The keyword an adapter package's package.json must list to be auto-discovered. */
export const ADAPTER_KEYWORD = 'profkit-adapter';

export interface ProfkitConfig {
  /** Module specifiers (or, in JS configs, adapter objects / arrays / factories). */
  adapters: unknown[];
  /** Zero-config discovery of installed adapter packages; `true` unless the file says `false`. */
  autoDiscover: boolean;
}

export interface LoadedConfig extends ProfkitConfig {
  path: string;
}

const configSchema = s.object(
  {
    $schema: s.optional(s.string()),
    adapters: s.optional(s.array(s.unknown())),
    autoDiscover: s.optional(s.boolean()),
  },
  { strict: true },
);

/** Finds the nearest config file from `startDir` upwards; undefined when there is none. */
export function findConfigFile(startDir: string): string | undefined {
  let dir = resolve(startDir);
  for (;;) {
    for (const name of CONFIG_FILE_NAMES) {
      const p = join(dir, name);
      if (isFile(p)) return p;
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

// A missing path is the common answer here (config names looked for in every folder up from the
// working directory, node_modules folders that do not exist): `throwIfNoEntry: false` answers it
// without making and throwing an error (each thrown ENOENT cost ~30 µs of a start).
function isFile(p: string): boolean {
  try {
    return statSync(p, { throwIfNoEntry: false })?.isFile() === true;
  } catch {
    return false;
  }
}

function isDir(p: string): boolean {
  try {
    return statSync(p, { throwIfNoEntry: false })?.isDirectory() === true;
  } catch {
    return false;
  }
}

/** Reads and checks a config file (JSON, or a JS module whose default export is the config). */
export async function loadConfigFile(path: string): Promise<LoadedConfig> {
  const abs = resolve(path);
  let raw: unknown;
  const ext = extname(abs);
  if (ext === '.json') {
    let text: string;
    try {
      text = readFileSync(abs, 'utf8');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new ProfkitError(ErrorCodes.CONFIG, `cannot read config file: ${code === 'ENOENT' ? 'no such file' : (e as Error).message}`, { file: abs, rule: 'config file readable' });
    }
    try {
      raw = JSON.parse(text);
    } catch (e) {
      const at = jsonSyntaxErrorAt(text);
      throw new ProfkitError(ErrorCodes.CONFIG, `config file is not valid JSON: ${at ? `expected ${at.expected} at column ${at.column}` : (e as Error).message}`, {
        file: abs,
        line: at?.line,
        rule: 'config file is JSON',
      });
    }
  } else if (ext === '.js' || ext === '.mjs' || ext === '.cjs') {
    if (!isFile(abs)) throw new ProfkitError(ErrorCodes.CONFIG, 'cannot read config file: no such file', { file: abs, rule: 'config file readable' });
    try {
      const mod = (await import(pathToFileURL(abs).href)) as Record<string, unknown>;
      raw = unwrapDefault(mod);
      if (typeof raw === 'function') raw = await (raw as () => unknown)();
    } catch (e) {
      if (isProfkitError(e)) throw e.withDetail({ file: abs });
      throw new ProfkitError(ErrorCodes.CONFIG, `loading config module failed: ${(e as Error)?.message ?? String(e)}`, { file: abs, rule: 'config module loads' }, { cause: e });
    }
  } else {
    throw new ProfkitError(ErrorCodes.CONFIG, `config file must be .json, .js or .mjs`, { file: abs, rule: 'config file name' });
  }
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(top level)'}: ${i.message}`);
    throw new ProfkitError(ErrorCodes.CONFIG, `config file is malformed: ${issues.join('; ')} (expected { "adapters": [...], "autoDiscover"?: boolean })`, {
      file: abs,
      rule: 'config file shape',
    });
  }
  const adapters = parsed.data.adapters ?? [];
  if (ext === '.json') {
    adapters.forEach((a, i) => {
      if (typeof a !== 'string' || a.length === 0) {
        throw new ProfkitError(ErrorCodes.CONFIG, `config file is malformed: adapters.${i}: expected a module specifier string`, { file: abs, rule: 'config file shape' });
      }
    });
  }
  return { path: abs, adapters, autoDiscover: parsed.data.autoDiscover ?? true };
}

// ---------------------------------------------------------------------------------------------
// Module resolution (the ESM algorithm's essentials, from an arbitrary folder).

const CONDITIONS = ['import', 'node', 'module-sync', 'default'];

function splitPackageSpecifier(spec: string): { name: string; subpath: string } | undefined {
  const parts = spec.split('/');
  if (spec.startsWith('@')) {
    if (parts.length < 2 || !parts[1]) return undefined;
    return { name: `${parts[0]}/${parts[1]}`, subpath: parts.length > 2 ? './' + parts.slice(2).join('/') : '.' };
  }
  if (!parts[0]) return undefined;
  return { name: parts[0], subpath: parts.length > 1 ? './' + parts.slice(1).join('/') : '.' };
}

function resolveTarget(target: unknown, pkgDir: string, star?: string): string | undefined {
  if (typeof target === 'string') {
    if (!target.startsWith('./')) return undefined;
    return join(pkgDir, star === undefined ? target : target.split('*').join(star));
  }
  if (Array.isArray(target)) {
    for (const t of target) {
      const r = resolveTarget(t, pkgDir, star);
      if (r) return r;
    }
    return undefined;
  }
  if (target && typeof target === 'object') {
    for (const [k, v] of Object.entries(target as Record<string, unknown>)) {
      if (CONDITIONS.includes(k)) {
        const r = resolveTarget(v, pkgDir, star);
        if (r) return r;
      }
    }
  }
  return undefined;
}

function resolveExports(exports: unknown, subpath: string, pkgDir: string): string | undefined {
  const isSubpathMap = exports && typeof exports === 'object' && !Array.isArray(exports) && Object.keys(exports).some((k) => k.startsWith('.'));
  if (!isSubpathMap) return subpath === '.' ? resolveTarget(exports, pkgDir) : undefined;
  const map = exports as Record<string, unknown>;
  if (subpath in map) return resolveTarget(map[subpath], pkgDir);
  let best: { key: string; star: string } | undefined;
  for (const key of Object.keys(map)) {
    const i = key.indexOf('*');
    if (i < 0) continue;
    const pre = key.slice(0, i);
    const post = key.slice(i + 1);
    if (subpath.startsWith(pre) && subpath.endsWith(post) && subpath.length >= key.length - 1) {
      if (!best || pre.length > best.key.indexOf('*')) best = { key, star: subpath.slice(pre.length, subpath.length - post.length) };
    }
  }
  return best ? resolveTarget(map[best.key], pkgDir, best.star) : undefined;
}

function readPackageJson(dir: string): Record<string, unknown> | undefined {
  const p = join(dir, 'package.json');
  if (!isFile(p)) return undefined;
  try {
    return JSON.parse(readFileSync(p, 'utf8')) as Record<string, unknown>;
  } catch (e) {
    throw new ProfkitError(ErrorCodes.CONFIG, `package.json is not valid JSON: ${(e as Error).message}`, { file: p, rule: 'package.json is JSON' });
  }
}

function resolvePackageEntry(pkgDir: string, subpath: string): string | undefined {
  const pkg = readPackageJson(pkgDir) ?? {};
  if (pkg.exports !== undefined) return resolveExports(pkg.exports, subpath, pkgDir);
  if (subpath !== '.') return resolveFile(join(pkgDir, subpath));
  if (typeof pkg.main === 'string') return resolveFile(join(pkgDir, pkg.main));
  return resolveFile(join(pkgDir, 'index.js'));
}

function resolveFile(p: string): string | undefined {
  if (isFile(p)) return p;
  for (const ext of ['.js', '.mjs', '.cjs']) if (isFile(p + ext)) return p + ext;
  if (isDir(p)) {
    if (isFile(join(p, 'package.json'))) return resolvePackageEntry(p, '.');
    for (const ext of ['index.js', 'index.mjs', 'index.cjs']) if (isFile(join(p, ext))) return join(p, ext);
  }
  return undefined;
}

/** Finds the folder of installed package `name` from `fromDir` (walking up `node_modules`). */
export function findPackageDir(name: string, fromDir: string): string | undefined {
  let dir = resolve(fromDir);
  for (;;) {
    const candidate = join(dir, 'node_modules', name);
    if (isFile(join(candidate, 'package.json'))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/**
 * Resolves a module specifier (relative or absolute path, `file:` URL, or package name with an
 * optional subpath) from `fromDir`; undefined when it cannot be found there.
 */
export function resolveModule(specifier: string, fromDir: string): string | undefined {
  if (specifier.startsWith('file:')) return resolveFile(fileURLToPath(specifier));
  if (specifier.startsWith('.') || isAbsolute(specifier)) return resolveFile(resolve(fromDir, specifier));
  const parsed = splitPackageSpecifier(specifier);
  if (!parsed) return undefined;
  const pkgDir = findPackageDir(parsed.name, fromDir);
  if (!pkgDir) return undefined;
  const entry = resolvePackageEntry(pkgDir, parsed.subpath);
  return entry && isFile(entry) ? entry : undefined;
}

function unwrapDefault(mod: unknown): unknown {
  let v = mod;
  for (let i = 0; i < 4; i++) {
    if (v && typeof v === 'object' && 'default' in v && !('sniff' in v)) v = (v as { default: unknown }).default;
    else break;
  }
  return v;
}

/** Turns a loaded module's value into adapter candidates (not yet checked). */
async function adapterCandidates(mod: unknown): Promise<unknown[]> {
  let v: unknown = mod;
  if (mod && typeof mod === 'object' && !('default' in mod) && !('sniff' in mod)) {
    const m = mod as Record<string, unknown>;
    if ('adapters' in m) v = m.adapters;
    else if ('adapter' in m) v = m.adapter;
  } else {
    v = unwrapDefault(mod);
  }
  if (typeof v === 'function') v = await (v as () => unknown)();
  const out: unknown[] = [];
  const flatten = (x: unknown) => {
    if (Array.isArray(x)) x.forEach(flatten);
    else out.push(x);
  };
  flatten(v);
  return out;
}

export interface LoadAdapterOptions {
  /** Folders to resolve from, in order (the first one is where the specifier was named). */
  fromDirs: string[];
  /** Where it was named: the config file, `--adapter`, or the package.json. */
  namedIn: string;
}

/** Resolves, imports and unwraps one adapter module; returns the adapter candidates it exports. */
export async function loadAdapterModule(specifier: string, options: LoadAdapterOptions): Promise<{ values: unknown[]; resolved: string }> {
  const tried: string[] = [];
  let resolved: string | undefined;
  // Paths are relative to where they were named; only package names fall back to other folders.
  const isPath = specifier.startsWith('.') || specifier.startsWith('file:') || isAbsolute(specifier);
  for (const dir of isPath ? options.fromDirs.slice(0, 1) : options.fromDirs) {
    tried.push(dir);
    try {
      resolved = resolveModule(specifier, dir);
    } catch (e) {
      if (isProfkitError(e)) throw e;
      resolved = undefined;
    }
    if (resolved) break;
  }
  if (!resolved) {
    throw new ProfkitError(
      DiscoveryErrorCodes.ADAPTER_NOT_FOUND,
      `cannot find adapter module "${specifier}" named in ${options.namedIn}; looked from ${tried.join(' and from ')}${
        specifier.startsWith('.') || isAbsolute(specifier) ? '' : ` (install it: npm install ${splitPackageSpecifier(specifier)?.name ?? specifier})`
      }`,
      { file: options.namedIn, specifier, searched: tried, rule: 'adapter module resolvable' },
    );
  }
  let mod: unknown;
  try {
    mod = await import(pathToFileURL(realpathSync(resolved)).href);
  } catch (e) {
    throw new ProfkitError(
      DiscoveryErrorCodes.ADAPTER_LOAD,
      `loading adapter module "${specifier}" (${resolved}) named in ${options.namedIn} failed: ${(e as Error)?.message ?? String(e)}`,
      { file: options.namedIn, specifier, resolved, rule: 'adapter module loads' },
      { cause: e },
    );
  }
  let values: unknown[];
  try {
    values = await adapterCandidates(mod);
  } catch (e) {
    throw new ProfkitError(
      DiscoveryErrorCodes.ADAPTER_LOAD,
      `the adapter factory exported by "${specifier}" (${resolved}) named in ${options.namedIn} failed: ${(e as Error)?.message ?? String(e)}`,
      { file: options.namedIn, specifier, resolved, rule: 'adapter factory runs' },
      { cause: e },
    );
  }
  if (values.length === 0) {
    throw new ProfkitError(ErrorCodes.ADAPTER_SHAPE, `adapter module "${specifier}" (${resolved}) named in ${options.namedIn} exports no adapter`, {
      file: options.namedIn,
      specifier,
      rule: 'adapter module exports an adapter',
    });
  }
  return { values, resolved };
}

function registerAll(registry: Registry, values: unknown[], source: AdapterSource): Adapter[] {
  return values.map((v) => registerNamed(registry, v, { source }));
}

/** Registers one adapter; a registration error (a duplicate name...) names where the adapter was named. */
function registerNamed(registry: Registry, value: unknown, options: RegisterOptions & { source: AdapterSource }): Adapter {
  try {
    return registry.register(value, options);
  } catch (e) {
    if (isProfkitError(e)) throw e.withDetail({ file: options.source.from, specifier: options.source.specifier });
    throw e;
  }
}

/**
 * The installed package a config entry names (a bare package name, no subpath) when its
 * package.json declares its adapters statically (`"profkit"`), found as `loadAdapterModule`
 * would find it: the first folder of `fromDirs` from which its entry module resolves. Undefined
 * for anything else (a path, a subpath, a package without the field, one that is not installed
 * or whose package.json or entry is broken): such an entry is imported at start as before, so
 * that a config naming a missing or broken package fails there, with the same error.
 */
function declaredPackage(specifier: string, fromDirs: string[]): { pkg: DiscoveredPackage; json: Record<string, unknown>; adapters: StaticAdapterMetadata[]; resolved: string } | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('file:') || isAbsolute(specifier)) return undefined;
  const parsed = splitPackageSpecifier(specifier);
  if (!parsed || parsed.subpath !== '.') return undefined;
  try {
    for (const from of fromDirs) {
      const resolved = resolveModule(specifier, from);
      if (!resolved) continue;
      const dir = findPackageDir(parsed.name, from)!;
      const json = readPackageJson(dir) ?? {};
      const adapters = staticAdapterMetadata(json);
      return adapters ? { pkg: { name: parsed.name, dir }, json, adapters, resolved } : undefined;
    }
  } catch {
    // an unreadable package.json: the import at start reports it
  }
  return undefined;
}

/** A name that discovery considers: `@profkit/*` or `[@scope/]profkit-adapter-*`. */
export function isCandidatePackageName(name: string): boolean {
  return /^@profkit\/[^/]+$/.test(name) || /^(@[^/]+\/)?profkit-adapter-[^/]+$/.test(name);
}

/** Nearest package.json from `startDir` upwards. */
export function findProjectPackageJson(startDir: string): string | undefined {
  let dir = resolve(startDir);
  for (;;) {
    const p = join(dir, 'package.json');
    if (isFile(p)) return p;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

export interface DiscoveredPackage {
  name: string;
  dir: string;
}

/**
 * Lists the adapter packages a project depends on: candidates named in its package.json's
 * `dependencies`, `devDependencies`, `optionalDependencies` and `peerDependencies`, installed,
 * whose own package.json lists the `profkit-adapter` keyword. Reads the dependency lists, never
 * scans node_modules.
 */
export function discoverAdapterPackages(projectPackageJson: string): { packages: DiscoveredPackage[]; skipped: { name: string; why: string }[] } {
  const projectDir = dirname(projectPackageJson);
  const pkg = readPackageJson(projectDir) ?? {};
  const names = new Set<string>();
  for (const field of ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies']) {
    const deps = pkg[field];
    if (deps && typeof deps === 'object') for (const n of Object.keys(deps)) if (isCandidatePackageName(n)) names.add(n);
  }
  const packages: DiscoveredPackage[] = [];
  const skipped: { name: string; why: string }[] = [];
  for (const name of [...names].sort()) {
    const dir = findPackageDir(name, projectDir);
    if (!dir) {
      skipped.push({ name, why: 'not installed' });
      continue;
    }
    const meta = readPackageJson(dir) ?? {};
    const keywords = Array.isArray(meta.keywords) ? meta.keywords : [];
    if (!keywords.includes(ADAPTER_KEYWORD)) {
      skipped.push({ name, why: `no "${ADAPTER_KEYWORD}" keyword` });
      continue;
    }
    packages.push({ name, dir });
  }
  return { packages, skipped };
}

/**
 * The `node_modules` folders Node's resolution would search from each of `startDirs` (the folder's
 * own, then each ancestor's), nearest first, each listed once; only folders that exist.
 */
export function nodeModulesFolders(startDirs: string[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const start of startDirs) {
    let dir = resolve(start);
    for (;;) {
      const nm = basename(dir) === 'node_modules' ? dir : join(dir, 'node_modules');
      if (!seen.has(nm)) {
        seen.add(nm);
        if (isDir(nm)) out.push(nm);
      }
      const parent = dirname(dir);
      if (parent === dir) break;
      dir = parent;
    }
  }
  return out;
}

/**
 * Where discovery keeps what it found in a `node_modules` folder between runs (the CLI: one file
 * per folder in its cache folder, see packages/cli/src/fast-start.ts). `get` returns the text
 * `set` last stored for `folder` (or undefined); discovery checks it before using it.
 */
export interface DiscoveryCache {
  get(folder: string): string | undefined;
  set(folder: string, text: string): void;
}

/** Version of the text a `DiscoveryCache` holds (another version is ignored). 2: packages carry `declared`. */
const DISCOVERY_CACHE_VERSION = 2;

/**
 * A change younger than this (ms) may be followed, within the file system's timestamp tick, by
 * another that leaves the same mtime (Linux stamps with a clock of a few ms): a folder or file
 * changed that recently is not remembered, so the next run scans again (git's "racy" rule).
 */
const RACY_CHANGE_MS = 2000;

/**
 * Files that package managers rewrite on every install into a `node_modules` folder, also when
 * they update a package's files in place (which leaves the folder's own mtime alone).
 */
const INSTALL_MARKER_FILES = ['.package-lock.json', '.yarn-integrity', '.modules.yaml', '.yarn-state.yml'];

/**
 * A path's identity and last change (inode, size, mtime, ctime; `-` when absent): a rewrite, rename
 * or replacement changes it.
 *
 * The inode is exact: plain stats give it as a double, which rounds inode numbers past 2^53 (XFS,
 * btrfs, NFS and overlay file systems can hand them out), so a replacement whose inode differs in
 * the rounded bits would look unchanged. A rounded inode is never a safe integer; only then is
 * the path read again with bigint stats (plain stats of the ~60 paths cost a third of bigint
 * ones on every start). The CLI's fast start signs its files the same way (`statSignature`).
 */
function changeSignature(path: string): { sig: string; racy: boolean } {
  let st: ReturnType<typeof statSync>;
  let ino: number | bigint | undefined;
  try {
    st = statSync(path, { throwIfNoEntry: false });
    ino = st === undefined || Number.isSafeInteger(st.ino) ? st?.ino : statSync(path, { bigint: true, throwIfNoEntry: false })?.ino;
  } catch {
    st = undefined;
  }
  if (!st || ino === undefined) return { sig: '-', racy: false };
  return { sig: `${ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`, racy: Math.max(st.mtimeMs, st.ctimeMs) > Date.now() - RACY_CHANGE_MS };
}

/**
 * An adapter package found in a `node_modules` folder, with the package.json fields that lazy
 * registration reads (`name`, `version`, `"profkit"`) as parsed when the folder was scanned: its
 * package.json's change signature is one of the scan's checks, so a remembered scan's fields are
 * the file's, and a start does not read and parse every adapter's package.json again.
 */
interface InstalledAdapterPackage extends DiscoveredPackage {
  /** Absent in an entry remembered without it: the package.json is read then. */
  declared?: Record<string, unknown>;
}

/** The package.json fields an `InstalledAdapterPackage` keeps. */
const DECLARED_FIELDS = ['name', 'version', 'profkit'] as const;

/** What discovery found in one `node_modules` folder, and the paths whose change signatures vouch for it. */
interface FolderScan {
  packages: InstalledAdapterPackage[];
  /** [path, change signature]: the folder, its `@scope` folders, install markers, the adapters' and linked packages' package.json. */
  checks: [string, string][];
  /** False when something checked changed too recently to be remembered (`RACY_CHANGE_MS`). */
  cacheable: boolean;
}

/**
 * Lists the adapter packages in one `node_modules` folder (reading every package's package.json).
 * A package is looked at through the folder listing: adding, removing or replacing one changes the
 * mtime of the folder (or of its `@scope` folder); its package.json is also checked when it is an
 * adapter (edited in place, it must still be seen) or a link (a workspace or `npm link` package,
 * whose files change without its `node_modules` folder changing).
 */
function scanNodeModules(nodeModules: string): FolderScan {
  const packages: InstalledAdapterPackage[] = [];
  const watched: string[] = [nodeModules, ...INSTALL_MARKER_FILES.map((f) => join(nodeModules, f))];
  const list = (dir: string) => {
    try {
      return readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    } catch {
      return [];
    }
  };
  const consider = (name: string, dir: string, linked: boolean) => {
    const declared = adapterPackageJson(dir);
    if (declared) packages.push({ name, dir, declared });
    if (declared || linked) watched.push(join(dir, 'package.json'));
  };
  for (const entry of list(nodeModules)) {
    if (entry.name.startsWith('.')) continue; // .bin, .package-lock.json, .cache
    if (entry.name.startsWith('@')) {
      const scopeDir = join(nodeModules, entry.name);
      watched.push(scopeDir);
      for (const sub of list(scopeDir)) if (!sub.name.startsWith('.')) consider(`${entry.name}/${sub.name}`, join(scopeDir, sub.name), sub.isSymbolicLink());
    } else {
      consider(entry.name, join(nodeModules, entry.name), entry.isSymbolicLink());
    }
  }
  let cacheable = true;
  const checks = watched.map((path): [string, string] => {
    const { sig, racy } = changeSignature(path);
    if (racy) cacheable = false;
    return [path, sig];
  });
  return { packages, checks, cacheable };
}

/** The adapter packages of `nodeModules` as remembered in `cache`, when every checked path is unchanged; else undefined. */
function cachedScan(nodeModules: string, cache: DiscoveryCache): InstalledAdapterPackage[] | undefined {
  let entry: { v?: unknown; folder?: unknown; checks?: unknown; packages?: unknown };
  try {
    const text = cache.get(nodeModules);
    if (text === undefined) return undefined;
    entry = JSON.parse(text) as typeof entry;
  } catch {
    return undefined;
  }
  if (!entry || entry.v !== DISCOVERY_CACHE_VERSION || entry.folder !== nodeModules || !Array.isArray(entry.checks) || !Array.isArray(entry.packages)) return undefined;
  for (const check of entry.checks as unknown[]) {
    if (!Array.isArray(check) || typeof check[0] !== 'string' || changeSignature(check[0]).sig !== check[1]) return undefined;
  }
  const packages = entry.packages as InstalledAdapterPackage[];
  // Only packages of this folder (an entry is never a path elsewhere, whatever the file says).
  const valid = (p: InstalledAdapterPackage) =>
    p && typeof p.name === 'string' && isPackageFolderName(p.name) && p.dir === join(nodeModules, p.name) && (p.declared === undefined || (typeof p.declared === 'object' && p.declared !== null && !Array.isArray(p.declared)));
  return packages.every(valid) ? packages : undefined;
}

/** A folder name of `node_modules`: `name` or `@scope/name`, no `.`/`..` parts. */
function isPackageFolderName(name: string): boolean {
  return /^(@[^/\\.][^/\\]*\/)?[^/\\.@][^/\\]*$/.test(name);
}

/**
 * When the package.json at `dir` lists the adapter keyword: its `DECLARED_FIELDS`; undefined when
 * it does not, or is absent or unreadable.
 */
function adapterPackageJson(dir: string): Record<string, unknown> | undefined {
  let text: string;
  try {
    text = readFileSync(join(dir, 'package.json'), 'utf8');
  } catch {
    return undefined;
  }
  // Most packages never mention the keyword: skip parsing their package.json.
  if (!text.includes(ADAPTER_KEYWORD)) return undefined;
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined; // a broken unrelated package must not stop the CLI
  }
  if (!json || !Array.isArray(json.keywords) || !json.keywords.includes(ADAPTER_KEYWORD)) return undefined;
  const declared: Record<string, unknown> = {};
  for (const field of DECLARED_FIELDS) if (json[field] !== undefined) declared[field] = json[field];
  return declared;
}

/**
 * Lists the installed adapter packages (package.json `keywords` lists `profkit-adapter`) in the
 * `node_modules` folders searched from `startDirs` (see `nodeModulesFolders`), reading only
 * package.json files. A name found in several folders is listed once, from the nearest folder.
 *
 * With `cache`, a folder's result is remembered with the change signatures of what would change
 * when a package is added, removed, replaced or edited (see `scanNodeModules`), and reused while
 * they all match: ~60 stats instead of reading every package.json (315 in this repository, ~10 ms).
 */
export function findInstalledAdapterPackages(startDirs: string[], cache?: DiscoveryCache): DiscoveredPackage[] {
  return installedAdapterPackages(startDirs, cache).map(({ name, dir }) => ({ name, dir }));
}

/** `findInstalledAdapterPackages` with the package.json fields lazy registration reads. */
function installedAdapterPackages(startDirs: string[], cache?: DiscoveryCache): InstalledAdapterPackage[] {
  const found = new Map<string, InstalledAdapterPackage>();
  for (const nm of nodeModulesFolders(startDirs)) {
    let packages = cache ? cachedScan(nm, cache) : undefined;
    if (!packages) {
      const scan = scanNodeModules(nm);
      packages = scan.packages;
      if (cache && scan.cacheable) {
        try {
          cache.set(nm, JSON.stringify({ v: DISCOVERY_CACHE_VERSION, folder: nm, checks: scan.checks, packages }));
        } catch {
          // the cache is optional
        }
      }
    }
    for (const p of packages) if (!found.has(p.name)) found.set(p.name, p);
  }
  return [...found.values()];
}

// ---------------------------------------------------------------------------------------------
// Static adapter metadata (package.json `"profkit"`), for lazy loading.

/** One adapter as its package.json declares it: `{"profkit": {"adapters": [this, ...]}}`. */
export interface StaticAdapterMetadata {
  /** The adapter's `name`. */
  name: string;
  description?: string;
  priority?: number;
  /** The adapter's `formats`, exactly as its module declares them. */
  formats: FormatInfo[];
  /**
   * `"./dist/sniff.js#sniffPprof"`: a module of the package (a path inside it) and the named
   * export that is the adapter's `sniff`. Absent: the adapter never sniffs (score 0).
   */
  sniff?: string;
  /**
   * What every head the sniff can score above 0 starts with (see `StaticSniffMagic`). With it, the
   * sniff module is imported only when an input's head starts so: for any other input the score is
   * 0 without running (or importing) anything.
   */
  magic?: StaticSniffMagic;
}

/**
 * An adapter's sniffing magic, declared in package.json: a promise that its `sniff` scores 0 for
 * every head (inflated when gzip) that starts with none of `prefixes`, whatever the file name.
 * `{"prefixes": ["{"], "skipLeadingSpace": true}` says so of a JSON format.
 */
export interface StaticSniffMagic {
  /** Byte strings, one character per byte (U+0000–U+00FF; `"\u001f\u008b"` for bytes 1f 8b). */
  prefixes: string[];
  /** Compare after a UTF-8 byte order mark and ASCII white space (space, tab, CR, LF): text formats. */
  skipLeadingSpace?: boolean;
}

/** The most prefixes a `magic` may list, and the longest prefix (a head is 4 KiB; magic is a few bytes). */
const MAX_MAGIC_PREFIXES = 32;
const MAX_MAGIC_PREFIX_LENGTH = 64;

function isStaticSniffMagic(m: unknown): m is StaticSniffMagic {
  if (!m || typeof m !== 'object') return false;
  const { prefixes, skipLeadingSpace } = m as Partial<StaticSniffMagic>;
  if (skipLeadingSpace !== undefined && typeof skipLeadingSpace !== 'boolean') return false;
  return (
    Array.isArray(prefixes) &&
    prefixes.length > 0 &&
    prefixes.length <= MAX_MAGIC_PREFIXES &&
    prefixes.every((x) => typeof x === 'string' && x.length > 0 && x.length <= MAX_MAGIC_PREFIX_LENGTH && !/[^\u0000-\u00ff]/.test(x))
  );
}

/** True when `head` starts with one of `magic.prefixes` (after a BOM and white space, when `skipLeadingSpace`). */
export function headMatchesMagic(head: Uint8Array, magic: StaticSniffMagic): boolean {
  let at = 0;
  if (magic.skipLeadingSpace) {
    if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) at = 3;
    while (at < head.length && (head[at] === 0x20 || head[at] === 0x09 || head[at] === 0x0d || head[at] === 0x0a)) at++;
  }
  return magic.prefixes.some((prefix) => {
    if (head.length - at < prefix.length) return false;
    for (let i = 0; i < prefix.length; i++) if (head[at + i] !== prefix.charCodeAt(i)) return false;
    return true;
  });
}

/**
 * The most adapters a `"profkit"` field may declare (a package has a handful). A longer list is
 * ignored (the package is imported instead): each entry costs a stand-in and a sniff import at
 * start, so a package.json listing 200 000 of them took 5 s and 200 MB before failing.
 */
const MAX_STATIC_ADAPTERS = 64;

/** The `"profkit"` field's adapters; undefined when the field is absent, not of this shape, or too long. */
export function staticAdapterMetadata(pkg: Record<string, unknown>): StaticAdapterMetadata[] | undefined {
  const field = pkg.profkit as { adapters?: unknown } | undefined;
  if (!field || typeof field !== 'object' || !Array.isArray(field.adapters) || field.adapters.length === 0) return undefined;
  if (field.adapters.length > MAX_STATIC_ADAPTERS) return undefined;
  for (const a of field.adapters as Partial<StaticAdapterMetadata>[]) {
    if (!a || typeof a !== 'object' || typeof a.name !== 'string' || !Array.isArray(a.formats)) return undefined;
    if (a.sniff !== undefined && (typeof a.sniff !== 'string' || !/^\.\/[^#]+#[A-Za-z_$][\w$]*$/.test(a.sniff))) return undefined;
    if (a.magic !== undefined && !isStaticSniffMagic(a.magic)) return undefined;
  }
  return field.adapters as StaticAdapterMetadata[];
}

type SniffFunction = (head: Uint8Array, hints: SniffHints) => SniffResult;

/** The real path of the sniff module a static entry names (`./path#export`, inside `pkgDir`); throws when it is outside the package or missing. */
function staticSniffFile(pkgDir: string, spec: string): string {
  const path = spec.slice(0, spec.indexOf('#'));
  const file = resolve(pkgDir, path);
  if (!file.startsWith(resolve(pkgDir) + sep)) throw new Error(`sniff module ${path} is outside the package`);
  // The system's realpath (one call) rather than Node's JavaScript one (an lstat per path part):
  // every start resolves each adapter's sniff module, ~0.1 ms each the JavaScript way.
  return realpathSync.native(file);
}

/** Imports the sniff function a static entry names (`./path#export`, inside `pkgDir`). */
async function importStaticSniff(pkgDir: string, spec: string): Promise<SniffFunction> {
  const [path, name] = spec.split('#') as [string, string];
  const mod = (await import(pathToFileURL(staticSniffFile(pkgDir, spec)).href)) as Record<string, unknown>;
  const fn = mod[name];
  if (typeof fn !== 'function') throw new Error(`${path} exports no function ${name}`);
  return fn as SniffFunction;
}

/**
 * The sniff of a static entry with `magic`: 0 at once for a head that does not match it; for one
 * that does, the function of the sniff module, which `prepare(head)` imports first (the registry's
 * `prepareSniffs`, before it detects). Its file must exist now (a missing one makes the caller
 * import the package instead, as for an entry without magic); a module that fails to import later
 * (or lacks the export) is replaced by `fallback`, the sniff of the package's own adapter, as a
 * broken sniff module at registration is; when that fails too, the sniff throws (detection
 * reports the score as 0, "sniff threw").
 */
function magicGatedSniff(
  pkgDir: string,
  spec: string,
  magic: StaticSniffMagic,
  fallback: () => Promise<SniffFunction>,
): { sniff: SniffFunction; prepare: (head: Uint8Array) => Promise<void> | undefined } {
  staticSniffFile(pkgDir, spec);
  let loaded: SniffFunction | undefined;
  let failure: unknown;
  let importing: Promise<void> | undefined;
  return {
    sniff(head, hints) {
      if (!headMatchesMagic(head, magic)) return 0;
      if (loaded) return loaded(head, hints);
      throw failure ?? new Error(`the sniff module ${spec} is not imported yet (await registry.prepareSniffs(head) before a synchronous detect)`);
    },
    prepare(head) {
      if (loaded || failure !== undefined || !headMatchesMagic(head, magic)) return undefined;
      return (importing ??= importStaticSniff(pkgDir, spec)
        .catch((e: unknown) => fallback().catch(() => Promise.reject(e)))
        .then(
          (fn) => void (loaded = fn),
          (e: unknown) => void (failure = e),
        ));
    },
  };
}

/** A stand-in, how to import the real adapter, and (with magic) how to import its sniff module for a head. */
interface LazyStandIn {
  standIn: Adapter;
  loadReal: () => Promise<Adapter>;
  prepareSniff?: (head: Uint8Array) => Promise<void> | undefined;
}

/**
 * Lazy stand-ins for the adapters a package declares statically: their formats, description and
 * priority from package.json, `sniff` from the small sniff module, `load` importing the package's
 * main module (once per package) for the real adapter's codec. Each comes with `loadReal`, which
 * the registry calls to swap the stand-in for the real adapter.
 */
async function lazyStandIns(
  p: DiscoveredPackage,
  pkg: Record<string, unknown>,
  entries: StaticAdapterMetadata[],
  importFrom: LoadAdapterOptions,
): Promise<LazyStandIn[]> {
  let moduleValues: Promise<{ values: unknown[]; resolved: string }> | undefined;
  const realAdapter = async (name: string): Promise<Adapter> => {
    moduleValues ??= loadAdapterModule(p.name, importFrom);
    const { values, resolved } = await moduleValues;
    const found = values.find((v) => v && typeof v === 'object' && (v as { name?: unknown }).name === name);
    if (!found) {
      throw new ProfkitError(ErrorCodes.ADAPTER_SHAPE, `${p.name}'s package.json declares adapter "${name}" but its module (${resolved}) exports no adapter of that name`, {
        file: join(p.dir, 'package.json'),
        rule: 'static adapter metadata matches the module',
      });
    }
    return checkAdapter(found, p.name);
  };
  const out: LazyStandIn[] = [];
  for (const e of entries) {
    // With magic, the sniff module waits for a head that matches it (most inputs are not of this
    // adapter's format: a third-party adapter's sniff was a module import on every start).
    let real: Promise<Adapter> | undefined;
    const loadReal = () => (real ??= realAdapter(e.name));
    const realSniff = async (): Promise<SniffFunction> => {
      const a = await loadReal();
      return (head, hints) => a.sniff(head, hints);
    };
    const gated = e.sniff && e.magic ? magicGatedSniff(p.dir, e.sniff, e.magic, realSniff) : undefined;
    const sniff = gated ? gated.sniff : e.sniff ? await importStaticSniff(p.dir, e.sniff) : () => 0;
    const standIn = defineAdapter({
      name: e.name,
      packageName: typeof pkg.name === 'string' ? pkg.name : p.name,
      version: typeof pkg.version === 'string' ? pkg.version : undefined,
      description: e.description,
      priority: e.priority,
      formats: e.formats,
      sniff,
      load: async () => {
        const a = await loadReal();
        return a.load ? await a.load() : { read: a.read!, write: a.write };
      },
    });
    // A malformed declaration (formats of the wrong shape...) fails here, so the caller imports
    // the package instead, as for a broken sniff module, rather than failing at registration.
    checkAdapter(standIn, p.name);
    out.push({ standIn, loadReal, ...(gated ? { prepareSniff: gated.prepare } : {}) });
  }
  return out;
}

export interface BuildRegistryOptions extends RegistryOptions {
  /**
   * Register discovered packages that declare their adapters in package.json (`"profkit"`) as
   * lazy stand-ins instead of importing them (see the file comment). Default false: every
   * adapter is imported, so `commands()` and `transforms()` are complete at once.
   */
  lazy?: boolean;
  /** Working directory (config search start, `--adapter` resolution); default `process.cwd()`. */
  cwd?: string;
  /** An explicit config file; `false` skips config files entirely. */
  config?: string | false;
  /** Adapters registered programmatically, before everything else. */
  adapters?: Adapter[];
  /** `--adapter` specifiers, resolved from `cwd`. */
  adapterSpecifiers?: string[];
  /**
   * Discovery of installed adapter packages: `true` forces it on, `false` off; by default it is
   * on unless the config file says `"autoDiscover": false`.
   */
  discover?: boolean;
  /** Folders tried after the config's folder / cwd (e.g. the CLI's own install). */
  fallbackDirs?: string[];
  /** Remembers what discovery found in each `node_modules` folder between runs (see `DiscoveryCache`). */
  discoveryCache?: DiscoveryCache;
}

export interface BuildRegistryResult {
  registry: Registry;
  /** The config file used, if any. */
  config?: LoadedConfig;
  /** Non-fatal findings (a discovered package that failed to load...). */
  warnings: { code: string; message: string }[];
}

/**
 * Builds a registry from programmatic adapters, the config file, `--adapter` specifiers and
 * (opt-in) package.json discovery, recording each adapter's source. Errors loading a named
 * adapter say which specifier and from where.
 */
export async function buildRegistry(options: BuildRegistryOptions = {}): Promise<BuildRegistryResult> {
  const cwd = resolve(options.cwd ?? process.cwd());
  const registry = new Registry([], { validator: options.validator, files: nodeFileAccess });
  const warnings: BuildRegistryResult['warnings'] = [];
  const fallbacks = (options.fallbackDirs ?? []).map((d) => resolve(d));
  const loadedFiles = new Set<string>();

  for (const a of options.adapters ?? []) registry.register(a, { source: { kind: 'programmatic' } });

  let config: LoadedConfig | undefined;
  if (options.config !== false) {
    const path = options.config !== undefined ? resolve(cwd, options.config) : findConfigFile(cwd);
    if (path) config = await loadConfigFile(path);
  }
  if (config) {
    const dir = dirname(config.path);
    for (const entry of config.adapters) {
      if (typeof entry === 'string') {
        const importFrom = { fromDirs: uniq([dir, ...fallbacks]), namedIn: config.path };
        const declared = options.lazy ? declaredPackage(entry, importFrom.fromDirs) : undefined;
        if (declared) {
          let standIns: Awaited<ReturnType<typeof lazyStandIns>> | undefined;
          try {
            standIns = await lazyStandIns(declared.pkg, declared.json, declared.adapters, importFrom);
          } catch (e) {
            warnings.push(staticFieldUnusable(declared.pkg.dir, e));
          }
          if (standIns) {
            loadedFiles.add(realpathSync(declared.resolved));
            const source: AdapterSource = { kind: 'config', specifier: entry, from: config.path, resolved: declared.resolved };
            for (const { standIn, loadReal, prepareSniff } of standIns) registerNamed(registry, standIn, { source, loadReal, prepareSniff });
            continue;
          }
        }
        const { values, resolved } = await loadAdapterModule(entry, importFrom);
        loadedFiles.add(realpathSync(resolved));
        registerAll(registry, values, { kind: 'config', specifier: entry, from: config.path, resolved });
      } else {
        registerAll(registry, await adapterCandidates(entry), { kind: 'config', from: config.path });
      }
    }
  }

  for (const spec of options.adapterSpecifiers ?? []) {
    const { values, resolved } = await loadAdapterModule(spec, { fromDirs: uniq([cwd, ...fallbacks]), namedIn: `--adapter ${spec}` });
    loadedFiles.add(realpathSync(resolved));
    registerAll(registry, values, { kind: 'flag', specifier: spec, from: '--adapter', resolved });
  }

  // Installed adapters that are not registered (discovery off, or loading failed): the registry's
  // hints then say "installed but not loaded" instead of "not installed".
  const discoverOn = options.discover ?? config?.autoDiscover ?? true;
  const configDir = config ? [dirname(config.path)] : [];
  const installed = installedAdapterPackages(uniq([cwd, ...configDir, ...fallbacks]), options.discoveryCache);
  const loadedNames = new Set(registry.list().map((e) => e.adapter.packageName ?? e.source.specifier));
  for (const p of installed) {
    if (!discoverOn) {
      const why = config && !config.autoDiscover && options.discover === undefined ? `"autoDiscover": false in ${config.path}` : 'discovery is off (--no-discover, or discover: false)';
      registry.unloadedPackages.set(p.name, `installed in ${p.dir} but not loaded: ${why}`);
      continue;
    }
    if (loadedNames.has(p.name)) continue;
    try {
      const pkg = options.lazy ? (p.declared ?? readPackageJson(p.dir)) : undefined;
      const declared = pkg ? staticAdapterMetadata(pkg) : undefined;
      let standIns: Awaited<ReturnType<typeof lazyStandIns>> | undefined;
      if (pkg && declared) {
        try {
          standIns = await lazyStandIns(p, pkg, declared, { fromDirs: [projectDirOf(p)], namedIn: p.dir });
        } catch (e) {
          // A broken sniff declaration must not cost the adapter: import it as without the field.
          warnings.push(staticFieldUnusable(p.dir, e));
        }
      }
      if (standIns) {
        for (const { standIn, loadReal, prepareSniff } of standIns) {
          const existing = registry.get(standIn.name);
          if (existing) {
            // As for imported adapters: the same adapter configured from another copy is no news.
            if (existing.packageName !== p.name) warnings.push({ code: 'PROFKIT_W_DISCOVER_SHADOWED', message: `discovered adapter ${standIn.name} from ${p.name} (${p.dir}) is shadowed by an adapter of the same name registered earlier` });
            continue;
          }
          registry.register(standIn, { source: { kind: 'discovered', specifier: p.name, from: p.dir }, loadReal, prepareSniff });
        }
        continue;
      }
      const { values, resolved } = await loadAdapterModule(p.name, { fromDirs: [projectDirOf(p)], namedIn: p.dir });
      const real = realpathSync(resolved);
      if (loadedFiles.has(real)) continue;
      loadedFiles.add(real);
      for (const v of values) {
        const name = v && typeof v === 'object' ? (v as { name?: unknown }).name : undefined;
        const existing = typeof name === 'string' ? registry.get(name) : undefined;
        if (existing) {
          // The same adapter configured from another copy is no news; another package using the name is.
          if (existing.packageName !== p.name) {
            warnings.push({ code: 'PROFKIT_W_DISCOVER_SHADOWED', message: `discovered adapter ${name} from ${p.name} (${p.dir}) is shadowed by an adapter of the same name registered earlier` });
          }
          continue;
        }
        registry.register(v, { source: { kind: 'discovered', specifier: p.name, from: p.dir, resolved } });
      }
    } catch (e) {
      const msg = isProfkitError(e) ? e.message : (e as Error)?.message ?? String(e);
      registry.unloadedPackages.set(p.name, `installed in ${p.dir} but could not be loaded: ${msg}`);
      warnings.push({ code: 'PROFKIT_W_DISCOVER_FAILED', message: `discovered package ${p.name} (${p.dir}) could not be registered: ${msg}` });
    }
  }

  return { registry, config, warnings };
}

/** The warning for a package whose `"profkit"` field cannot be used (its sniff module fails to import): it is imported instead. */
function staticFieldUnusable(pkgDir: string, error: unknown): { code: string; message: string } {
  return {
    code: 'PROFKIT_W_DISCOVER_STATIC',
    message: `the "profkit" field of ${join(pkgDir, 'package.json')} cannot be used (${(error as Error)?.message ?? String(error)}); the adapter is imported instead`,
  };
}

/** The folder whose `node_modules` holds an installed package (where Node resolves it from). */
function projectDirOf(p: DiscoveredPackage): string {
  return dirname(p.dir.slice(0, p.dir.length - p.name.length - 1));
}

function uniq(dirs: string[]): string[] {
  return [...new Set(dirs)];
}
