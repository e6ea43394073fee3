/**
 * The views benchmark (issue 17): whole `profkit` processes against `go tool pprof`, side by side
 * in one run.
 *
 *   npm run bench -- views [--sizes 20000,200000] [--1m] [--runs 1] [--json FILE] [--markdown FILE]
 *                          [--no-go] [--no-browser] [--only convert,top,...,go] [--timeout SECONDS]
 *
 * For each size N, `goref gen` (Go's own encoder) writes two profiles into a temporary directory
 * (seeds 7 and 8: every stack random, the worst case for stack sharing); then each command runs as
 * its own process under `/usr/bin/time -v` (CPU = user + system, peak RSS = maximum resident set
 * size; the median of `--runs`): `profkit convert` (the reference of the ratios), `top`, `tree`,
 * `peek`, `folded`, `flame` (HTML and SVG) and `diff` (against the seed-8 profile), and
 * `go tool pprof -top/-tree/-peek/-traces` (`-symbolize=none`: profkit does not symbolize
 * either). Beside convert: Go's `profile.Parse` + `Profile.Write` (`goref time FILE 1`, whole
 * process) and pprof-format's decode + encode + gzip (whole process). The flame HTML's size is
 * reported, and its first paint in headless Chromium (playwright-core, the dev dependency of
 * tools/browser-check; `PROFKIT_CHROMIUM` or /usr/bin/chromium).
 *
 * Run it under `nice -n 10` on a shared machine. Never run by `npm test`.
 */

import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { writeFileAtomic } from '@profkit/core/node';
import { buildGoref, machine } from './pprof.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '../../..');
const profkitBin = join(repoRoot, 'packages/cli/bin/profkit.js');
const TIME = '/usr/bin/time';
/** The peek pattern: one generated function name (goref gen names them pkgN.(*TypeM).MethodK). */
const PEEK = 'Method1$';

export interface Measured {
  /** Wall time, CPU time (user + system), in ms; peak RSS in bytes. */
  wallMs: number;
  cpuMs: number;
  rssBytes: number;
  /** Size of the output file, when the command writes one. */
  outBytes?: number;
  failed?: string;
}

/** Seconds a command may run (`--timeout`): `timeout -s KILL` ends it, and it is reported failed. */
let timeoutSeconds = 1800;

/** One whole process under `/usr/bin/time -v` (through `timeout`, whose child's usage it reports), stdout discarded. */
function timeOnce(argv: string[], env: NodeJS.ProcessEnv, outFile?: string): Measured {
  const devNull = openSync('/dev/null', 'w');
  try {
    const r = spawnSync(TIME, ['-v', 'timeout', '-s', 'KILL', String(timeoutSeconds), ...argv], { stdio: ['ignore', devNull, 'pipe'], env, encoding: 'utf8', maxBuffer: 64 << 20 });
    const stderr = r.stderr ?? '';
    const field = (name: string) => new RegExp(`${name}: (.*)`).exec(stderr)?.[1]?.trim();
    const user = Number(field('User time \\(seconds\\)'));
    const sys = Number(field('System time \\(seconds\\)'));
    const rssKiB = Number(field('Maximum resident set size \\(kbytes\\)'));
    // "Elapsed (wall clock) time (h:mm:ss or m:ss): 0:02.34"
    const wall = (field('Elapsed \\(wall clock\\) time \\(h:mm:ss or m:ss\\)') ?? '').split(':').reduce((s, x) => s * 60 + Number(x), 0);
    const m: Measured = { wallMs: Math.round(wall * 1000), cpuMs: Math.round((user + sys) * 1000), rssBytes: rssKiB * 1024 };
    if (r.status !== 0) m.failed = `exit ${r.status ?? r.signal}: ${stderr.split('\n').filter((l) => l && !l.startsWith('\t')).slice(0, 3).join(' / ')}`;
    if (outFile && existsSync(outFile)) m.outBytes = statSync(outFile).size;
    return m;
  } finally {
    closeSync(devNull);
  }
}

