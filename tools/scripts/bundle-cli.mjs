#!/usr/bin/env node
/**
 * Builds the CLI's start-up bundle (issue 16 item 4): `packages/cli/dist/bundle/cli.cjs`, one script
 * with the CLI, both entries of @profkit/core and the entry and static sniff module of every
 * first-party adapter package that is built, plus `manifest.json`, the SHA-1 of every file that
 * went into it. `dist/bin.cjs` (src/fast-start.cts) runs the bundle through a V8 code cache only
 * while those files are byte for byte what is on disk, so a `tsc -b` after this script never runs
 * stale code: it only makes the start slower until the next `npm run build`.
 *
 * Run by the CLI's `build` script (nx build, `npm run build`, `prepare`) after `tsc -b`. Skips
 * (and deletes an old bundle) when esbuild is not installed: the CLI then starts unbundled.
 *
 * Dynamic `import()` cannot run inside a `vm.Script` on Node 20 without --experimental-vm-modules,
 * so the bundle's dynamic imports (discovery's adapter modules, the CLI's lazy npm dependencies)
 * are renamed to `__profkitImport(...)`, a function fast-start.cts passes in.
 */

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import vm from 'node:vm';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const cliDir = join(repoRoot, 'packages/cli');
const outDir = join(cliDir, 'dist/bundle');
const IMPORT_FUNCTION = '__profkitImport';
const IMPORT_META_URL = '__profkitImportMetaUrl';
const LAZY_BUILTIN = '__profkitBuiltin';

/** The Node built-in `id`, required on the first read of one of its properties (why: where the bundle is post-processed below). */
const lazyBuiltin = `function ${LAZY_BUILTIN}(id) {
  let m;
  const load = () => (m ??= require(id));
  return new Proxy({}, {
    get: (_, key) => load()[key],
    has: (_, key) => key in load(),
    ownKeys: () => Reflect.ownKeys(load()),
    getOwnPropertyDescriptor: (_, key) => {
      const d = Reflect.getOwnPropertyDescriptor(load(), key);
      return d && { ...d, configurable: true };
    },
  });
}`;

let esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  rmSync(outDir, { recursive: true, force: true });
  process.stderr.write('bundle-cli: esbuild is not installed; the CLI starts unbundled\n');
  process.exit(0);
}

const sha1 = (bytes) => createHash('sha1').update(bytes).digest('hex');
const readJson = (path) => JSON.parse(readFileSync(path, 'utf8'));

/** Every package of the monorepo by folder: name, and the modules discovery imports from it. */
const packages = new Map();
for (const group of ['packages', 'tools']) {
  for (const entry of readdirSync(join(repoRoot, group), { withFileTypes: true })) {
    const dir = join(repoRoot, group, entry.name);
    if (!entry.isDirectory() || !existsSync(join(dir, 'package.json'))) continue;
    const pkg = readJson(join(dir, 'package.json'));
    packages.set(dir, pkg);
  }
}
const packageOf = (file) => {
  for (const [dir, pkg] of packages) if (file.startsWith(dir + sep)) return { dir, pkg };
  return undefined;
};

