/**
 * profkit in a real browser (headless Chromium from Debian's `chromium`, driven by
 * playwright-core): a page served from loopback loads one browser bundle of core and every
 * platform-neutral adapter (src/page.ts), fetches each fixture's bytes and reads them there. For
 * every format (pprof gzip and raw, Rprof, gperftools heap/CPU/contention/thread, folded, Fuchsia
 * recordings, speedscope, perf script, V8 CPU and heap profiles) the page's `top` document must
 * equal `profkit top FILE --json` run by the CLI on Node, and the page logs no error. So must
 * that of a page whose bundle holds core and the fixture's adapter only (the lean bundle a user
 * of one format gets, budgeted in test/bundle.test.ts).
 */

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { haveCli, haveSharedFixtures, repoRoot, runCliAsync, sharedFixturePath, sharedFixturesDir } from '@profkit/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleForBrowser } from '../src/bundle.js';

const CHROMIUM = process.env.PROFKIT_CHROMIUM ?? '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`browser-check: chromium not found at ${CHROMIUM} (apt-get install -y chromium, or set PROFKIT_CHROMIUM); the browser tests are skipped`);
const ready = hasChromium && haveCli('browser-check') && haveSharedFixtures('browser-check', '', 'the browser tests are skipped');

const tmp = mkdtempSync(join(tmpdir(), 'profkit-browser-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const shared = (rel: string) => sharedFixturePath(rel);
const own = (rel: string) => join(repoRoot, rel);
const derived = (name: string) => join(tmp, name);

/** [format the CLI detects, path], by format. Derived files are made in beforeAll. */
const FIXTURES: [string, string][] = [
  ['pprof', shared('pprof/internal/report/testdata/sample.cpu')],
  ['pprof', shared('pprof/internal/proftest/testdata/large.cpu')],
  ['pprof', shared('r-profile/inst/samples/proto/1.out.prof.pb.gz')],
  ['pprof', derived('sample.cpu.pb')],
  ['pprof', derived('1.out.prof.pb')],
  ['rprof', shared('r-profile/inst/samples/rprof/1.out')],
  ['rprof', shared('r-profile/inst/samples/rprof/incomplete.out')],
  ['rprof', own('packages/rprof/test/fixtures/grammar.out')],
  ['rprof', own('packages/rprof/test/fixtures/append.out')],
  ['gperftools-heap', shared('pprof/profile/testdata/cppbench.heap')],
  ['gperftools-heap', shared('pprof/profile/testdata/cppbench.growth')],
  ['gperftools-heap', shared('pprof/profile/testdata/java.heap')],
  ['gperftools-heap', shared('pprof/profile/testdata/gobench.heap')],
  ['gperftools-heap', own('packages/gperftools-heap/test/fixtures/warn.heap')],
  ['gperftools-cpu', shared('pprof/profile/testdata/cppbench.cpu')],
  ['gperftools-cpu', shared('pprof/profile/testdata/java.cpu')],
  ['gperftools-cpu', shared('pprof/profile/testdata/gobench.cpu')],
  ['gperftools-contention', shared('pprof/profile/testdata/cppbench.contention')],
  ['gperftools-contention', shared('pprof/profile/testdata/java.contention')],
  ['gperftools-thread', shared('pprof/profile/testdata/cppbench.thread')],
  ['gperftools-thread', shared('pprof/profile/testdata/go.godoc.thread')],
  ['folded', derived('1.out.folded')],
  ['folded', derived('java.cpu.folded')],
  ['fuchsia-sampler', own('packages/fuchsia-sampler/test/fixtures/upstream-example.fsrec')],
  ['fuchsia-sampler', own('packages/fuchsia-sampler/test/fixtures/socket-mixed.fsrec')],
  ['fuchsia-sampler-jsonl', own('packages/fuchsia-sampler/test/fixtures/upstream-example.fsrec.jsonl')],
  ['speedscope', own('tools/adapter-example-speedscope/test/fixtures/sampled.speedscope.json')],
  ['speedscope', own('tools/adapter-example-speedscope/test/fixtures/evented.speedscope.json')],
  ['speedscope', own('packages/speedscope/test/fixtures/0.6.0-two-sampled.speedscope.json')],
  ['perf-script', own('packages/perf/test/fixtures/perf-cycles-instructions-01.txt')],
  ['perf-script', own('packages/perf/test/fixtures/inline-dwarf-srcline.txt')],
  ['v8-cpuprofile', derived('node.cpuprofile')],
  ['v8-heapprofile', derived('node.heapprofile')],
];

/** The package whose adapter reads each format: the page bundled with it alone reads its fixtures. */
const PACKAGE_OF_FORMAT: Readonly<Record<string, string>> = {
  pprof: '@profkit/pprof',
  rprof: '@profkit/rprof',
  folded: '@profkit/rprof',
  'gperftools-heap': '@profkit/gperftools-heap',
  'gperftools-cpu': '@profkit/gperftools-heap',
  'gperftools-contention': '@profkit/gperftools-heap',
  'gperftools-thread': '@profkit/gperftools-heap',
  'fuchsia-sampler': '@profkit/fuchsia-sampler',
  'fuchsia-sampler-jsonl': '@profkit/fuchsia-sampler',
  speedscope: '@profkit/speedscope',
  'perf-script': '@profkit/perf',
  'v8-cpuprofile': '@profkit/v8',
  'v8-heapprofile': '@profkit/v8',
};

/** The page bundles by name: `all` (src/page.ts), and one per adapter package (core and that adapter only). */
const ALL = 'all';
const ONE_ADAPTER_PACKAGES = [...new Set(Object.values(PACKAGE_OF_FORMAT))];
const pageEntryOf = (pkg: string) => `import adapter from '${pkg}';\nimport { installProfkitTop } from './src/page-top.ts';\ninstallProfkitTop([adapter]);`;

/** A fixture's name in the test titles: under the shared fixtures, the repository, or derived. */
function labelOf(path: string): string {
  for (const [prefix, root] of [['shared', sharedFixturesDir()], ['', repoRoot], ['derived', tmp]] as const) {
    const rel = relative(root, path);
    if (!rel.startsWith('..')) return prefix ? `${prefix} ${rel}` : rel;
  }
  return path;
}

/** A CPU and a heap profile of a short Node.js run, written by Node itself (`--cpu-prof`, `--heap-prof`). */
function makeV8Profiles(): void {
  const work = 'let a = []; for (let i = 0; i < 3e5; i++) a.push({ i, s: String(i) }); a = a.map((o) => o.s.length);';
  for (const [flag, name] of [['--cpu-prof', 'node.cpuprofile'], ['--heap-prof', 'node.heapprofile']] as const) {
    const r = spawnSync(process.execPath, [flag, `${flag}-dir=${tmp}`, `${flag}-name=${name}`, '-e', work], { encoding: 'utf8' });
    if (r.status !== 0 || !existsSync(derived(name))) throw new Error(`node ${flag} failed (${r.status}): ${r.stderr}`);
  }
}

/** Raw (uncompressed) pprof from the gzip fixtures, folded stacks written by the CLI, Node's own V8 profiles. */
async function makeDerivedFixtures(): Promise<void> {
  makeV8Profiles();
  writeFileSync(derived('sample.cpu.pb'), gunzipSync(readFileSync(shared('pprof/internal/report/testdata/sample.cpu'))));
  writeFileSync(derived('1.out.prof.pb'), gunzipSync(readFileSync(shared('r-profile/inst/samples/proto/1.out.prof.pb.gz'))));
  for (const [source, out] of [
    [shared('r-profile/inst/samples/rprof/1.out'), derived('1.out.folded')],
    [shared('pprof/profile/testdata/java.cpu'), derived('java.cpu.folded')],
  ] as const) {
    const r = await runCliAsync(['folded', source]);
    if (r.code !== 0) throw new Error(`profkit folded ${source} failed: ${r.stderr}`);
    writeFileSync(out, r.stdout);
  }
}

/** `profkit top FILE --json` without `file` (the page has only the bytes and the name). */
async function cliTop(path: string): Promise<Record<string, unknown>> {
  const r = await runCliAsync(['top', path, '--json']);
  if (r.code !== 0) throw new Error(`profkit top ${path} exited ${r.code}: ${r.stderr}`);
  const { file: _file, ...doc } = JSON.parse(r.stdout) as Record<string, unknown>;
  return doc;
}

/**
 * Serves the pages (`/?bundle=NAME`), their bundles (`/profkit.js?bundle=NAME`) and the fixtures
 * (`/fixture?path=…`, only the listed ones) on loopback.
 */
function startServer(bundles: ReadonlyMap<string, string>): Promise<{ server: Server; origin: string }> {
  const allowed = new Set(FIXTURES.map(([, path]) => path));
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const name = url.searchParams.get('bundle') ?? '';
    if (url.pathname === '/' && bundles.has(name)) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><meta charset="utf-8"><title>profkit browser check</title><link rel="icon" href="data:,"><script type="module" src="/profkit.js?bundle=${encodeURIComponent(name)}"></script>`);
    } else if (url.pathname === '/profkit.js' && bundles.has(name)) {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' });
      res.end(bundles.get(name));
    } else if (url.pathname === '/fixture' && allowed.has(url.searchParams.get('path') ?? '')) {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(readFileSync(url.searchParams.get('path')!));
    } else {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })));
}

describe.skipIf(!ready)('profkit in headless Chromium', () => {
  let browser: Browser | undefined;
  let server: Server | undefined;
  let page: Page;
  let origin: string;
  /** The pages of one adapter each, by package, opened when a test first needs one. */
  const onePackagePages = new Map<string, Promise<Page>>();
  const problems: string[] = [];
  const requests: string[] = [];
  const expected = new Map<string, Promise<Record<string, unknown>>>();

  beforeAll(async () => {
    await makeDerivedFixtures();
    // Started now, two at a time, awaited per test: the CLI runs while the browser starts.
    let previous: [Promise<unknown>, Promise<unknown>] = [Promise.resolve(), Promise.resolve()];
    FIXTURES.forEach(([, path], i) => {
      const run = previous[i % 2]!.then(() => cliTop(path));
      previous[i % 2] = run.catch(() => {});
      expected.set(path, run);
    });
    const bundles = new Map<string, string>();
    for (const [name, input] of [
      [ALL, { entryFile: fileURLToPath(new URL('../src/page.ts', import.meta.url)) }],
      ...ONE_ADAPTER_PACKAGES.map((pkg) => [pkg, { source: pageEntryOf(pkg) }] as const),
    ] as const) {
      const b = await bundleForBrowser(input);
      if (b.errors.length > 0) throw new Error(`the page bundle ${name} does not build for the browser:\n${b.errors.join('\n')}`);
      bundles.set(name, b.code);
    }
    ({ server, origin } = await startServer(bundles));
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    page = await openPage(ALL);
  }, 60_000);

  /** A new page of `browser` that has loaded the bundle `name` (its errors and requests recorded). */
  async function openPage(name: string): Promise<Page> {
    const p = await browser!.newPage();
    p.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`${name}: console ${m.type()}: ${m.text()}`);
    });
    p.on('pageerror', (e) => problems.push(`${name}: pageerror: ${String(e)}`));
    p.on('request', (r) => requests.push(r.url()));
    await p.goto(`${origin}/?bundle=${encodeURIComponent(name)}`);
    try {
      await p.waitForFunction(() => 'profkitTop' in globalThis, undefined, { timeout: 10_000 });
    } catch (e) {
      throw new Error(`the page bundle ${name} did not load: ${String(e)}\n${problems.join('\n')}`);
    }
    return p;
  }

  /** The top document of `on` (a page) for the fixture at `path`, handed to the registry as `kind`. */
  function profkitTop(on: Page, path: string, kind: 'bytes' | 'blob' | 'stream'): Promise<string> {
    type PageGlobals = { profkitTop(url: string, fileName: string, kind: string): Promise<string> };
    return on.evaluate(([url, name, k]) => (globalThis as unknown as PageGlobals).profkitTop(url, name, k), [`${origin}/fixture?path=${encodeURIComponent(path)}`, path, kind] as const);
  }

  afterAll(async () => {
    await browser?.close();
    await new Promise((r) => (server ? server.close(r) : r(undefined)));
  });

  it.each(FIXTURES.map(([format, path]) => [format, labelOf(path), path]))(
    '%s %s: the page reads the bytes and its top table equals the CLI\'s',
    async (format, _label, path) => {
      const want = await expected.get(path)!;
      expect(want.format).toBe(format);
      expect(JSON.parse(await profkitTop(page, path, 'bytes'))).toEqual(want);
      expect(problems).toEqual([]);
    },
  );

  it.each(FIXTURES.map(([format, path]) => [PACKAGE_OF_FORMAT[format]!, labelOf(path), path]))(
    'a page of core and %s only reads %s to the CLI\'s top table',
    async (pkg, _label, path) => {
      if (!onePackagePages.has(pkg)) onePackagePages.set(pkg, openPage(pkg));
      const want = await expected.get(path)!;
      expect(JSON.parse(await profkitTop(await onePackagePages.get(pkg)!, path, 'bytes'))).toEqual(want);
      expect(problems).toEqual([]);
    },
  );

  it.each([
    ['blob', shared('r-profile/inst/samples/proto/1.out.prof.pb.gz')],
    ['stream', shared('pprof/internal/proftest/testdata/large.cpu')],
    ['stream', shared('r-profile/inst/samples/rprof/1.out')],
    ['stream', derived('java.cpu.folded')],
  ].map(([kind, path]) => [kind, labelOf(path!), path] as ['blob' | 'stream', string, string]))('from a %s (%s): the same top table', async (kind, _label, path) => {
    const want = await expected.get(path)!;
    expect(JSON.parse(await profkitTop(page, path, kind))).toEqual(want);
    expect(problems).toEqual([]);
  });

  it("core's gzip seam picked pako in the browser", async () => {
    expect(await page.evaluate(() => (globalThis as unknown as { profkitGzip: string }).profkitGzip)).toBe('pako');
  });

  it('the page asked nothing of the network but its loopback server', () => {
    expect(requests.length).toBeGreaterThan(FIXTURES.length);
    expect(requests.filter((u) => !u.startsWith(origin + '/'))).toEqual([]);
  });
});
