// Measures profkit web on one profile in headless Chromium (not a test: numbers for
// docs/web.md). Usage: node scripts/bench-first-paint.mjs FILE [RUNS]
// Prints, per run: time from navigation to the first flame paint (the page's
// `profkit:first-flame-paint` mark), and the response of a zoom click and of a search (from the
// event to the next animation frame, i.e. the redraw included); then the time to show the top
// table, the peek of its first entry, that entry's sandwich and source listing, and the call graph
// (graph.js loaded and laid out). Chromium: PROFKIT_CHROMIUM or
// /usr/bin/chromium. A 200k-sample profile: goref gen OUT 200000 7 (tools/test-utils goref).
import { chromium } from 'playwright-core';
import { startWebServer } from '../dist/index.js';

const [file, runsText = '3'] = process.argv.slice(2);
if (!file) {
  console.error('usage: node scripts/bench-first-paint.mjs FILE [RUNS]');
  process.exit(2);
}
const server = await startWebServer({ profile: file });
const browser = await chromium.launch({ executablePath: process.env.PROFKIT_CHROMIUM ?? '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu'] });
try {
  for (let run = 0; run < Number(runsText); run++) {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    page.on('pageerror', (e) => console.error('pageerror', String(e)));
    await page.goto(`${server.url}#view=flame`);
    await page.waitForFunction(() => performance.getEntriesByName('profkit:first-flame-paint').length > 0, undefined, { timeout: 120_000 });
    const firstPaint = await page.evaluate(() => performance.getEntriesByName('profkit:first-flame-paint')[0].startTime);
    const frames = await page.getAttribute('#flame', 'data-frames');
    // Zoom: click the widest frame one row above the root (flame: the root is the bottom row).
    const box = await page.locator('#flame').boundingBox();
    const zoomMs = await page.evaluate(({ x, y }) => new Promise((resolve) => {
      const canvas = document.querySelector('#flame');
      const t0 = performance.now();
      canvas.dispatchEvent(new MouseEvent('click', { clientX: x, clientY: y, bubbles: true }));
      requestAnimationFrame(() => resolve(performance.now() - t0));
    }), { x: box.x + box.width / 2, y: box.y + box.height - 27 });
    const searchMs = await page.evaluate(() => new Promise((resolve) => {
      const input = document.querySelector('#search');
      const t0 = performance.now();
      input.value = 'runtime';
      input.dispatchEvent(new Event('input', { bubbles: true }));
      requestAnimationFrame(() => resolve(performance.now() - t0));
    }));
    // Then the table, and from its first row the peek and the sandwich (worker time included).
    const timed = async (act, selector) => {
      const t0 = Date.now();
      await act();
      await page.waitForSelector(selector, { timeout: 600_000 });
      await page.waitForFunction(() => !document.querySelector('[role=status]'), undefined, { timeout: 600_000 });
      return Date.now() - t0;
    };
    const topMs = await timed(() => page.click('#view-top'), '#top-table tbody tr');
    const peekMs = await timed(() => page.click('#top-table tbody tr:first-child'), '#peek-text');
    const fn = await page.evaluate(() => new URLSearchParams(location.hash.slice(1)).get('fn'));
    const sandwichMs = await timed(() => page.click('.open-sandwich'), '#sandwich-callees');
    const sourceMs = await timed(() => page.click('#view-source'), '#source .routine, #error');
    const graphMs = await timed(() => page.click('#view-graph'), '#graph-svg, #error');
    console.log(`run ${run + 1}: first flame paint ${firstPaint.toFixed(0)} ms (${frames} frames), zoom ${zoomMs.toFixed(1)} ms, search ${searchMs.toFixed(1)} ms; top table ${topMs} ms, peek of ${fn} ${peekMs} ms, its sandwich ${sandwichMs} ms, its source ${sourceMs} ms; call graph ${graphMs} ms`);
    await page.close();
  }
} finally {
  await browser.close();
  await server.close();
}