// The modules the bundle exposes by (package, path in the package): what discovery may import.
const exposed = []; // { name, path, file }
const expose = (dir, pkg, path) => {
  const file = join(dir, path);
  if (existsSync(file)) exposed.push({ name: pkg.name, path: path.replace(/^\.\//, ''), file });
};
const coreDir = join(repoRoot, 'packages/core');
expose(coreDir, packages.get(coreDir), 'dist/index.js');
expose(coreDir, packages.get(coreDir), 'dist/node/index.js');
for (const [dir, pkg] of packages) {
  // First-party adapters: published @profkit packages that declare their adapters statically.
  if (!pkg.name.startsWith('@profkit/') || pkg.private || !pkg.profkit?.adapters) continue;
  for (const a of pkg.profkit.adapters) if (a.sniff) expose(dir, pkg, a.sniff.split('#')[0]);
  // The whole adapter only when it needs no npm package (dm-export's database engines, v8's
  // source-map library stay out: the bundle holds only code whose every file it can check).
  const npmDeps = Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies }).filter((d) => !d.startsWith('@profkit/') && d !== '@types/node');
  if (npmDeps.length) continue;
  const main = typeof pkg.exports?.['.'] === 'object' ? (pkg.exports['.'].import ?? pkg.exports['.'].default) : pkg.main;
  if (typeof main === 'string') expose(dir, pkg, main);
}

const entryLines = [`export { main } from ${JSON.stringify(join(cliDir, 'dist/cli.js'))};`];
const table = [];
// Core's entries as functions that make an object of their exports when first called (a config
// naming core's own file, a third-party module importing @profkit/core through a bridge): an
// `import * as` namespace would be built at every start, a getter per export (~630 for the two
// entries, ~1 ms), though a start almost never reads it. Core's modules run anyway (the CLI
// imports them). The adapters' modules as functions that load them: esbuild evaluates a module
// reached by a literal import() only when it is called, so a start does not run the top-level
// code of adapters the command does not need.
for (const [i, m] of exposed.entries()) {
  if (m.name === '@profkit/core') {
    const names = Object.keys(await import(pathToFileURL(m.file).href));
    const alias = (k) => `m${i}_${k}`;
    entryLines.push(`import { ${names.map((n, k) => `${JSON.stringify(n)} as ${alias(k)}`).join(', ')} } from ${JSON.stringify(m.file)};`);
    entryLines.push(`let m${i}; const entry${i} = () => (m${i} ??= Object.freeze({ __proto__: null, ${names.map((n, k) => `${JSON.stringify(n)}: ${alias(k)}`).join(', ')}, [Symbol.toStringTag]: 'Module' }));`);
    table.push(`[${JSON.stringify(m.name)}, ${JSON.stringify(m.path)}, entry${i}]`);
  } else {
    table.push(`[${JSON.stringify(m.name)}, ${JSON.stringify(m.path)}, () => import(${JSON.stringify(m.file)})]`);
  }
}
entryLines.push(`export const modules = [${table.join(', ')}];`);

/** Absolute path -> SHA-1 of the bytes the bundle was built from (`importMetaUrlByFile` reads every .js file). */
const bundledHashes = new Map();

const tmp = `${outDir}.tmp-${process.pid}`;
rmSync(tmp, { recursive: true, force: true });
mkdirSync(tmp, { recursive: true });
const result = await esbuild.build({
  stdin: { contents: entryLines.join('\n'), resolveDir: cliDir, sourcefile: 'bundle-entry.js', loader: 'js' },
  absWorkingDir: repoRoot,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  write: false,
  metafile: true,
  outfile: join(tmp, 'cli.cjs'),
  // Loaded on demand from the CLI's own node_modules, as the unbundled CLI does.
  external: ['@viz-js/viz', '@resvg/resvg-wasm'],
  plugins: [onlyKnownPackages(), importMetaUrlByFile()],
  // Whitespace and comments out, names kept (error messages and `constructor.name` read them):
  // 1.4 MB -> 1.0 MB, and ASCII only (charset; comments gone), which fast-start.cts reads as
  // latin1: a one-byte string, ~5x faster to read than UTF-8 with the odd "…" in a comment.
  minifyWhitespace: true,
  minifySyntax: true,
  charset: 'ascii',
  logLevel: 'error',
});
let code = result.outputFiles[0].text;
// esbuild keeps a dynamic import() of a computed or external specifier as `import(` (the other
// matches are in comments of re2js; no string in the bundled code contains `import(`).
const dynamicImports = code.match(/(?<![\w$.])import\(/g)?.length ?? 0;
code = code.replace(/(?<![\w$.])import\(/g, `${IMPORT_FUNCTION}(`);
// A bundled module's `import … from 'node:zlib'` becomes `x = require("node:zlib")` run when the
// module is first evaluated, and loading a Node built-in compiles its JavaScript (node:tty brings
// node:net, node:crypto its webcrypto half, node:fs/promises readline…): together ~10 ms of a
// start whose command needs few of them. esbuild reads the bindings only as `x.name`, so a proxy
// that requires the built-in on its first property read (LAZY_BUILTIN, in `wrap`) is the same
// module, loaded when used.
const builtinRequires = code.match(/(?<=[\w$]=)require\("node:[\w/]+"\)/g)?.length ?? 0;
code = code.replace(/(?<=[\w$]=)require\(("node:[\w/]+")\)/g, `${LAZY_BUILTIN}($1)`);
// Any other form (e.g. `__toESM(require("node:fs"))` for a default import) is left as it is:
// required when its module is evaluated, as before.
// The wrapper fast-start.cts compiles; checked here so that a bad bundle fails the build, not the CLI.
new vm.Script(wrap(code), { filename: 'cli.cjs' });

/**
 * Fails the build on an npm package the bundle was not meant to hold: the bundle checks the files
 * of the monorepo's packages before it runs, not those of npm dependencies, so only core's
 * pure-JavaScript ones (bundled at the version installed here) may come in.
 */
function onlyKnownPackages() {
  const allowed = /^(@profkit\/|#|re2js$|pako$|node:|@viz-js\/viz$|@resvg\/resvg-wasm$)/;
  return {
    name: 'only-known-packages',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, (args) => {
        if (allowed.test(args.path) || args.kind === 'entry-point') return undefined;
        if (['fs', 'path', 'os', 'url', 'util', 'zlib', 'stream', 'events', 'crypto', 'child_process', 'module', 'vm', 'net', 'http', 'https', 'tty', 'worker_threads', 'readline', 'buffer', 'assert'].includes(args.path.split('/')[0])) return undefined;
        return { errors: [{ text: `bundle-cli: ${args.importer} imports ${args.path}, an npm package the start-up bundle does not take (add it to the externals or leave its package out)` }] };
      });
    },
  };
}

/**
 * `import.meta.url` of a bundled file becomes `__profkitImportMetaUrl(package, path in package)`:
 * fast-start.cts answers with where that package is installed (web's `new URL('./www/',
 * import.meta.url)`, the CLI's `../package.json` keep pointing at their own package's files).
 */
function importMetaUrlByFile() {
  return {
    name: 'import-meta-url-by-file',
    setup(build) {
      build.onLoad({ filter: /\.js$/ }, (args) => {
        const owner = packageOf(args.path);
        const bytes = readFileSync(args.path);
        // The manifest hashes these very bytes: a file rewritten while the build runs (a
        // concurrent `tsc -b`) then no longer matches, and the bundle is not used.
        bundledHashes.set(args.path, sha1(bytes));
        const text = bytes.toString('utf8');
        if (!owner || !text.includes('import.meta')) return { contents: text, loader: 'js' };
        const path = relative(owner.dir, args.path).split(sep).join('/');
        const replaced = text.replace(/import\.meta\.url\b/g, `${IMPORT_META_URL}(${JSON.stringify(owner.pkg.name)}, ${JSON.stringify(path)})`);
        if (replaced.includes('import.meta')) throw new Error(`bundle-cli: ${args.path} uses import.meta beyond import.meta.url`);
        return { contents: replaced, loader: 'js' };
      });
    },
  };
}

/** The bundle as one function expression (what fast-start.cts compiles and calls). */
function wrap(source) {
  return `(function (exports, require, module, __filename, __dirname, ${IMPORT_META_URL}, ${IMPORT_FUNCTION}) {${lazyBuiltin}\n${source}\n})`;
}


// What went in, by package: the files the manifest checks before the bundle is used.
const inputs = {};
for (const input of Object.keys(result.metafile.inputs)) {
  const file = resolve(repoRoot, input);
  const owner = packageOf(file);
  if (!owner || input.endsWith('bundle-entry.js')) continue; // the generated entry; npm dependencies (re2js) are bundled at the version installed here
  const byPackage = (inputs[owner.pkg.name] ??= { version: owner.pkg.version, files: {} });
  byPackage.files[relative(owner.dir, file).split(sep).join('/')] = bundledHashes.get(file) ?? sha1(readFileSync(file));
}
if (!inputs['@profkit/cli'] || !inputs['@profkit/core']) throw new Error('bundle-cli: the CLI or core is missing from the bundle');

// Modules outside the bundle that import @profkit/core (a third-party adapter, a config file, an
// adapter whose files differ from the bundled ones) get it from these bridges, which re-export the
// bundle's core: one core instance per process (fast-start.cts redirects to them with a resolve hook).
const BUNDLED_CORE = 'profkit.cli.bundledCore';
for (const [entry, bridge] of [['dist/index.js', 'core-index.mjs'], ['dist/node/index.js', 'core-node.mjs']]) {
  const names = Object.keys(await import(pathToFileURL(join(coreDir, entry)).href));
  const named = names.filter((n) => n !== 'default' && /^[A-Za-z_$][\w$]*$/.test(n));
  const lines = [
    '// Written by tools/scripts/bundle-cli.mjs: @profkit/core as the start-up bundle holds it.',
    `const core = globalThis[Symbol.for(${JSON.stringify(BUNDLED_CORE)})][${JSON.stringify(entry)}];`,
    `export const { ${named.join(', ')} } = core;`,
  ];
  if (names.includes('default')) lines.push('export default core.default;');
  writeFileSync(join(tmp, bridge), lines.join('\n') + '\n');
}
const adapterPackages = new Set(exposed.map((m) => m.name).filter((n) => n !== '@profkit/core'));
// Checked before the bundle runs: the CLI and what it imports. The adapter packages are checked
// when discovery first imports one of their modules.
const eager = Object.keys(inputs).filter((n) => !adapterPackages.has(n));
// A module discovery imports is taken from the bundle only when the files of the bundled code it
// can run are what the bundle was built from: its imports, static and dynamic, transitively (the
// eager packages' files are checked anyway, before the bundle runs).
const closureFiles = (file) => {
  const seen = new Set();
  const todo = [relative(repoRoot, file).split(sep).join('/')];
  while (todo.length) {
    const input = todo.pop();
    if (seen.has(input) || !result.metafile.inputs[input]) continue;
    seen.add(input);
    for (const i of result.metafile.inputs[input].imports) if (!i.external) todo.push(i.path);
  }
  const byPackage = {};
  for (const input of [...seen].sort()) {
    const owner = packageOf(resolve(repoRoot, input));
    if (owner && !eager.includes(owner.pkg.name)) (byPackage[owner.pkg.name] ??= []).push(relative(owner.dir, resolve(repoRoot, input)).split(sep).join('/'));
  }
  return byPackage;
};
const wrapped = wrap(code);
writeFileSync(join(tmp, 'cli.cjs'), wrapped);
// ASCII only (esbuild escapes strings; a regular expression or template with a non-ASCII character
// keeps it): fast-start.cts then reads the bundle as latin1, the same string without UTF-8 decoding.
const encoding = /[^\x00-\x7f]/.test(wrapped) ? 'utf8' : 'latin1';
const manifest = {
  comment: 'Written by tools/scripts/bundle-cli.mjs; read by packages/cli/src/fast-start.cts',
  bundle: 'cli.cjs',
  bundleSha1: sha1(wrapped),
  encoding,
  dynamicImports,
  builtinRequires,
  packages: inputs,
  modules: exposed.map((m) => ({ package: m.name, path: m.path, files: closureFiles(m.file) })),
  eager,
  bundledCoreKey: BUNDLED_CORE,
  coreBridges: { 'dist/index.js': 'core-index.mjs', 'dist/node/index.js': 'core-node.mjs' },
  // Each built-in command gets a code cache of its own (fast-start.cts).
  commands: [...(await import(pathToFileURL(join(cliDir, 'dist/commands/lazy.js')).href)).BUILTIN_COMMAND_NAMES],
};
writeFileSync(join(tmp, 'manifest.json'), JSON.stringify(manifest, null, 1) + '\n');
rmSync(outDir, { recursive: true, force: true });
renameSync(tmp, outDir);
const fileCount = Object.values(inputs).reduce((n, p) => n + Object.keys(p.files).length, 0);
process.stderr.write(`bundle-cli: ${relative(repoRoot, join(outDir, 'cli.cjs'))} (${Math.round(wrapped.length / 1024)} KB, ${fileCount} files of ${Object.keys(inputs).length} packages)\n`);