/** The median of `runs` processes (CPU and RSS each their own median; one process's peak varies with GC timing). */
export function measure(argv: string[], runs: number, env: NodeJS.ProcessEnv, outFile?: string): Measured {
  const all = Array.from({ length: runs }, () => timeOnce(argv, env, outFile));
  // Progress with the numbers, so that an interrupted run keeps what it measured.
  for (const m of all) process.stderr.write(`  ${m.failed ?? `${fmtS(m.wallMs)} wall, ${fmtS(m.cpuMs)} CPU, ${fmtMiB(m.rssBytes)}`}\n`);
  const failed = all.find((m) => m.failed);
  if (failed) return failed;
  const median = (f: (m: Measured) => number) => all.map(f).sort((a, b) => a - b)[Math.floor(all.length / 2)]!;
  return { wallMs: median((m) => m.wallMs), cpuMs: median((m) => m.cpuMs), rssBytes: median((m) => m.rssBytes), outBytes: all[0]!.outBytes };
}

/** `go tool pprof`'s own binary (not through the `go` command, whose start-up would be counted). */
export function goPprof(): string[] | undefined {
  const r = spawnSync('go', ['env', 'GOTOOLDIR'], { encoding: 'utf8' });
  if (r.status !== 0) return undefined;
  const bin = join(r.stdout.trim(), 'pprof');
  return existsSync(bin) ? [bin] : ['go', 'tool', 'pprof'];
}

interface FirstPaint {
  /** first-contentful-paint after navigation start; the flame is drawn by then (its script runs before the first paint). */
  firstContentfulPaintMs?: number;
  /** Two animation frames after load: the drawn graph is on screen. */
  drawnMs?: number;
  frames?: number;
  failed?: string;
}

async function firstPaint(html: string): Promise<FirstPaint> {
  let chromiumApi: typeof import('playwright-core').chromium;
  try {
    // playwright-core is tools/browser-check's dev dependency; resolved from there.
    const require = createRequire(join(repoRoot, 'tools/browser-check/package.json'));
    // CommonJS: its API may come as the default export under ESM.
    const mod = (await import(pathToFileURL(require.resolve('playwright-core')).href)) as typeof import('playwright-core') & { default?: typeof import('playwright-core') };
    chromiumApi = mod.chromium ?? mod.default!.chromium;
  } catch (e) {
    return { failed: `playwright-core not found (${(e as Error).message.split('\n')[0]})` };
  }
  const executablePath = process.env.PROFKIT_CHROMIUM ?? '/usr/bin/chromium';
  if (!existsSync(executablePath)) return { failed: `no Chromium at ${executablePath} (set PROFKIT_CHROMIUM)` };
  const browser = await chromiumApi.launch({ executablePath, headless: true, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(pathToFileURL(html).href, { waitUntil: 'load' });
    // Evaluated in the page (strings: this package is compiled without the DOM library).
    const drawn = (await page.evaluate(`new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() =>
      done({ drawnMs: Math.round(performance.now()), frames: document.querySelectorAll('.frame').length }))))`)) as FirstPaint;
    // The paint entry is queued a little after the paint itself: wait for it (10 s at most).
    const fcp = (await page.evaluate(`new Promise((done) => {
      new PerformanceObserver((list, observer) => {
        const e = list.getEntriesByName('first-contentful-paint')[0];
        if (e) { observer.disconnect(); done(Math.round(e.startTime)); }
      }).observe({ type: 'paint', buffered: true });
      setTimeout(() => done(undefined), 10000);
    })`)) as number | undefined;
    return { ...drawn, firstContentfulPaintMs: fcp };
  } finally {
    await browser.close();
  }
}

export const fmtS = (ms: number | undefined) => (ms === undefined ? '—' : `${(ms / 1000).toFixed(2)} s`);
export const fmtMiB = (b: number | undefined) => (b === undefined ? '—' : `${Math.round(b / 2 ** 20)} MiB`);
const fmtRatio = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined || b === 0 ? '—' : `${(a / b).toFixed(2)}×`);
const fmtSize = (b: number | undefined) => (b === undefined ? '' : b >= 1e6 ? `${(b / 1e6).toFixed(1)} MB` : `${(b / 1e3).toFixed(1)} KB`);

