/**
 * `profkit flame` in a real headless Chromium (apt `chromium`, driven by playwright-core): the
 * HTML page loads from file:// with no network and no console errors, draws one frame per call
 * tree node with widths proportional to the values, and its controls (zoom, icicle, search,
 * tooltip) work. The SVG output is checked as an image in the same browser. Expected values come
 * from `profkit folded` (an independent path through core), never from the flame code.
 */

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { fixture, hasFixtures, profkit } from './views-helpers.js';

const CHROMIUM = process.env.PROFKIT_CHROMIUM ?? '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`flame tests: chromium not found at ${CHROMIUM} (apt-get install -y chromium); the browser tests are skipped`);

const tmp = mkdtempSync(join(tmpdir(), 'profkit-flame-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Sum of folded values per path prefix ("a;b;c") — the width every flame frame must have. */
function prefixSums(folded: string): Map<string, number> {
  const sums = new Map<string, number>();
  for (const line of folded.split('\n')) {
    if (!line) continue;
    const sp = line.lastIndexOf(' ');
    const v = Number(line.slice(sp + 1));
    if (v <= 0) continue;
    const frames = line.slice(0, sp).split(';');
    for (let i = 1; i <= frames.length; i++) {
      const k = frames.slice(0, i).join(';');
      sums.set(k, (sums.get(k) ?? 0) + v);
    }
  }
  return sums;
}

/** A value beyond 2^53 (Number would print ...992), one below, and their exact sum. */
const BIG = '9007199254740993';
const SMALL = '4503599627370497';
const BIG_TOTAL = String(BigInt(BIG) + BigInt(SMALL));
function bigValuesFolded(): string {
  const file = join(tmp, 'int64.folded');
  writeFileSync(file, `main;big ${BIG}\nmain;small ${SMALL}\n`);
  return file;
}

describe('flame output without a browser', () => {
  it('flame needs -o and rejects unknown --format (exit 2)', async () => {
    const f = join(tmp, 'nothing.html');
    const a = await profkit(['flame', 'whatever.pb.gz']);
    expect(a.code).toBe(2);
    expect(a.stderr).toContain('flame needs -o OUT.html or -o OUT.svg');
    const b = await profkit(['flame', 'whatever.pb.gz', '-o', f, '--format', 'png']);
    expect(b.code).toBe(2);
    expect(b.stderr).toContain('--format png: expected html or svg');
  });

  it.skipIf(!hasFixtures)('the HTML is self-contained: no external URL, the data and the viewer are inline', async () => {
    const out = join(tmp, 'self.html');
    const r = await profkit(['flame', fixture('pprof/internal/report/testdata/sample.cpu'), '-o', out, '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    const html = readFileSync(out, 'utf8');
    expect(html).not.toMatch(/(src|href)\s*=\s*["']?(https?:)?\/\//i);
    expect(html).not.toMatch(/@import|url\(/i);
    expect(html).toContain('id="flame-data"');
    expect(html).toContain('runtime.mapiternext');
  });

  it('values beyond 2^53 are exact in the HTML data (decimal strings), smaller ones stay numbers', async () => {
    const html = join(tmp, 'int64.html');
    const r = await profkit(['flame', bigValuesFolded(), '--from', 'folded', '-o', html, '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    const data = JSON.parse(/<script type="application\/json" id="flame-data">(.*?)<\/script>/s.exec(readFileSync(html, 'utf8'))![1]!);
    const values = new Map<string, unknown>();
    for (let f = 0; f < data.frames.length; f += 4) values.set(data.names[data.frames[f]], data.frames[f + 1]);
    expect(Object.fromEntries(values)).toEqual({ all: BIG_TOTAL, main: BIG_TOTAL, big: BIG, small: Number(SMALL) });
  });

  it.skipIf(!hasFixtures)('--json describes the written file', async () => {
    const out = join(tmp, 'j.svg');
    const r = await profkit(['flame', fixture('pprof/profile/testdata/java.cpu'), '-o', out, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j).toMatchObject({ schema: 'profkit.flame/1', output: out, format: 'svg', sampleType: { type: 'cpu', unit: 'nanoseconds' } });
    expect(j.bytes).toBe(readFileSync(out).length);
  });
});

describe.skipIf(!hasChromium || !hasFixtures)('flame graphs in headless Chromium', () => {
  let browser: Browser | BrowserContext;
  let page: Page;
  const errors: string[] = [];
  const requests: string[] = [];

  beforeAll(async () => {
    const { chromium } = await import('playwright-core');
    const userDataDir = mkdtempSync(join(tmp, 'chromium-'));
    browser = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1200, height: 700 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    page = await browser.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') errors.push(`${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => errors.push(`pageerror: ${String(e)}`));
    page.on('request', (r) => requests.push(r.url()));
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  it.each([
    ['pprof/internal/report/testdata/sample.cpu', []],
    ['r-profile/inst/samples/rprof/1.out', ['--sample-type', 'time']],
    ['pprof/profile/testdata/java.heap', ['--sample-type', 'inuse_space']],
  ] as [string, string[]][])('%s: frames drawn with widths proportional to their values', async (rel, args) => {
    const input = fixture(rel);
    const out = join(tmp, rel.replace(/\W/g, '_') + '.html');
    const r = await profkit(['flame', input, '-o', out, ...args, '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    const folded = await profkit(['folded', input, ...args]);
    const expected = prefixSums(folded.stdout);
    const total = [...expected.entries()].filter(([k]) => !k.includes(';')).reduce((s, [, v]) => s + v, 0);
    errors.length = 0;
    requests.length = 0;
    await page.goto('file://' + out);
    const frames = await page.$$eval('#chart .frame', (els) =>
      els.map((e) => {
        const path: string[] = [];
        // The viewer keeps the node on the element; its ancestry is the stack.
        let n = (e as unknown as { __node: { name: string; parent: unknown } }).__node;
        while (n) {
          path.unshift(n.name);
          n = n.parent as typeof n;
        }
        return { path: path.slice(1).join(';'), name: e.getAttribute('data-name'), value: Number(e.getAttribute('data-value')), width: e.getBoundingClientRect().width, text: e.textContent };
      }),
    );
    expect(errors).toEqual([]);
    expect(requests.every((u) => u.startsWith('file://'))).toBe(true);
    const chartWidth = await page.$eval('#chart', (e) => e.getBoundingClientRect().width);
    const root = frames.find((f) => f.path === '')!;
    expect(root.name).toBe('all');
    expect(root.value).toBe(total);
    const drawn = frames.filter((f) => f.path !== '');
    expect(drawn.length).toBeGreaterThan(5);
    // every frame at least 0.5px wide is drawn, and nothing else
    const visible = [...expected.entries()].filter(([, v]) => (v / total) * chartWidth >= 0.5);
    expect(drawn.map((f) => f.path).sort()).toEqual(visible.map(([k]) => k).sort());
    for (const f of drawn) {
      expect(f.value, f.path).toBe(expected.get(f.path));
      // width = value / total of the chart width, minus the 1px gap between frames
      expect(Math.abs(f.width + 1 - (f.value / total) * chartWidth), f.path).toBeLessThan(1.01);
    }
    // the widest frames carry their names as text
    expect(drawn.filter((f) => f.width > 200).every((f) => f.text === f.name)).toBe(true);
  });

  it('click zooms, the toggle flips to icicle, search highlights and sums, hover shows a tooltip', async () => {
    const input = fixture('pprof/internal/report/testdata/sample.cpu');
    const out = join(tmp, 'interactive.html');
    expect((await profkit(['flame', input, '-o', out, '--quiet'])).code).toBe(0);
    const expected = prefixSums((await profkit(['folded', input])).stdout);
    errors.length = 0;
    await page.goto('file://' + out);
    const chartWidth = await page.$eval('#chart', (e) => e.getBoundingClientRect().width);
    const widthOf = (name: string) => page.$eval(`#chart .frame[data-name="${name}"]:not(.dim)`, (e) => e.getBoundingClientRect().width);

    // zoom into runtime.mapassign_fast64: it fills the width, its callees scale accordingly
    const zoomPath = 'runtime.main;main.main;main.busyLoop;runtime.mapassign_fast64';
    await page.click('#chart .frame[data-name="runtime.mapassign_fast64"]');
    expect(Math.abs((await widthOf('runtime.mapassign_fast64')) + 1 - chartWidth)).toBeLessThan(1.01);
    const child = 'runtime.growWork';
    const ratio = expected.get(`${zoomPath};${child}`)! / expected.get(zoomPath)!;
    expect(Math.abs((await widthOf(child)) + 1 - ratio * chartWidth)).toBeLessThan(1.01);
    expect(await page.$$eval('#chart .frame.dim', (els) => els.map((e) => e.getAttribute('data-name')))).toEqual(['all', 'runtime.main', 'main.main', 'main.busyLoop']);
    expect(await page.textContent('#status')).toContain('zoomed to runtime.mapassign_fast64');

    // icicle: the root row moves from the bottom to the top
    await page.click('#reset');
    const top = (name: string) => page.$eval(`#chart .frame[data-name="${name}"]`, (e) => e.getBoundingClientRect().top);
    const flameRoot = await top('all');
    expect(flameRoot).toBeGreaterThan(await top('main.busyLoop'));
    await page.click('#toggle');
    expect(await top('all')).toBeLessThan(await top('main.busyLoop'));

    // search: matching frames highlighted, their total in the status line
    await page.fill('#search', '^runtime\\.map');
    const matched = await page.$$eval('#chart .frame.match', (els) => els.map((e) => e.getAttribute('data-name')));
    expect(new Set(matched)).toEqual(new Set(['runtime.mapiternext', 'runtime.mapassign_fast64']));
    const status = await page.textContent('#status');
    const total = [...expected.entries()].filter(([k]) => !k.includes(';')).reduce((s, [, v]) => s + v, 0);
    const hits = [...expected.entries()].filter(([k]) => /^runtime\.map/.test(k.split(';').pop()!) && !k.split(';').slice(0, -1).some((f) => /^runtime\.map/.test(f)));
    const sum = hits.reduce((s, [, v]) => s + v, 0);
    expect(hits.length).toBeGreaterThan(1);
    expect(status).toContain(`(${((100 * sum) / total).toFixed(2)}% of total)`);

    // tooltip with value and percentage
    await page.hover('#chart .frame[data-name="main.busyLoop"]');
    const tip = await page.textContent('#tooltip');
    expect(tip).toContain('main.busyLoop');
    expect(tip).toMatch(/1\.76s \(100\.00% of total\)/);
    expect(await page.isVisible('#tooltip')).toBe(true);
    await page.screenshot({ path: join(tmp, 'interactive.png') });
    expect(errors).toEqual([]);
  });

  it('values beyond 2^53: the page prints them exact (data-value, status, tooltip, search sum)', async () => {
    const html = join(tmp, 'int64-page.html');
    expect((await profkit(['flame', bigValuesFolded(), '--from', 'folded', '-o', html, '--quiet'])).code).toBe(0);
    errors.length = 0;
    await page.goto('file://' + html);
    const values = await page.$$eval('#chart .frame', (els) => els.map((e) => [e.getAttribute('data-name'), e.getAttribute('data-value')]));
    expect(Object.fromEntries(values)).toEqual({ all: BIG_TOTAL, main: BIG_TOTAL, big: BIG, small: SMALL });
    expect(await page.textContent('#status')).toContain(`total ${BIG_TOTAL}`);
    await page.hover('#chart .frame[data-name="big"]');
    expect(await page.textContent('#tooltip')).toContain(`${BIG} (`);
    expect(await page.textContent('#tooltip')).toContain(`self ${BIG} (`);
    await page.fill('#search', '^(big|small)$');
    expect(await page.textContent('#status')).toContain(`search matches ${BIG_TOTAL} (`);
    expect(errors).toEqual([]);
  });

  it('a 20000-frame stack (a folded file) renders as HTML and SVG without errors', async () => {
    const deep = join(tmp, 'deep.folded');
    const frames = Array.from({ length: 20000 }, (_, i) => `f${i}`);
    writeFileSync(deep, `${frames.join(';')} 7\n${frames.slice(0, 10).join(';')};g 3\n`);
    const html = join(tmp, 'deep.html');
    const r = await profkit(['flame', deep, '--from', 'folded', '-o', html, '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    errors.length = 0;
    await page.goto('file://' + html);
    expect(errors).toEqual([]);
    const names = await page.$$eval('#chart .frame', (els) => els.map((e) => e.getAttribute('data-name')));
    expect(names).toHaveLength(20002);
    expect(names).toContain('f19999');
    expect(names).toContain('g');
    // Chromium takes half a minute to lay out a 300000 px tall SVG, so that one is checked as text.
    const svg = join(tmp, 'deep.svg');
    expect((await profkit(['flame', deep, '--from', 'folded', '-o', svg, '--quiet'])).code).toBe(0);
    const text = readFileSync(svg, 'utf8');
    expect(text.match(/<g class="frame"/g)).toHaveLength(20002);
    expect(text.trimEnd().endsWith('</svg>')).toBe(true);
    const top = await profkit(['top', deep, '--from', 'folded', '-n', '2']);
    expect(top.code, top.stderr).toBe(0);
    expect(top.stdout).toContain('f19999');
  });

  it('the SVG renders in the browser with one <g class="frame"> per frame, widths proportional', async () => {
    const input = fixture('pprof/profile/testdata/java.cpu');
    const out = join(tmp, 'java.svg');
    expect((await profkit(['flame', input, '-o', out, '--width', '1000', '--quiet'])).code).toBe(0);
    const expected = prefixSums((await profkit(['folded', input])).stdout);
    const total = [...expected.entries()].filter(([k]) => !k.includes(';')).reduce((s, [, v]) => s + v, 0);
    errors.length = 0;
    await page.goto('file://' + out);
    const rects = await page.$$eval('g.frame', (gs) => gs.map((g) => ({ name: g.getAttribute('data-name'), value: Number(g.getAttribute('data-value')), width: g.querySelector('rect')!.getBoundingClientRect().width })));
    expect(errors).toEqual([]);
    expect(rects[0]).toMatchObject({ name: 'all', value: total });
    const scale = (1000 - 20) / total;
    for (const r of rects) expect(Math.abs(r.width - r.value * scale)).toBeLessThan(0.02);
    const leaves = [...expected.keys()].map((k) => k.split(';').pop());
    expect(rects.filter((r) => r.name !== 'all').every((r) => leaves.includes(r.name!))).toBe(true);
  });
});
