/**
 * profkit web in a real browser (Debian's headless Chromium driven by playwright-core, as in
 * tools/browser-check): the page served by `startWebServer` (what `profkit web FILE` runs) and
 * the static build opened from file:// with a file picked or dropped, for pprof, Rprof and
 * gperftools fixtures. Every number of the top table must be the CLI's (`profkit top FILE
 * --json` for the values, `profkit top FILE` for the printed strings and header) with the same
 * options; the page logs no error and asks for nothing but its own files; the table works from
 * the keyboard; the flame graph zooms and highlights; the call graph is `profkit graph`'s and the
 * source view `profkit list`'s. Screenshots of every view go to PROFKIT_TEST_ARTIFACTS (default:
 * <tmp>/profkit-web-artifacts), never into the repository; with PROFKIT_WEB_DOC_SCREENSHOTS=DIR
 * (`npm run screenshots -w @profkit/web`: DIR is docs/images) the same tests also write the
 * documentation's images, DIR/web-<view>.png.
 */

import { createServer, type Server } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { ProfileBuilder } from '@profkit/core';
import { serializePprof } from '@profkit/pprof';
import { haveCli, haveSharedFixtures, runCliAsync, sharedFixturePath } from '@profkit/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebServer, writeStaticSite, type WebServer } from '../dist/index.js';
import { exactPattern } from '../src/app/state.js';

const CHROMIUM = process.env.PROFKIT_CHROMIUM ?? '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`@profkit/web: chromium not found at ${CHROMIUM} (apt-get install -y chromium, or set PROFKIT_CHROMIUM); the browser tests are skipped`);
const ready = hasChromium && haveCli('@profkit/web browser tests') && haveSharedFixtures('@profkit/web', '', 'the browser tests are skipped');

export const ARTIFACTS = process.env.PROFKIT_TEST_ARTIFACTS ?? join(tmpdir(), 'profkit-web-artifacts');
/** Where the documentation's screenshots go (docs/images), when asked for. */
const DOC_SCREENSHOTS = process.env.PROFKIT_WEB_DOC_SCREENSHOTS;

const FIXTURES = {
  pprof: sharedFixturePath('pprof/internal/report/testdata/sample.cpu'),
  rprof: sharedFixturePath('r-profile/inst/samples/rprof/1.out'),
  heap: sharedFixturePath('pprof/profile/testdata/cppbench.heap'),
  gperfCpu: sharedFixturePath('pprof/profile/testdata/cppbench.cpu'),
  large: sharedFixturePath('pprof/internal/proftest/testdata/large.cpu'),
};

/** One row of the page's top table: the exact values (data attributes) and the printed cells. */
interface PageRow {
  flat: string;
  cum: string;
  cells: string[];
}

interface CliTop {
  header: string[];
  total: string;
  entries: { name: string; flat: string; cum: string; inline: string | null }[];
}

/** `profkit top FILE ARGS --json` and the printed table of `profkit top FILE ARGS`. */
async function cliTop(file: string, args: string[] = []): Promise<{ json: CliTop; lines: string[] }> {
  // Run outside the repository: the workspace's profkit.config.json does not apply.
  const cwd = tmpdir();
  const [j, t] = await Promise.all([runCliAsync(['top', file, ...args, '--json'], { cwd }), runCliAsync(['top', file, ...args], { cwd })]);
  if (j.code !== 0 || t.code !== 0) throw new Error(`profkit top ${file} ${args.join(' ')}: ${j.stderr}${t.stderr}`);
  return { json: JSON.parse(j.stdout) as CliTop, lines: t.stdout.replace(/\n$/, '').split('\n') };
}

async function pageTop(page: Page): Promise<{ header: string; rows: PageRow[] }> {
  return page.evaluate(() => ({
    header: document.querySelector('#top-header')!.textContent ?? '',
    rows: [...document.querySelectorAll<HTMLTableRowElement>('#top-table tbody tr')].map((tr) => ({
      flat: tr.dataset.flat!,
      cum: tr.dataset.cum!,
      cells: [...tr.cells].map((c) => c.textContent ?? ''),
    })),
  }));
}

/** The page's table equals the CLI's: values, names, printed cells and the header lines. */
function expectSameTop(got: { header: string; rows: PageRow[] }, want: { json: CliTop; lines: string[] }): void {
  const { json, lines } = want;
  expect(json.entries.length).toBeGreaterThan(0);
  expect(got.rows.map((r) => [r.cells[5], r.flat, r.cum])).toEqual(json.entries.map((e) => [e.name + (e.inline ? ` ${e.inline}` : ''), e.flat, e.cum]));
  // The text report: header lines, the column header, then one line per entry.
  const table = lines.slice(json.header.length + 1);
  expect(got.header).toBe(json.header.join('\n'));
  expect(table.length).toBe(got.rows.length);
  table.forEach((line, i) => {
    const m = /^\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(.*)$/.exec(line)!;
    expect(got.rows[i]!.cells, line).toEqual(m.slice(1, 7));
  });
}