export async function runViewsBench(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      sizes: { type: 'string', default: '20000,200000' },
      '1m': { type: 'boolean', default: false },
      runs: { type: 'string', default: '1' },
      json: { type: 'string' },
      markdown: { type: 'string' },
      only: { type: 'string' },
      'no-go': { type: 'boolean', default: false },
      'no-browser': { type: 'boolean', default: false },
      timeout: { type: 'string', default: '1800' },
    },
  });
  timeoutSeconds = Number(values.timeout);
  const sizes = values.sizes!.split(',').map((s) => Number(s.trim()));
  if (values['1m']) sizes.push(1_000_000);
  const runs = Number(values.runs);
  if (sizes.some((s) => !Number.isInteger(s) || s < 1 || s > 10_000_000) || !Number.isInteger(runs) || runs < 1) {
    process.stderr.write(`--sizes: sample counts in 1..10000000 (got ${values.sizes}); --runs: a positive integer (got ${values.runs})\n`);
    return 2;
  }
  if (!existsSync(TIME)) {
    process.stderr.write(`the views suite measures whole processes with ${TIME} -v (apt-get install -y time)\n`);
    return 2;
  }
  const goref = buildGoref();
  if (!goref) {
    process.stderr.write('the views suite generates its profiles with goref gen (Go\'s own encoder): it needs Go\n');
    return 2;
  }
  const pprofCmd = values['no-go'] ? undefined : goPprof();
  const only = values.only ? new Set(values.only.split(',')) : undefined;
  const m = machine();
  const head = spawnSync('git', ['-C', repoRoot, 'log', '-1', '--format=%h %cI %s'], { encoding: 'utf8' }).stdout.trim();
  process.stdout.write(`machine: ${m.nproc} cpus, ${m.cpu}, node ${m.node}; commit ${head}; load average before: ${loadavg().map((x) => x.toFixed(2)).join(' ')}\n`);
  const tmp = mkdtempSync(join(tmpdir(), 'profkit-views-'));
  // pprof writes nothing to HOME with -top/-tree/-peek/-traces; PPROF_BINARY_PATH keeps it from looking for binaries.
  const goEnv = { ...process.env, PPROF_TMPDIR: tmp, PPROF_BINARY_PATH: tmp, HOME: tmp };
  const report: Record<string, unknown>[] = [];
  const markdown: string[] = [];
  try {
    for (const n of sizes) {
      const file = join(tmp, `gen-${n}-7.pb.gz`);
      const base = join(tmp, `gen-${n}-8.pb.gz`);
      spawnSync(goref, ['gen', file, String(n), '7'], { stdio: 'inherit' });
      spawnSync(goref, ['gen', base, String(n), '8'], { stdio: 'inherit' });
      const out = (name: string) => join(tmp, `out-${n}.${name}`);
      const views: [string, string[], string?][] = [
        ['convert', ['convert', file, out('pb.gz'), '--quiet'], out('pb.gz')],
        ['top -n 20', ['top', '-n', '20', file]],
        ['tree', ['tree', file]],
        [`peek '${PEEK}'`, ['peek', file, PEEK]],
        ['folded', ['folded', file, '-o', out('folded')], out('folded')],
        ['flame (HTML)', ['flame', file, '-o', out('html')], out('html')],
        ['flame (SVG)', ['flame', file, '-o', out('svg')], out('svg')],
        ['diff -n 20', ['diff', base, file, '-n', '20']],
      ];
      const results: Record<string, Measured> = {};
      for (const [name, args, outFile] of views) {
        if (only && !only.has(name.split(' ')[0]!)) continue;
        process.stderr.write(`${n}: profkit ${name}\n`);
        results[`profkit ${name}`] = measure([process.execPath, profkitBin, ...args], runs, process.env, outFile);
      }
      if (!only || only.has('convert')) {
        process.stderr.write(`${n}: convert peers\n`);
        results['Go Parse+Write (goref time)'] = measure([goref, 'time', file, '1'], runs, process.env);
        results['pprof-format decode+encode+gzip'] = measure([process.execPath, join(here, 'pprof-format-convert.js'), file, out('pprof-format.pb.gz')], runs, process.env);
      }
      if (pprofCmd) {
        for (const flag of ['-top', '-tree', '-peek', '-traces']) {
          if (only && !only.has(`go${flag}`) && !only.has('go')) continue;
          process.stderr.write(`${n}: go tool pprof ${flag}\n`);
          const args = flag === '-peek' ? [flag, PEEK] : [flag];
          results[`go tool pprof ${args.join(' ')}`] = measure([...pprofCmd, '-symbolize=none', ...args, file], runs, goEnv);
        }
      }
      let paint: FirstPaint | undefined;
      if (!values['no-browser'] && results['profkit flame (HTML)'] && !results['profkit flame (HTML)'].failed) paint = await firstPaint(out('html'));
      const convert = results['profkit convert'];
      const load = loadavg().map((x) => Math.round(x * 100) / 100);
      report.push({ samples: n, loadAverageAfter: load, results, flameFirstPaint: paint });
      const rows = [`#### ${n.toLocaleString('en-US')} samples (load average after: ${load.join(' ')})`, '', '| command | wall | CPU | peak RSS | CPU / convert | RSS / convert | output |', '| --- | ---: | ---: | ---: | ---: | ---: | ---: |'];
      for (const [name, r] of Object.entries(results)) {
        if (r.failed) {
          rows.push(`| ${name} | failed: ${r.failed.replace(/\|/g, '\\|')} | | | | | |`);
          continue;
        }
        rows.push(`| ${name} | ${fmtS(r.wallMs)} | ${fmtS(r.cpuMs)} | ${fmtMiB(r.rssBytes)} | ${fmtRatio(r.cpuMs, convert?.cpuMs)} | ${fmtRatio(r.rssBytes, convert?.rssBytes)} | ${fmtSize(r.outBytes)} |`);
      }
      const go = results['Go Parse+Write (goref time)'];
      const pf = results['pprof-format decode+encode+gzip'];
      if (convert && go && pf) {
        rows.push('', `convert: wall ${fmtRatio(convert.wallMs, go.wallMs)} Go's Parse+Write and ${fmtRatio(convert.wallMs, pf.wallMs)} pprof-format's; CPU ${fmtRatio(convert.cpuMs, go.cpuMs)} Go's; peak RSS ${fmtRatio(convert.rssBytes, go.rssBytes)} Go's.`);
      }
      if (paint) {
        rows.push('', paint.failed ? `flame HTML first paint: not measured (${paint.failed})` : `flame HTML (${fmtSize(results['profkit flame (HTML)']?.outBytes)}): first contentful paint ${paint.firstContentfulPaintMs} ms, drawn ${paint.drawnMs} ms after navigation (${paint.frames} frames) in headless Chromium.`);
      }
      const text = rows.join('\n');
      markdown.push(text);
      process.stdout.write(`\n${text}\n`);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const doc = { date: new Date().toISOString(), commit: head, machine: m, runs, sizes: report };
  const utf8 = (text: string) => new TextEncoder().encode(text);
  if (values.json) await writeFileAtomic(values.json, utf8(`${JSON.stringify(doc, null, 2)}\n`));
  if (values.markdown) await writeFileAtomic(values.markdown, utf8(`${markdown.join('\n\n')}\n`));
  return 0;
}
