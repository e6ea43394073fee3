// Measures profkit web on one profile in headless Chromium (not a test: numbers for
// docs/web.md). Usage: node scripts/bench-first-paint.mjs FILE [RUNS] [top|flame|all] [served|picked]
// (`picked`: the static build from file://, the file chosen with its file picker, the path of a
// picked or dropped file; the first paint then counts from the moment the file is given).
// Prints, per run: time from navigation to the first flame paint (the page's
// `profkit:first-flame-paint` mark), and the response of a zoom click and of a search (from the
// event to the next animation frame, i.e. the redraw included); then the time to show the top
// table, the peek of its first entry, that entry's sandwich and source listing, and the call graph
// (graph.js loaded and laid out; `top`: stop after the table, `flame`: after the flame graph), and the renderer's peak RSS.
// With the first paint, the CPU time its Web Worker threads had used by then (Linux). Chromium: PROFKIT_CHROMIUM or
// /usr/bin/chromium. A 200k-sample profile: goref gen OUT 200000 7 (tools/test-utils goref).
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { startWebServer, writeStaticSite } from '../dist/index.js';

/** This run's Chromium is the process whose command line holds this (unknown) switch. */
const MARKER = `--profkit-bench=${process.pid}`;
const procText = (pid, file) => {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'latin1');
  } catch {
    return '';
  }
};
/** This Chromium's renderer processes (the page and its Web Workers). Linux only. */
function ourRenderers() {
  const pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  const parent = new Map(pids.map((pid) => [pid, procText(pid, 'stat').replace(/^.*\) \S+ /, '').split(' ')[0]]));
  const ours = (pid) => {
    for (let p = pid, n = 0; p && p !== '0' && n < 8; p = parent.get(p), n++) if (procText(p, 'cmdline').includes(MARKER)) return true;
    return false;
  };
  return pids.filter((pid) => procText(pid, 'cmdline').includes('--type=renderer') && ours(pid));
}

/**
 * The peak resident memory (VmHWM) of this Chromium's renderer processes, MB: the page and its
 * Web Worker (the worker's typed arrays are outside the JS heap, so heap metrics miss them). Linux only.
 */
function rendererPeakMb() {
  let kb = 0;
  for (const pid of ourRenderers()) kb += Number(/VmHWM:\s+(\d+)/.exec(procText(pid, 'status'))?.[1] ?? 0);
  return kb / 1024;
}

/**
 * CPU seconds so far of the renderers' Web Worker threads (the analysis worker; the inflate's
 * helper worker has ended by the first paint): on a loaded machine, where wall times mostly say
 * how busy the others are, what the worker itself spent. Linux only.
 */
function workerThreadsCpu() {
  const seconds = [];
  for (const pid of ourRenderers()) {
    let tids = [];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tids) {
      if (!procText(pid, `task/${tid}/comm`).startsWith('DedicatedWorker')) continue;
      const f = procText(pid, `task/${tid}/stat`).replace(/^.*\) /, '').split(' ');
      seconds.push((Number(f[11]) + Number(f[12])) / 100);
    }
  }
  return seconds.map((x) => x.toFixed(2)).join(', ');
}

const [file, runsText = '3', only, mode = 'served'] = process.argv.slice(2);
if (!file || !['served', 'picked'].includes(mode)) {
  console.error('usage: node scripts/bench-first-paint.mjs FILE [RUNS] [top|flame|all] [served|picked]');
  process.exit(2);
}
const server = await startWebServer({ profile: file });
const staticDir = mode === 'picked' ? mkdtempSync(join(tmpdir(), 'profkit-bench-static-')) : undefined;
if (staticDir) await writeStaticSite(staticDir);
try {
  for (let run = 0; run < Number(runsText); run++) {
    // A browser per run: its renderer's peak memory is this run's.
    const browser = await chromium.launch({ executablePath: process.env.PROFKIT_CHROMIUM ?? '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu', MARKER] });
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    page.on('pageerror', (e) => console.error('pageerror', String(e)));
    // Served: from the navigation. Picked: from the moment the file is given to the picker (the
    // page's own load not counted; `fetched` is then that moment).
    let given = 0;
    if (staticDir) {
      await page.goto(`${pathToFileURL(join(staticDir, 'index.html')).href}#view=flame`);
      await page.waitForSelector('#profile-input');
      given = await page.evaluate(() => performance.now());
      await page.setInputFiles('#profile-input', file);
    } else await page.goto(`${server.url}#view=flame`);
    await page.waitForFunction(() => performance.getEntriesByName('profkit:first-flame-paint').length > 0, undefined, { timeout: 120_000 });
    const [fetched, read, firstPaint] = await page
      .evaluate(() => ['profkit:profile-fetched', 'profkit:profile-read', 'profkit:first-flame-paint'].map((m) => performance.getEntriesByName(m)[0]?.startTime ?? NaN))
      .then((times) => times.map((t, i) => (staticDir && i === 0 ? 0 : t - given)));
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
    console.log(`run ${run + 1}: first flame paint ${firstPaint.toFixed(0)} ms (fetched at ${fetched.toFixed(0)}, read by the worker at ${read.toFixed(0)}; ${frames} frames; worker CPU ${workerThreadsCpu()} s), zoom ${zoomMs.toFixed(1)} ms, search ${searchMs.toFixed(1)} ms`);
    if (only === 'flame') {
      console.log(`run ${run + 1}: renderer peak RSS ${rendererPeakMb().toFixed(0)} MB`);
      await browser.close();
      continue;
    }
    // Then the table, and from its first row the peek and the sandwich (worker time included).
    const timed = async (act, selector) => {
      const t0 = Date.now();
      await act();
      await page.waitForSelector(selector, { timeout: 600_000 });
      await page.waitForFunction(() => !document.querySelector('[role=status]'), undefined, { timeout: 600_000 });
      return Date.now() - t0;
    };
    // The table itself, not a row: a profile whose entries are all below the node fraction has none.
    const topMs = await timed(() => page.click('#view-top'), '#top-table, #no-entries, #error');
    const error = await page.locator('#error').textContent({ timeout: 1 }).catch(() => '');
    if (only === 'top' || error) {
      // `top`: the flame graph and the table only (the function views of a 1M-sample profile take minutes).
      console.log(`run ${run + 1}: top table ${topMs} ms${error ? ` (${error})` : ''}; renderer peak RSS ${rendererPeakMb().toFixed(0)} MB`);
      await browser.close();
      continue;
    }
    const peekMs = await timed(() => page.click('#top-table tbody tr:first-child'), '#peek-text');
    const fn = await page.evaluate(() => new URLSearchParams(location.hash.slice(1)).get('fn'));
    const sandwichMs = await timed(() => page.click('.open-sandwich'), '#sandwich-callees');
    const sourceMs = await timed(() => page.click('#view-source'), '#source .routine, #error');
    const graphMs = await timed(() => page.click('#view-graph'), '#graph-svg, #error');
    console.log(`run ${run + 1}: top table ${topMs} ms, peek of ${fn} ${peekMs} ms, its sandwich ${sandwichMs} ms, its source ${sourceMs} ms; call graph ${graphMs} ms; renderer peak RSS ${rendererPeakMb().toFixed(0)} MB`);
    await browser.close();
  }
} finally {
  await server.close();
  if (staticDir) rmSync(staticDir, { recursive: true, force: true });
}