describe.skipIf(!ready)('profkit web in headless Chromium', () => {
  let browser: Browser;
  /** What each page logged as an error or warning, and every URL it requested. */
  const seen = new WeakMap<Page, { problems: string[]; requests: string[] }>();
  const servers: WebServer[] = [];
  const tmp = mkdtempSync(join(tmpdir(), 'profkit-web-test-'));
  let staticDir: string;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    staticDir = join(tmp, 'site');
    await writeStaticSite(staticDir);
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });

  afterAll(async () => {
    await browser?.close();
    for (const s of servers) await s.close();
    rmSync(tmp, { recursive: true, force: true });
    console.log(`@profkit/web: screenshots in ${ARTIFACTS}`);
  });

  async function newPage(): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const { problems, requests } = { problems: [] as string[], requests: [] as string[] };
    seen.set(page, { problems, requests });
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`pageerror: ${String(e)}`));
    page.on('request', (r) => requests.push(r.url()));
    return page;
  }

  async function serve(profile: string, base?: string): Promise<WebServer> {
    const s = await startWebServer({ profile, base });
    servers.push(s);
    return s;
  }

  /** Waits until the table (or an error) is shown for the current state. */
  async function topShown(page: Page): Promise<void> {
    await page.waitForSelector('#top-table tbody tr, #no-entries, #error', { timeout: 30_000 });
    await page.waitForFunction(() => !document.querySelector('[role=status]'));
    const error = await page.$('#error');
    if (error) throw new Error(`the page shows an error: ${await error.textContent()}`);
  }

  /** The pprof fixture gzipped as two members (each half on its own), written to `name` in the test folder. */
  function twoMemberGzip(name: string): string {
    const raw = gunzipSync(readFileSync(FIXTURES.pprof));
    const half = raw.length >> 1;
    const file = join(tmp, name);
    writeFileSync(file, Buffer.concat([gzipSync(raw.subarray(0, half)), gzipSync(raw.subarray(half))]));
    return file;
  }

  const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

  /** A view's screenshot for docs/web.md (the visible part of the page), when PROFKIT_WEB_DOC_SCREENSHOTS is set. */
  async function docShot(page: Page, view: string): Promise<void> {
    if (!DOC_SCREENSHOTS) return;
    mkdirSync(DOC_SCREENSHOTS, { recursive: true });
    await page.mouse.move(0, 0);
    await page.screenshot({ path: join(DOC_SCREENSHOTS, `web-${view}.png`) });
  }

  /** The page logged no error or warning and requested nothing outside `origins` (and blob:/data: URLs). */
  function expectCleanPage(page: Page, origins: string[]): void {
    const { problems, requests } = seen.get(page)!;
    expect(problems).toEqual([]);
    const foreign = requests.filter((u) => !origins.some((o) => u.startsWith(o)) && !u.startsWith('blob:') && !u.startsWith('data:'));
    expect(foreign).toEqual([]);
  }

  for (const [kind, file, args] of [
    ['pprof', FIXTURES.pprof, []],
    ['pprof by line, sorted by cum', FIXTURES.pprof, ['--by', 'line', '--cum']],
    ['pprof with --show', FIXTURES.pprof, ['--show', 'runtime\\.']],
    ['Rprof', FIXTURES.rprof, []],
    ['Rprof by file with --focus', FIXTURES.rprof, ['--by', 'file', '--focus', 'DBI']],
    ['gperftools heap', FIXTURES.heap, []],
    ['gperftools heap, second sample type, --ignore and --hide', FIXTURES.heap, ['--sample-type', '1', '--ignore', 'operator new', '--hide', 'std::']],
    ['gperftools CPU with --focus and --ignore', FIXTURES.gperfCpu, ['--focus', 'pthread', '--ignore', 'libc']],
    // 8 entries at pprof's default node fraction (0.005), 3,074 at 0.0005.
    ['pprof large.cpu with --node-fraction', FIXTURES.large, ['--node-fraction', '0.0005']],
    // pprof -tagfocus with a numeric range, -tagroot (label values as frames above the root), -tagignore.
    ['gperftools heap with --tag-focus and --tag-root', FIXTURES.heap, ['--tag-focus', 'bytes=1kb:', '--tag-root', 'bytes']],
    ['gperftools heap with --tag-ignore', FIXTURES.heap, ['--tag-ignore', 'bytes=1kb:']],
  ] as [string, string, string[]][]) {
    it(`served: ${kind} (${basename(file)} ${args.join(' ')}): the top table is profkit top's`, async () => {
      const s = await serve(file);
      const page = await newPage();
      // The same options as the CLI's, through the URL hash.
      const q = new URLSearchParams();
      for (let i = 0; i < args.length; i++) {
        const [flag, value] = [args[i]!, args[i + 1]];
        if (flag === '--cum') q.set('cum', '1');
        else {
          // pprof's option names: --tag-focus is tagfocus in the URL.
          q.set(flag === '--sample-type' ? 'st' : flag === '--node-fraction' ? 'nf' : flag.slice(2).replaceAll('-', ''), value!);
          i++;
        }
      }
      await page.goto(`${s.url}#${q}`);
      await topShown(page);
      expectSameTop(await pageTop(page), await cliTop(file, args));
      await shot(page, `top-${kind.replace(/\W+/g, '-')}`);
      expectCleanPage(page, [s.url]);
      await page.close();
    });
  }

  it('served: a gzip of two members (inflated by the server, every member; Chromium would inflate only one) is read whole, the table profkit top\'s', async () => {
    const twoMembers = twoMemberGzip('two-members.pb.gz');
    const s = await serve(twoMembers);
    const page = await newPage();
    await page.goto(s.url);
    await topShown(page);
    const want = await cliTop(twoMembers);
    expect(want.json.total).toBe((await cliTop(FIXTURES.pprof)).json.total);
    expectSameTop(await pageTop(page), want);
    expectCleanPage(page, [s.url]);
    await page.close();
  });

  it('served: a corrupt or truncated gzip (the server aborts its inflate) falls back to the file\'s bytes: the typed error of the static build', async () => {
    const gz = readFileSync(FIXTURES.pprof);
    const corrupt = Buffer.from(gz);
    for (let i = gz.length >> 1; i < (gz.length >> 1) + 64; i++) corrupt[i] ^= 0x5a;
    for (const [name, bytes] of [['corrupt.pb.gz', corrupt], ['truncated.pb.gz', gz.subarray(0, gz.length - 40)]] as const) {
      const file = join(tmp, name);
      writeFileSync(file, bytes);
      const picked = await newPage();
      await picked.goto(pathToFileURL(join(staticDir, 'index.html')).href);
      await picked.setInputFiles('#profile-input', file);
      await picked.waitForSelector('#error', { timeout: 30_000 });
      const want = await picked.textContent('#error');
      expect(await picked.textContent('#error code'), name).toMatch(/^PROFKIT_E_/);
      await picked.close();
      const s = await serve(file);
      const page = await newPage();
      await page.goto(s.url);
      await page.waitForSelector('#error', { timeout: 30_000 });
      expect(await page.textContent('#error'), name).toBe(want);
      const profileUrl = new URL(`/profile/${name}`, s.url).href;
      expect(seen.get(page)!.requests.filter((u) => u.startsWith(profileUrl)), name).toEqual([`${profileUrl}?inflated=1`, profileUrl]);
      await page.close();
    }
  });

  it('static build: a picked gzip of two members (Chromium inflates only the first) is read whole by core, the input intact after the native attempt', async () => {
    const twoMembers = twoMemberGzip('picked-two-members.pb.gz');
    const page = await newPage();
    await page.goto(pathToFileURL(join(staticDir, 'index.html')).href);
    await page.setInputFiles('#profile-input', twoMembers);
    await topShown(page);
    expectSameTop(await pageTop(page), await cliTop(twoMembers));
    expectCleanPage(page, [pathToFileURL(staticDir).href]);
    await page.close();
  });

  it('served: a table whose entries are all below the node fraction says how many it hid (not "no samples")', async () => {
    // 12 functions of 10ns each: each is 1/12 of the total, under the cutoff of a node fraction of 10%.
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
    for (let i = 0; i < 12; i++) b.addSample([b.internLocation({ functionId: b.internFunction({ name: `f${i}`, filename: 'app.go' }) })], [10n]);
    const thin = join(tmp, 'thin.pb.gz');
    writeFileSync(thin, serializePprof(b.build()));
    const s = await serve(thin);
    const page = await newPage();
    await page.goto(`${s.url}#nf=0.1`);
    await topShown(page);
    expect(await page.locator('#top-table tbody tr').count()).toBe(0);
    expect(await page.textContent('#no-entries')).toBe('No entries above the node fraction (12 below it): choose a smaller one to see them.');
    const cli = await cliTop(thin, ['--node-fraction', '0.1']);
    expect(cli.json.entries).toEqual([]);
    expect(cli.lines.join('\n')).toContain('Dropped 12 nodes');
    expectCleanPage(page, [s.url]);
    await page.close();
  });

  it('served: the flame graph and icicle paint, zoom on click (kept in the URL), highlight a search', async () => {
    const s = await serve(FIXTURES.pprof);
    const page = await newPage();
    await page.goto(`${s.url}#view=flame`);
    await page.waitForSelector('#flame');
    const want = await cliTop(FIXTURES.pprof);
    // The root frame is the total of `profkit top`.
    expect(await page.getAttribute('#flame', 'data-total')).toBe(want.json.total);
    const frames = Number(await page.getAttribute('#flame', 'data-frames'));
    expect(frames).toBeGreaterThan(5);
    await shot(page, 'flame');
    await docShot(page, 'flame');
    // The frame above the root, at the bottom-left (the root row is the last one): click to zoom.
    const box = (await page.locator('#flame').boundingBox())!;
    await page.mouse.click(box.x + 5, box.y + box.height - 18 - 9);
    await page.waitForFunction(() => document.querySelector('#flame')?.getAttribute('data-zoom') !== '0');
    await page.waitForFunction(() => new URLSearchParams(location.hash.slice(1)).get('zoom') === 'runtime.main');
    expect(await page.textContent('#flame-detail')).toMatch(/Point at a frame|%/);
    await page.click('#reset-zoom');
    await page.waitForFunction(() => document.querySelector('#flame')?.getAttribute('data-zoom') === '0');
    // Search: the matched total is the cum of main.busyLoop in the top table (every sample goes through it once).
    await page.fill('#search', '^main\\.busyLoop$');
    const busy = want.json.entries.find((e) => e.name === 'main.busyLoop')!;
    const line = want.lines.find((l) => l.endsWith(' main.busyLoop'))!;
    const [cumText, cumPercent] = /^\s*\S+\s+\S+\s+\S+\s+(\S+)\s+(\S+)/.exec(line)!.slice(1);
    expect(busy).toBeDefined();
    expect(await page.textContent('#search-total')).toBe(`matched: ${cumText} (${cumPercent})`);
    await page.click('#view-icicle');
    await page.waitForFunction(() => location.hash.includes('view=icicle'));
    await shot(page, 'icicle-search');
    await docShot(page, 'icicle');
    // A reload keeps the view, the search and the zoom.
    await page.reload();
    await page.waitForSelector('#flame');
    expect(await page.inputValue('#search')).toBe('^main\\.busyLoop$');
    expectCleanPage(page, [s.url]);
    await page.close();
  });

  /** A profile (written to `name` in the test folder) of `main` calling each of `longNames` (100ns each) and `Worker.run` (50ns). */
  function longNamesProfile(name: string, longNames: string[]): string {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
    const at = (fn: string) => b.internLocation({ functionId: b.internFunction({ name: fn, filename: 'long.cc' }) });
    const main = at('main');
    longNames.forEach((fn) => b.addSample([at(fn), main], [100]));
    b.addSample([at('Worker.run'), main], [50]);
    const file = join(tmp, name);
    writeFileSync(file, serializePprof(b.build()));
    return file;
  }

  it('served: a link searching and filtering with (a+)+$ over long names paints (re2js: linear time, pprof syntax)', async () => {
    // A backtracking RegExp takes about 2^n steps for (a+)+$ on a run of a's not at the end:
    // the page's thread (the search) and the worker (the filter) never came back.
    const longNames = Array.from({ length: 10 }, (_, i) => 'a'.repeat(20_000 + i) + '!');
    const s = await serve(longNamesProfile('long-names.pb.gz', longNames));
    const page = await newPage();
    await page.goto(`${s.url}#view=flame&ignore=${encodeURIComponent('(a+)+$')}&q=${encodeURIComponent('(a+)+$')}`);
    await page.waitForSelector('#flame', { timeout: 30_000 });
    await page.waitForFunction(() => performance.getEntriesByName('profkit:first-flame-paint').length > 0);
    expect(await page.getAttribute('#flame', 'data-total')).toBe('1050');
    expect(await page.textContent('#search-total')).toBe('matched: 0 (0%)');
    // pprof's syntax: (?i) groups (JavaScript's RegExp: "Invalid group").
    await page.fill('#search', '(a+)+!$|(?i:WORKER)');
    await page.waitForFunction(() => document.querySelector('#search-total')?.textContent?.includes('100%'));
    await page.fill('#search', 'a(');
    await page.waitForFunction(() => document.querySelector('#search')?.getAttribute('aria-invalid') === 'true');
    expect(await page.textContent('.flame-tools .error')).toContain('invalid regular expression for search');
    expectCleanPage(page, [s.url]);
    await page.close();
  });

  it('served: a costly search (\\pL{1000} over long C++ names) runs in slices: a newer search typed meanwhile is handled, and the older result never shows', async () => {
    // \pL{1000} is ~110 ms per 2,000-character name in re2js: 100 names held the page's thread
    // ~11 s when the search matched them all at once (the input typed meanwhile waited for it).
    const longNames = Array.from({ length: 100 }, (_, i) => `ns::Tmpl<${'Arg'.repeat(660)}${i}>::run`);
    const s = await serve(longNamesProfile('long-cxx-names.pb.gz', longNames));
    const page = await newPage();
    await page.goto(`${s.url}#view=flame`);
    await page.waitForFunction(() => performance.getEntriesByName('profkit:first-flame-paint').length > 0, undefined, { timeout: 30_000 });
    // In the page's order: each search typed, each matched total shown.
    await page.evaluate(() => {
      const log: string[] = [];
      (window as unknown as { searchLog: string[] }).searchLog = log;
      document.addEventListener('input', (e) => log.push(`input ${(e.target as HTMLInputElement).value}`), true);
      const tools = document.querySelector('.flame-tools')!;
      new MutationObserver(() => {
        const total = document.querySelector('#search-total')?.textContent;
        if (total && log[log.length - 1] !== total) log.push(total);
      }).observe(tools, { subtree: true, childList: true, characterData: true });
    });
    await page.fill('#search', '\\pL{1000}');
    await page.waitForSelector('#search-status', { timeout: 10_000 });
    await page.fill('#search', 'Worker');
    await page.waitForFunction(() => document.querySelector('#search-total') && !document.querySelector('#search-status'), undefined, { timeout: 30_000 });
    expect(await page.evaluate(() => (window as unknown as { searchLog: string[] }).searchLog)).toEqual(['input \\pL{1000}', 'input Worker', 'matched: 50ns (0.5%)']);
    // A search past the page's caps is a typed limit error naming it, as an invalid one is.
    await page.fill('#search', '\\pL{1000}'.repeat(5));
    await page.waitForFunction(() => document.querySelector('#search')?.getAttribute('aria-invalid') === 'true');
    expect(await page.textContent('.flame-tools .error')).toMatch(/^the search pattern: compiled program size \(5002\) exceeds the limit of 5000/);
    expectCleanPage(page, [s.url]);
    await page.close();
  });

  it('served: a search cleared shows no matches from the first paint after (not those of the search before, until the empty search ends)', async () => {
    const s = await serve(FIXTURES.pprof);
    const page = await newPage();
    await page.goto(`${s.url}#view=flame&q=.`);
    await page.waitForSelector('#search-total', { timeout: 30_000 });
    // The check runs at the next frame, before the search's effect (run after that paint) ends.
    const totalAtNextFrame = await page.evaluate(() => new Promise<boolean>((resolve) => {
      const box = document.querySelector<HTMLInputElement>('#search')!;
      box.value = '';
      box.dispatchEvent(new Event('input', { bubbles: true }));
      requestAnimationFrame(() => resolve(document.querySelector('#search-total') !== null));
    }));
    expect(totalAtNextFrame).toBe(false);
    expectCleanPage(page, [s.url]);
    await page.close();
  });

  it('served: a link whose tag filter compiles past the page\'s caps is a PROFKIT_E_LIMIT error naming it', async () => {
    const s = await serve(FIXTURES.pprof);
    const page = await newPage();
    const pieces = Array.from({ length: 25 }, (_, i) => `[^${String.fromCharCode(97 + i)}]{1000}`).join(',');
    await page.goto(`${s.url}#view=top&tagfocus=${encodeURIComponent(pieces)}`);
    await page.waitForSelector('#error', { timeout: 30_000 });
    expect(await page.textContent('#error')).toMatch(/^PROFKIT_E_LIMIT the tagFocus pattern: compiled program size of all patterns of the view \(\d+\) exceeds the limit of 20000/);
    await page.close();
  });

  it('served: the top table works from the keyboard (arrows, End, f focuses on the entry), sort by cum by button', async () => {
    const s = await serve(FIXTURES.pprof);
    const page = await newPage();
    await page.goto(s.url);
    await topShown(page);
    await page.focus('#top-table tbody tr:first-child');
    await page.keyboard.press('ArrowDown');
    expect(await page.evaluate(() => (document.activeElement as HTMLTableRowElement).rowIndex)).toBe(2);
    await page.keyboard.press('End');
    const rows = await page.locator('#top-table tbody tr').count();
    expect(await page.evaluate(() => (document.activeElement as HTMLTableRowElement).rowIndex)).toBe(rows);
    await page.keyboard.press('Home');
    await page.keyboard.press('ArrowDown');
    const name = await page.evaluate(() => (document.activeElement as HTMLTableRowElement).cells[5]!.textContent!);
    await page.keyboard.press('f');
    await page.waitForFunction(() => new URLSearchParams(location.hash.slice(1)).has('focus'));
    await topShown(page);
    const focus = await page.evaluate(() => new URLSearchParams(location.hash.slice(1)).get('focus')!);
    expect(focus).toBe(`^${name.replace(/ \((partial-)?inline\)$/, '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
    expectSameTop(await pageTop(page), await cliTop(FIXTURES.pprof, ['--focus', focus]));
    // Tab reaches the sort buttons; Enter on "cum" sorts as --cum.
    await page.focus('#sort-cum');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => location.hash.includes('cum=1'));
    await topShown(page);
    expectSameTop(await pageTop(page), await cliTop(FIXTURES.pprof, ['--focus', focus, '--cum']));
    expectCleanPage(page, [s.url]);
    await page.close();
  });

  for (const [kind, file] of [
    ['pprof', FIXTURES.pprof],
    ['Rprof', FIXTURES.rprof],
  ] as const) {
    it(`served: ${kind}: Enter on a top row opens its peek (profkit peek's numbers and text), then its sandwich, from the keyboard and the URL`, async () => {
      const s = await serve(file);
      const page = await newPage();
      await page.goto(s.url);
      await topShown(page);
      // The keyboard only: the second row of the table, Enter.
      await page.focus('#top-table tbody tr:first-child');
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('Enter');
      await page.waitForSelector('#peek-text', { timeout: 30_000 });
      const hash = await page.evaluate(() => new URLSearchParams(location.hash.slice(1)));
      const fn = await page.evaluate(() => new URLSearchParams(location.hash.slice(1)).get('fn')!);
      expect(await page.evaluate(() => new URLSearchParams(location.hash.slice(1)).get('view'))).toBe('peek');
      expect(fn, String(hash)).not.toBe('');
      const pattern = `^${fn.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;
      const cwd = tmpdir();
      const [j, t] = await Promise.all([runCliAsync(['peek', file, pattern, '--json'], { cwd }), runCliAsync(['peek', file, pattern], { cwd })]);
      expect(j.code, j.stderr).toBe(0);
      expect(t.code, t.stderr).toBe(0);
      type CliCall = { name: string; weight: string };
      const want = JSON.parse(j.stdout) as { nodes: { name: string; flat: string; cum: string; callers: CliCall[]; callees: CliCall[] }[] };
      expect(await page.textContent('#peek-text')).toBe(t.stdout);
      const got = await page.evaluate(() =>
        [...document.querySelectorAll<HTMLTableElement>('.peek-table')].map((table) => ({
          name: table.dataset.name!,
          flat: table.dataset.flat!,
          cum: table.dataset.cum!,
          callers: [...table.querySelectorAll<HTMLTableRowElement>('tr.caller')].map((tr) => ({ name: tr.dataset.name!, weight: tr.dataset.weight! })),
          callees: [...table.querySelectorAll<HTMLTableRowElement>('tr.callee')].map((tr) => ({ name: tr.dataset.name!, weight: tr.dataset.weight! })),
        })),
      );
      const calls = (cs: CliCall[]) => cs.map((c) => ({ name: c.name, weight: String(c.weight) }));
      expect(got).toEqual(want.nodes.map((n) => ({ name: n.name, flat: String(n.flat), cum: String(n.cum), callers: calls(n.callers), callees: calls(n.callees) })));
      expect(want.nodes.map((n) => n.name)).toEqual([fn]);
      await shot(page, `peek-${kind}`);
      if (kind === 'pprof') await docShot(page, 'peek');
      // Tab to the sandwich button, Enter: the function's callers above, callees below.
      await page.focus('.open-sandwich');
      await page.keyboard.press('Enter');
      await page.waitForSelector('#sandwich-callers', { timeout: 30_000 });
      expect(await page.evaluate(() => Object.fromEntries(new URLSearchParams(location.hash.slice(1))))).toMatchObject({ view: 'sandwich', fn });
      const node = want.nodes[0]!;
      const sandwich = async () =>
        page.evaluate(() =>
          ['#sandwich-callers', '#sandwich-callees'].map((id) => {
            const c = document.querySelector<HTMLCanvasElement>(id)!;
            return { total: c.dataset.total!, adjacent: JSON.parse(c.dataset.adjacent!) as [string, number][] };
          }),
        );
      const [callers, callees] = await sandwich();
      // Both halves are as wide as the function's cum; without recursion, the frames next to it
      // are peek's calls (a recursive call is an edge of peek but not a frame next to the root).
      expect(callers!.total).toBe(String(node.cum));
      expect(callees!.total).toBe(String(node.cum));
      const byName = (cs: [string, number][] | CliCall[]) => Object.fromEntries(cs.map((c) => (Array.isArray(c) ? [c[0], String(c[1])] : [c.name, String(c.weight)])));
      if (!node.callers.some((c) => c.name === fn)) {
        expect(byName(callees!.adjacent)).toEqual(byName(node.callees));
        expect(byName(callers!.adjacent)).toEqual(byName(node.callers));
      }
      await shot(page, `sandwich-${kind}`);
      if (kind === 'pprof') await docShot(page, 'sandwich');
      // The URL reopens the sandwich.
      const link = await page.evaluate(() => location.href);
      const again = await newPage();
      await again.goto(link);
      await again.waitForSelector('#sandwich-callees', { timeout: 30_000 });
      expect(await again.textContent('#sandwich-function')).toBe(fn);
      expectCleanPage(page, [s.url]);
      expectCleanPage(again, [s.url]);
      await again.close();
      await page.close();
    });
  }

  it('served with a base: the diff top table is profkit top --base, red/blue with a legend, in top and flame; the graph is profkit graph --base', async () => {
    const base = join(tmp, 'base.pb.gz');
    const f = await runCliAsync(['filter', FIXTURES.pprof, '-o', base, '--ignore', 'mapiternext'], { cwd: tmp });
    expect(f.code, f.stderr).toBe(0);
    const s = await serve(FIXTURES.pprof, base);
    const page = await newPage();
    await page.goto(s.url);
    await topShown(page);
    expect(await page.isVisible('#diff-legend')).toBe(true);
    expectSameTop(await pageTop(page), await cliTop(FIXTURES.pprof, ['--base', base]));
    // Values that grew are red, shrank blue.
    const classes = await page.evaluate(() => [...document.querySelectorAll<HTMLTableRowElement>('#top-table tbody tr')].map((tr) => [tr.dataset.flat!, tr.cells[0]!.className]));
    for (const [flat, cls] of classes) expect(cls).toBe(flat!.startsWith('-') ? 'shrank' : flat === '0' ? '' : 'grew');
    expect(classes.some(([, c]) => c === 'grew')).toBe(true);
    await shot(page, 'diff-top');
    await page.click('#view-flame');
    await page.waitForSelector('#flame');
    expect(await page.isVisible('#diff-legend')).toBe(true);
    await shot(page, 'diff-flame');
    await docShot(page, 'diff');
    // The call graph of the diff is profkit graph --base's.
    await page.click('#view-graph');
    expect(await graphShown(page)).toBe(await cliGraph(FIXTURES.pprof, ['--base', base]));
    expectCleanPage(page, [s.url]);
    await page.close();
  });

  for (const [kind, file] of [
    ['pprof', FIXTURES.pprof],
    ['Rprof', FIXTURES.rprof],
    ['gperftools heap', FIXTURES.heap],
  ] as const) {
    it(`static build from file://: ${kind} opened with the file picker and by drag-and-drop`, async () => {
      const page = await newPage();
      const index = pathToFileURL(join(staticDir, 'index.html')).href;
      await page.goto(index);
      await page.waitForSelector('#drop-hint');
      const want = await cliTop(file);
      await page.setInputFiles('#profile-input', file);
      await topShown(page);
      expectSameTop(await pageTop(page), want);
      await shot(page, `static-picker-${kind.replace(/\W+/g, '-')}`);

      // Drag-and-drop of the same bytes on a fresh page.
      const dropped = await newPage();
      await dropped.goto(index);
      await dropped.waitForSelector('#drop-hint');
      await dropped.evaluate(
        ({ name, b64 }) => {
          const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
          const data = new DataTransfer();
          data.items.add(new File([bytes], name));
          document.body.dispatchEvent(new DragEvent('dragover', { dataTransfer: data, bubbles: true, cancelable: true }));
          document.body.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
        },
        { name: basename(file), b64: readFileSync(file).toString('base64') },
      );
      await topShown(dropped);
      expectSameTop(await pageTop(dropped), want);
      await dropped.click('#view-flame');
      await dropped.waitForSelector('#flame');
      await shot(dropped, `static-drop-flame-${kind.replace(/\W+/g, '-')}`);
      expectCleanPage(page, [pathToFileURL(staticDir).href]);
      expectCleanPage(dropped, [pathToFileURL(staticDir).href]);
      await page.close();
      await dropped.close();
    });
  }

  it('static build: a profile dropped while another is read replaces it: the first one\'s answer, arriving after, never shows', async () => {
    const page = await newPage();
    await page.goto(pathToFileURL(join(staticDir, 'index.html')).href);
    await page.waitForSelector('#drop-hint');
    // Every summary the page shows, from the first drop on.
    await page.evaluate(() => {
      const shown: string[] = [];
      (window as unknown as { summaries: string[] }).summaries = shown;
      new MutationObserver(() => {
        const text = document.querySelector('#profile-summary')?.textContent;
        if (text && shown.at(-1) !== text) shown.push(text);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    // Two drops in one task: the worker reads the first while the page opens the second.
    await page.evaluate(
      (files) => {
        for (const { name, b64 } of files) {
          const data = new DataTransfer();
          data.items.add(new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], name));
          document.body.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
        }
      },
      [FIXTURES.large, FIXTURES.rprof].map((path) => ({ name: basename(path), b64: readFileSync(path).toString('base64') })),
    );
    await topShown(page);
    expectSameTop(await pageTop(page), await cliTop(FIXTURES.rprof));
    const summaries = await page.evaluate(() => (window as unknown as { summaries: string[] }).summaries);
    expect(summaries.length).toBeGreaterThan(0);
    for (const summary of summaries) expect(summary).toContain(basename(FIXTURES.rprof));
    expectCleanPage(page, [pathToFileURL(staticDir).href]);
    await page.close();
  });

  it('static build: a profile picked while a dropped one is still read stays: the drop, read after, does not replace it', async () => {
    const page = await newPage();
    await page.goto(pathToFileURL(join(staticDir, 'index.html')).href);
    await page.waitForSelector('#drop-hint');
    // The dropped file's read held until released; every status and summary the page shows recorded.
    await page.evaluate(() => {
      const w = window as unknown as { release(): void; heldRead: boolean; shown: string[] };
      const held = new Promise<void>((resolve) => (w.release = resolve));
      w.heldRead = false;
      w.shown = [];
      const read = Blob.prototype.arrayBuffer;
      Blob.prototype.arrayBuffer = function (this: Blob) {
        if (!(this instanceof File) || this.name !== 'held.pb.gz') return read.call(this);
        return held.then(() => read.call(this)).finally(() => (w.heldRead = true));
      };
      new MutationObserver(() => {
        for (const el of document.querySelectorAll('[role=status], #profile-summary')) if (el.textContent && w.shown.at(-1) !== el.textContent) w.shown.push(el.textContent);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await page.evaluate((b64) => {
      const data = new DataTransfer();
      data.items.add(new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], 'held.pb.gz'));
      document.body.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
    }, readFileSync(FIXTURES.pprof).toString('base64'));
    await page.setInputFiles('#profile-input', FIXTURES.rprof);
    await topShown(page);
    await page.evaluate(() => (window as unknown as { release(): void }).release());
    await page.waitForFunction(() => (window as unknown as { heldRead: boolean }).heldRead);
    // Two frames: what the drop's read set off has been drawn by then.
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    await topShown(page);
    expectSameTop(await pageTop(page), await cliTop(FIXTURES.rprof));
    const shown = await page.evaluate(() => (window as unknown as { shown: string[] }).shown);
    expect(shown.some((text) => text.includes(basename(FIXTURES.rprof)))).toBe(true);
    expect(shown.filter((text) => text.includes('held.pb.gz'))).toEqual([]);
    expectCleanPage(page, [pathToFileURL(staticDir).href]);
    await page.close();
  });

  it('static build: two dropped files are a profile and its base (profkit top --base), what shrank in blue', async () => {
    const base = join(tmp, 'static-base.pb.gz');
    const f = await runCliAsync(['filter', FIXTURES.pprof, '-o', base, '--ignore', 'mapiternext'], { cwd: tmp });
    expect(f.code, f.stderr).toBe(0);
    const page = await newPage();
    await page.goto(pathToFileURL(join(staticDir, 'index.html')).href);
    await page.waitForSelector('#drop-hint');
    await page.evaluate(
      (files) => {
        const data = new DataTransfer();
        for (const { name, b64 } of files) data.items.add(new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], name));
        document.body.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
      },
      // The profile without mapiternext first, the whole one as its base: mapiternext shrank.
      [base, FIXTURES.pprof].map((path) => ({ name: basename(path), b64: readFileSync(path).toString('base64') })),
    );
    await topShown(page);
    expect(await page.isVisible('#diff-legend')).toBe(true);
    expectSameTop(await pageTop(page), await cliTop(base, ['--base', FIXTURES.pprof]));
    const mapiternext = page.locator('#top-table tbody tr', { hasText: 'runtime.mapiternext' }).locator('td').first();
    expect(await mapiternext.getAttribute('class')).toBe('shrank');
    expect(await mapiternext.evaluate((td) => getComputedStyle(td).color)).toBe('rgb(0, 57, 179)');
    await shot(page, 'static-diff-shrank');
    expectCleanPage(page, [pathToFileURL(staticDir).href]);
    await page.close();
  });

  it('static build: a picked file above maxInputBytes is a PROFKIT_E_LIMIT error, refused before it is read', async () => {
    // Sparse: 4 GiB + 1 byte on disk costs nothing; the page must not read it into memory.
    const huge = join(tmp, 'huge.pb.gz');
    writeFileSync(huge, '');
    truncateSync(huge, 4 * 1024 ** 3 + 1);
    const page = await newPage();
    await page.goto(pathToFileURL(join(staticDir, 'index.html')).href);
    await page.setInputFiles('#profile-input', huge);
    await page.waitForSelector('#error');
    expect(await page.textContent('#error code')).toBe('PROFKIT_E_LIMIT');
    expect(await page.textContent('#error')).toContain('huge.pb.gz');
    expectCleanPage(page, [pathToFileURL(staticDir).href]);
    await page.close();
    rmSync(huge);
  });

  it('served: a profile above maxInputBytes is a PROFKIT_E_LIMIT error, refused before it is fetched into memory', async () => {
    const huge = join(tmp, 'huge-served.pb.gz');
    writeFileSync(huge, '');
    truncateSync(huge, 4 * 1024 ** 3 + 1);
    const s = await startWebServer({ profile: huge });
    try {
      const page = await newPage();
      await page.goto(s.url);
      await page.waitForSelector('#error');
      expect(await page.textContent('#error code')).toBe('PROFKIT_E_LIMIT');
      expect(await page.textContent('#error')).toContain('huge-served.pb.gz');
      await page.close();
    } finally {
      await s.close();
      rmSync(huge);
    }
  });

  it('served: a download that breaks off (the connection closed mid-body) is a typed error on the page', async () => {
    const s = await serve(FIXTURES.pprof);
    const bytes = readFileSync(FIXTURES.pprof);
    // In front of profkit web: the profile's body stops after half of its announced bytes.
    const proxy: Server = createServer((req, res) => {
      if (req.url?.startsWith('/profile/')) {
        res.writeHead(200, { 'content-length': String(bytes.length), 'content-type': 'application/octet-stream' });
        res.write(bytes.subarray(0, bytes.length >> 1), () => setTimeout(() => res.socket?.destroy(), 50));
        return;
      }
      void fetch(new URL(req.url ?? '/', s.url)).then(async (r) => {
        res.writeHead(r.status, Object.fromEntries(r.headers));
        res.end(Buffer.from(await r.arrayBuffer()));
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const page = await newPage();
      await page.goto(`http://127.0.0.1:${(proxy.address() as { port: number }).port}/`);
      await page.waitForSelector('#error', { timeout: 30_000 });
      expect(await page.textContent('#error code')).toBe('PROFKIT_E_IO');
      expect(await page.textContent('#error')).toContain(basename(FIXTURES.pprof));
      await page.close();
    } finally {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it('a worker that dies leaves an error on the page, not "computing…" for ever', async () => {
    const page = await newPage();
    // Keeps the page's worker reachable, to make it fail as a crash (or out of memory) would.
    await page.addInitScript(() => {
      const Real = Worker;
      (globalThis as unknown as { Worker: unknown }).Worker = class extends Real {
        constructor(url: string | URL, options?: WorkerOptions) {
          super(url, options);
          (globalThis as unknown as { pageWorker: Worker }).pageWorker = this;
        }
      };
    });
    await page.goto(pathToFileURL(join(staticDir, 'index.html')).href);
    await page.setInputFiles('#profile-input', FIXTURES.pprof);
    await topShown(page);
    await page.evaluate(() => (globalThis as unknown as { pageWorker: Worker }).pageWorker.dispatchEvent(new ErrorEvent('error', { message: 'out of memory' })));
    await page.click('#view-flame');
    await page.waitForSelector('#error', { timeout: 10_000 });
    expect(await page.textContent('#error')).toMatch(/^PROFKIT_E_INTERNAL the analysis worker stopped: out of memory/);
    await page.close();
  });

  it('static build: a file no adapter reads shows the typed error', async () => {
    const page = await newPage();
    await page.goto(pathToFileURL(join(staticDir, 'index.html')).href);
    await page.setInputFiles('#profile-input', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('just some words\n') });
    await page.waitForSelector('#error');
    expect(await page.textContent('#error code')).toMatch(/^PROFKIT_E_/);
    expectCleanPage(page, [pathToFileURL(staticDir).href]);
    await page.close();
  });

  /** `profkit graph FILE ARGS --format dot`, run outside the repository. */
  async function cliGraph(file: string, args: string[] = []): Promise<string> {
    const r = await runCliAsync(['graph', file, ...args, '--format', 'dot'], { cwd: tmpdir() });
    if (r.code !== 0) throw new Error(`profkit graph ${file} ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  }

  /** Waits until the call graph is laid out for the current state, and returns its DOT. */
  async function graphShown(page: Page): Promise<string> {
    await page.waitForFunction(() => !document.querySelector('[role=status], #graph-loading') && document.querySelector('#graph-svg g.node[data-name]'), undefined, { timeout: 60_000 });
    const error = await page.$('#error');
    if (error) throw new Error(`the page shows an error: ${await error.textContent()}`);
    return (await page.textContent('#graph-dot')) ?? '';
  }

  it("served: the call graph is profkit graph's DOT, laid out by graph.js loaded only for it; a box focuses on its function by click or Enter", async () => {
    const s = await serve(FIXTURES.pprof);
    const page = await newPage();
    await page.goto(s.url);
    await topShown(page);
    // The first paint (the table) did not load the graph layout.
    expect(seen.get(page)!.requests.filter((u) => u.endsWith('/graph.js'))).toEqual([]);
    await docShot(page, 'top');
    await page.click('#view-graph');
    const dot = await graphShown(page);
    expect(seen.get(page)!.requests.filter((u) => u.endsWith('/graph.js'))).toHaveLength(1);
    expect(dot).toBe(await cliGraph(FIXTURES.pprof));
    // Every node of the DOT is a box of the SVG, with its values.
    const boxes = await page.evaluate(() => [...document.querySelectorAll<SVGGElement>('#graph-svg g.node[data-name]')].map((g) => [g.querySelector('title')!.textContent, g.dataset.name, g.dataset.flat, g.dataset.cum]));
    expect(boxes.map((b) => b[0]).sort()).toEqual([...dot.matchAll(/^(N\d+) \[label/gm)].map((m) => m[1]).sort());
    const busy = boxes.find((b) => b[1] === 'main.busyLoop')!;
    const top = await cliTop(FIXTURES.pprof);
    const entry = top.json.entries.find((e) => e.name === 'main.busyLoop')!;
    expect(busy.slice(2)).toEqual([entry.flat, entry.cum]);
    await shot(page, 'graph');
    await docShot(page, 'graph');
    // Keyboard: Tab from the first box to the second, Enter focuses the views on it (pprof -focus).
    await page.focus('#graph-svg g.node[data-name]');
    await page.keyboard.press('Tab');
    const name = await page.evaluate(() => (document.activeElement as SVGGElement).dataset.name!);
    await page.keyboard.press('Enter');
    const focus = exactPattern(name);
    await page.waitForFunction((f) => new URLSearchParams(location.hash.slice(1)).get('focus') === f, focus);
    await page.waitForFunction((d) => document.querySelector('#graph-dot')?.textContent !== d, dot);
    expect(await graphShown(page)).toBe(await cliGraph(FIXTURES.pprof, ['--focus', focus]));
    // A click on a box, and the node count of the URL (--nodecount).
    await page.goto(`${s.url}#view=graph&n=3`);
    await page.reload();
    expect(await graphShown(page)).toBe(await cliGraph(FIXTURES.pprof, ['--nodecount', '3']));
    const clicked = await page.evaluate(() => document.querySelectorAll<SVGGElement>('#graph-svg g.node[data-name]')[1]!.dataset.name!);
    await page.click('#graph-svg g.node[data-name] >> nth=1');
    await page.waitForFunction((f) => new URLSearchParams(location.hash.slice(1)).get('focus') === f, exactPattern(clicked));
    expectCleanPage(page, [s.url]);
    await page.close();
  });

  it('static build: the call graph of a dropped profile, laid out from file://', async () => {
    const page = await newPage();
    await page.goto(pathToFileURL(join(staticDir, 'index.html')).href + '#view=graph');
    await page.setInputFiles('#profile-input', FIXTURES.heap);
    expect(await graphShown(page)).toBe(await cliGraph(FIXTURES.heap));
    expectCleanPage(page, [pathToFileURL(staticDir).href]);
    await page.close();
  });

  /** The source tree the fixture's file names point into (sample.go, written here), and the options of profkit list that find it. */
  function sourceTree(): { dir: string; args: string[]; sourcePath: string; trimPath: string; file: string } {
    const dir = join(tmp, 'src');
    const file = join(dir, 'testdata/sample/sample.go');
    mkdirSync(join(dir, 'testdata/sample'), { recursive: true });
    writeFileSync(file, Array.from({ length: 40 }, (_, i) => `\t// sample.go line ${i + 1}`).join('\n') + '\n');
    const trimPath = '/usr/local/google/home/sanjay/go/src/github.com/google/pprof/internal/report';
    return { dir, file, sourcePath: dir, trimPath, args: ['--source-path', dir, '--trim-path', trimPath] };
  }

  type CliRoutine = { name: string; file: string; flat: string | number; cum: string | number; lines: { line: number; flat: string | number; cum: string | number; text: string }[] };

  /** `profkit list FILE '^fn$' ARGS` (text and --json). */
  async function cliList(file: string, fn: string, args: string[]): Promise<{ text: string; routines: CliRoutine[] }> {
    const pattern = exactPattern(fn);
    const cwd = tmpdir();
    const [j, t] = await Promise.all([runCliAsync(['list', file, pattern, ...args, '--json'], { cwd }), runCliAsync(['list', file, pattern, ...args], { cwd })]);
    expect(j.code, j.stderr).toBe(0);
    expect(t.code, t.stderr).toBe(0);
    return { text: t.stdout, routines: (JSON.parse(j.stdout) as { routines: CliRoutine[] }).routines };
  }

  /** The page's listing: each routine's values and its lines' values and text. */
  async function pageSource(page: Page) {
    await page.waitForSelector('#source .routine', { timeout: 30_000 });
    await page.waitForFunction(() => !document.querySelector('[role=status]'));
    return page.evaluate(() =>
      [...document.querySelectorAll<HTMLElement>('#source .routine')].map((r) => ({
        name: r.dataset.name!,
        file: r.dataset.file!,
        flat: r.dataset.flat!,
        cum: r.dataset.cum!,
        lines: [...r.querySelectorAll<HTMLTableRowElement>('tbody tr')].map((tr) => ({ line: Number(tr.dataset.line), flat: tr.dataset.flat!, cum: tr.dataset.cum!, text: tr.cells[3]!.textContent! })),
      })),
    );
  }

  const routinesOf = (rs: CliRoutine[]) => rs.map((r) => ({ name: r.name, file: r.file, flat: String(r.flat), cum: String(r.cum), lines: r.lines.map((l) => ({ line: l.line, flat: String(l.flat), cum: String(l.cum), text: l.text })) }));

  it("served: the source view is profkit list's (line costs and text), the server reading the files the profile names with --source-path/--trim-path", async () => {
    const tree = sourceTree();
    const s = await startWebServer({ profile: FIXTURES.pprof, sourcePath: tree.sourcePath, trimPath: tree.trimPath });
    servers.push(s);
    const page = await newPage();
    await page.goto(s.url);
    await topShown(page);
    // From the top table: Enter opens the peek, its Source button the listing.
    await page.locator('#top-table tbody tr', { hasText: 'main.busyLoop' }).press('Enter');
    await page.waitForSelector('.open-source');
    await page.focus('.open-source');
    await page.keyboard.press('Enter');
    const got = await pageSource(page);
    const want = await cliList(FIXTURES.pprof, 'main.busyLoop', tree.args);
    expect(got).toEqual(routinesOf(want.routines));
    expect(got[0]!.lines.some((l) => l.cum !== '0' && l.text.includes('sample.go line'))).toBe(true);
    expect(await page.textContent('#source-text')).toBe(want.text);
    expect(seen.get(page)!.requests.filter((u) => u.includes('/source?'))).toEqual([`${s.url}source?file=testdata%2Fsample%2Fsample.go`]);
    // The listing's table takes the keyboard focus (arrow keys scroll it).
    await page.focus('.source-table');
    expect(await page.evaluate(() => document.activeElement?.className)).toBe('source-table');
    await shot(page, 'source');
    await docShot(page, 'source');
    // A file the listing cannot find is reported as profkit list reports it.
    const missing = await startWebServer({ profile: FIXTURES.pprof, sourcePath: join(tmp, 'nowhere'), trimPath: tree.trimPath });
    servers.push(missing);
    await page.goto(`${missing.url}#view=source&fn=main.busyLoop`);
    expect(await pageSource(page)).toEqual(routinesOf((await cliList(FIXTURES.pprof, 'main.busyLoop', ['--source-path', join(tmp, 'nowhere'), '--trim-path', tree.trimPath])).routines));
    expect(await page.textContent('.source-error')).toMatch(/^could not find file testdata\/sample\/sample.go on path /);
    expectCleanPage(page, [s.url, missing.url]);
    await page.close();
  });

  /**
   * An init script: counts what the page hands the worker in `window.workerMessages`, the source
   * views asked for and the messages that carry sourceTree()'s file text.
   */
  function countWorkerMessages(): void {
    const counts = { sourceViews: 0, textSends: 0 };
    (window as unknown as { workerMessages: typeof counts }).workerMessages = counts;
    const post = Worker.prototype.postMessage;
    Worker.prototype.postMessage = function (this: Worker, message: unknown, ...rest: [Transferable[]]) {
      if ((message as { part?: string }).part === 'source') counts.sourceViews++;
      if (JSON.stringify(message).includes('sample.go line 7')) counts.textSends++;
      return post.call(this, message, ...rest);
    };
  }
  const workerMessages = (page: Page) => page.evaluate(() => (window as unknown as { workerMessages: { sourceViews: number; textSends: number } }).workerMessages);

  it('static build: the source view shows the line costs without text, and the text once the file is chosen or dropped', async () => {
    const tree = sourceTree();
    const page = await newPage();
    await page.goto(pathToFileURL(join(staticDir, 'index.html')).href);
    await page.setInputFiles('#profile-input', FIXTURES.pprof);
    await topShown(page);
    await page.evaluate(() => (location.hash = '#view=source&fn=main.busyLoop'));
    // Without the file: the lines with samples have profkit list's costs, no text. (The static
    // page has no --trim-path: the listing names the file as the profile does.)
    const before = await pageSource(page);
    const want = await cliList(FIXTURES.pprof, 'main.busyLoop', tree.args);
    const fullName = `${tree.trimPath}/testdata/sample/sample.go`;
    const named = routinesOf(want.routines).map((r) => ({ ...r, file: fullName }));
    const sampled = (rs: ReturnType<typeof routinesOf>) => rs.map((r) => ({ ...r, lines: r.lines.filter((l) => l.cum !== '0').map((l) => ({ ...l, text: '' })) }));
    expect(sampled(before)).toEqual(sampled(named));
    expect(before[0]!.lines.every((l) => l.text === '')).toBe(true);
    expect(await page.$('#source-text')).toBeNull();
    // The file chosen: the listing is profkit list's, text included.
    await page.setInputFiles('.source-input', tree.file);
    await page.waitForSelector('#source-text', { state: 'attached' });
    expect(await pageSource(page)).toEqual(named);
    expect(await page.textContent('#source-text')).toBe(want.text.replace(' in testdata/sample/sample.go\n', ` in ${fullName}\n`));
    expectCleanPage(page, [pathToFileURL(staticDir).href]);
    // Dropped on the source view instead, a file of that name is the source (not a new profile).
    const dropped = await newPage();
    await dropped.addInitScript(countWorkerMessages);
    await dropped.goto(pathToFileURL(join(staticDir, 'index.html')).href);
    await dropped.setInputFiles('#profile-input', FIXTURES.pprof);
    await topShown(dropped);
    await dropped.evaluate(() => (location.hash = '#view=source&fn=main.busyLoop'));
    await pageSource(dropped);
    await dropped.evaluate(
      ({ b64 }) => {
        const data = new DataTransfer();
        data.items.add(new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], 'sample.go'));
        document.body.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
      },
      { b64: readFileSync(tree.file).toString('base64') },
    );
    await dropped.waitForSelector('#source-text', { state: 'attached' });
    expect(await pageSource(dropped)).toEqual(named);
    // The listing computed again (another option): the worker still has the text, which crossed once.
    const messages = () => workerMessages(dropped);
    const viewsBefore = (await messages()).sourceViews;
    await dropped.evaluate(() => (location.hash += '&hide=no%20such%20frame'));
    await dropped.waitForFunction((n) => (window as unknown as { workerMessages: { sourceViews: number } }).workerMessages.sourceViews > n, viewsBefore);
    expect(await pageSource(dropped)).toEqual(named);
    expect(await messages()).toEqual({ sourceViews: viewsBefore + 1, textSends: 1 });
    expect(await dropped.textContent('#profile-summary')).toContain('sample.cpu');
    expectCleanPage(dropped, [pathToFileURL(staticDir).href]);
    await dropped.close();
    await page.close();
  });

  it('static build: source files dropped together are read one at a time (the page holds one text, not all), each listing then showing its text', async () => {
    // One function `f` in three files: the listing of f names all three, none with text yet.
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    for (const file of ['a.go', 'b.go', 'c.go']) b.addSample([b.internLocation({ functionId: b.internFunction({ name: 'f', filename: file }), line: 2 })], [1n]);
    const profile = join(tmp, 'three-files.pb.gz');
    writeFileSync(profile, serializePprof(b.build()));
    const page = await newPage();
    await page.goto(pathToFileURL(join(staticDir, 'index.html')).href);
    await page.setInputFiles('#profile-input', profile);
    await topShown(page);
    await page.evaluate(() => (location.hash = '#view=source&fn=f'));
    expect((await pageSource(page)).map((r) => [r.file, r.lines.length > 0 && r.lines.every((l) => l.text === '')])).toEqual(['a.go', 'b.go', 'c.go'].map((f) => [f, true]));
    // How many file texts are being read at once, at most.
    await page.evaluate(() => {
      const read = Blob.prototype.text;
      const counts = { now: 0, most: 0 };
      (window as unknown as { textReads: typeof counts }).textReads = counts;
      Blob.prototype.text = function (this: Blob) {
        counts.most = Math.max(counts.most, ++counts.now);
        return read.call(this).finally(() => counts.now--);
      };
    });
    await page.evaluate(() => {
      const data = new DataTransfer();
      for (const name of ['a.go', 'b.go', 'c.go']) data.items.add(new File([`// ${name} line 1\n// ${name} line 2\n`], name));
      document.body.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
    });
    await page.waitForSelector('#source-text', { state: 'attached' });
    expect((await pageSource(page)).map((r) => [r.file, r.lines.map((l) => l.text)])).toEqual(['a.go', 'b.go', 'c.go'].map((f) => [f, [`// ${f} line 1`, `// ${f} line 2`]]));
    expect(await page.evaluate(() => (window as unknown as { textReads: { most: number } }).textReads.most)).toBe(1);
    expectCleanPage(page, [pathToFileURL(staticDir).href]);
    await page.close();
  });

  it('static build: a source file whose read ends after another profile was opened is not that profile\'s source', async () => {
    const tree = sourceTree();
    const page = await newPage();
    await page.addInitScript(countWorkerMessages);
    // The read of sample.go (Blob.text) held until the test releases it.
    await page.addInitScript(() => {
      const w = window as unknown as { sourceRead: boolean; releaseSource: () => void };
      const gate = new Promise<void>((resolve) => (w.releaseSource = resolve));
      const text = Blob.prototype.text;
      Blob.prototype.text = async function (this: Blob) {
        const t = await text.call(this);
        if ((this as File).name === 'sample.go') {
          w.sourceRead = true;
          await gate;
        }
        return t;
      };
    });
    await page.goto(pathToFileURL(join(staticDir, 'index.html')).href);
    await page.setInputFiles('#profile-input', FIXTURES.pprof);
    await topShown(page);
    await page.evaluate(() => (location.hash = '#view=source&fn=main.busyLoop'));
    await pageSource(page);
    await page.setInputFiles('.source-input', tree.file);
    await page.waitForFunction(() => (window as unknown as { sourceRead?: boolean }).sourceRead === true);
    // While sample.go is read, the profile is opened again (a copy: a new file for the picker): a new load, whose listing names the same file.
    const again = join(tmp, 'again.pb.gz');
    writeFileSync(again, readFileSync(FIXTURES.pprof));
    await page.setInputFiles('#profile-input', again);
    await page.waitForFunction(() => performance.getEntriesByName('profkit:profile-read').length === 2);
    const before = await pageSource(page);
    expect(before[0]!.lines.every((l) => l.text === '')).toBe(true);
    // The read ends (the page's handlers run in the microtasks after it, before the next task).
    await page.evaluate(async () => {
      (window as unknown as { releaseSource: () => void }).releaseSource();
      await new Promise((resolve) => setTimeout(resolve, 0));
    });
    expect((await workerMessages(page)).textSends).toBe(0);
    expect(await page.$('#source-text')).toBeNull();
    expect(await pageSource(page)).toEqual(before);
    // Chosen again, for this profile: its text.
    await page.setInputFiles('.source-input', tree.file);
    await page.waitForSelector('#source-text', { state: 'attached' });
    expect((await workerMessages(page)).textSends).toBe(1);
    expectCleanPage(page, [pathToFileURL(staticDir).href]);
    await page.close();
  });

  it('served: tag filters typed in the form (tag focus, tag root; Enter applies) are profkit top --tag-focus --tag-root', async () => {
    const s = await serve(FIXTURES.heap);
    const page = await newPage();
    await page.goto(s.url);
    await topShown(page);
    await page.fill('#filter-tagFocus', 'bytes=1kb:');
    await page.fill('#filter-tagRoot', 'bytes');
    await page.press('#filter-tagRoot', 'Enter');
    await page.waitForFunction(() => new URLSearchParams(location.hash.slice(1)).get('tagroot') === 'bytes');
    await topShown(page);
    expectSameTop(await pageTop(page), await cliTop(FIXTURES.heap, ['--tag-focus', 'bytes=1kb:', '--tag-root', 'bytes']));
    // The flame graph has the label values as frames above the root.
    await page.click('#view-flame');
    await page.waitForSelector('#flame');
    await page.fill('#search', '^16384$');
    expect(await page.textContent('#search-total')).toMatch(/^matched: /);
    await page.click('#view-graph');
    expect(await graphShown(page)).toBe(await cliGraph(FIXTURES.heap, ['--tag-focus', 'bytes=1kb:', '--tag-root', 'bytes']));
    expectCleanPage(page, [s.url]);
    await page.close();
  });
});
