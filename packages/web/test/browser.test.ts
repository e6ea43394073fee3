/**
 * profkit web in a real browser (Debian's headless Chromium driven by playwright-core, as in
 * tools/browser-check): the page served by `startWebServer` (what `profkit web FILE` runs) and
 * the static build opened from file:// with a file picked or dropped, for pprof, Rprof and
 * gperftools fixtures. Every number of the top table must be the CLI's (`profkit top FILE
 * --json` for the values, `profkit top FILE` for the printed strings and header) with the same
 * options; the page logs no error and asks for nothing but its own files; the table works from
 * the keyboard; the flame graph zooms and highlights. Screenshots go to PROFKIT_TEST_ARTIFACTS
 * (default: <tmp>/profkit-web-artifacts), never into the repository.
 */

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { haveCli, haveSharedFixtures, runCliAsync, sharedFixturePath } from '@profkit/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebServer, writeStaticSite, type WebServer } from '../dist/index.js';

const CHROMIUM = process.env.PROFKIT_CHROMIUM ?? '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`@profkit/web: chromium not found at ${CHROMIUM} (apt-get install -y chromium, or set PROFKIT_CHROMIUM); the browser tests are skipped`);
const ready = hasChromium && haveCli('@profkit/web browser tests') && haveSharedFixtures('@profkit/web', '', 'the browser tests are skipped');

export const ARTIFACTS = process.env.PROFKIT_TEST_ARTIFACTS ?? join(tmpdir(), 'profkit-web-artifacts');

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

  const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

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
          q.set(flag === '--sample-type' ? 'st' : flag === '--node-fraction' ? 'nf' : flag.slice(2), value!);
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
    // A reload keeps the view, the search and the zoom.
    await page.reload();
    await page.waitForSelector('#flame');
    expect(await page.inputValue('#search')).toBe('^main\\.busyLoop$');
    expectCleanPage(page, [s.url]);
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

  it('served with a base: the diff top table is profkit top --base, red/blue with a legend, in top and flame', async () => {
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
});
