/**
 * `profkit top --accounting r` against R's own `summaryRprof()` (Rscript) on the shared Rprof
 * fixture and on profiles made here with GC, memory and line profiling: every by.self / by.total
 * row (times, percentages, mem.total) must be ours, per function and per source line.
 * Skips, saying so, without Rscript (apt r-base-core) or the shared fixtures.
 */

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haveTool } from '@profkit/test-utils';
import { fixture, hasFixtures, profkit } from './views-helpers.js';

const hasR = haveTool('Rscript', 'r-base-core', 'top --accounting r tests');
const tmp = mkdtempSync(join(tmpdir(), 'profkit-accounting-r-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function rscript(script: string, args: string[]): string {
  const file = join(tmp, 'script.R');
  writeFileSync(file, script);
  const r = spawnSync('Rscript', ['--vanilla', file, ...args], { encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`Rscript failed: ${r.stderr}`);
  return r.stdout;
}

/** Profiles code with GC profiling (and memory + line profiling in mode "all"). */
const PROFILE_R = `
args <- commandArgs(trailingOnly = TRUE)
src <- file.path(dirname(args[[1]]), "work.R")
writeLines(c(
  "work <- function(n) {",
  "  x <- list()",
  "  for (i in 1:n) x[[i]] <- rnorm(200)",
  "  inner(x)",
  "}",
  "inner <- function(x) {",
  "  sum(vapply(x, function(v) sum(sort(v)), numeric(1)))",
  "}",
  "rec <- function(k) if (k == 0) work(300) else rec(k - 1)"), src)
source(src, keep.source = TRUE)
if (args[[2]] == "gc") Rprof(args[[1]], interval = 0.002, gc.profiling = TRUE) else
  Rprof(args[[1]], interval = 0.002, gc.profiling = TRUE, memory.profiling = TRUE, line.profiling = TRUE)
for (j in 1:60) rec(3)
Rprof(NULL)
`;

/** summaryRprof's rows (by.total holds every entry; by.self those with self time) as TSV. */
const SUMMARY_R = `
args <- commandArgs(trailingOnly = TRUE)
s <- switch(args[[2]],
  hide = summaryRprof(args[[1]], chunksize = 1e7),
  show = summaryRprof(args[[1]], chunksize = 1e7, lines = "show"),
  memory = summaryRprof(args[[1]], chunksize = 1e7, memory = "both"))
cat("interval", s$sample.interval, "\\n", sep = "\\t")
for (table in c("by.self", "by.total")) {
  t <- s[[table]]
  for (k in seq_len(nrow(t))) cat(table, rownames(t)[k], t$self.time[k], t$self.pct[k], t$total.time[k], t$total.pct[k],
    if (is.null(t$mem.total)) NA else t$mem.total[k], "\\n", sep = "\\t")
}
`;

interface RRow {
  self: number;
  selfPct: number;
  total: number;
  totalPct: number;
  mem: number | undefined;
}

function summaryRprof(file: string, view: 'hide' | 'show' | 'memory'): { interval: number; bySelf: Map<string, RRow>; byTotal: Map<string, RRow> } {
  const bySelf = new Map<string, RRow>();
  const byTotal = new Map<string, RRow>();
  let interval = 0;
  for (const line of rscript(SUMMARY_R, [file, view]).split('\n')) {
    const f = line.split('\t');
    if (f[0] === 'interval') interval = Number(f[1]);
    if (f[0] !== 'by.self' && f[0] !== 'by.total') continue;
    const name = f[1]!.startsWith('"') && f[1]!.endsWith('"') ? f[1]!.slice(1, -1) : f[1]!;
    (f[0] === 'by.self' ? bySelf : byTotal).set(name, { self: Number(f[2]), selfPct: Number(f[3]), total: Number(f[4]), totalPct: Number(f[5]), mem: f[6] === 'NA' ? undefined : Number(f[6]) });
  }
  return { interval, bySelf, byTotal };
}

interface Entry {
  name: string;
  flat: string;
  cum: string;
  flatPercent: number;
  cumPercent: number;
}

async function topJson(args: string[]): Promise<{ accounting: string; entries: Entry[]; total: string }> {
  const r = await profkit(['top', ...args, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

/** R rounds times to 3 digits below a 10 ms interval, else 2, and percentages to 2. */
const rTime = (nanos: bigint, interval: number) => Number((Number(nanos) / 1e9).toFixed(interval < 0.01 ? 3 : 2));

async function expectSummaryRprof(file: string, view: 'hide' | 'show' | 'memory'): Promise<void> {
  const r = summaryRprof(file, view);
  expect(r.byTotal.size).toBeGreaterThan(3);
  const by = view === 'show' ? ['--by', 'line'] : [];
  const counts = await topJson([file, '--accounting', 'r', '--sample-type', 'samples', ...by]);
  expect(counts.accounting).toBe('r');
  const times = await topJson([file, '--accounting', 'r', '--sample-type', 'time', ...by]);
  const time = new Map(times.entries.map((e) => [e.name, e]));
  // every by.total row is one of our entries and nothing else is
  expect(counts.entries.map((e) => e.name).sort()).toEqual([...r.byTotal.keys()].sort());
  for (const e of counts.entries) {
    const row = r.byTotal.get(e.name)!;
    const t = time.get(e.name)!;
    expect([e.name, Math.round(row.self / r.interval), Math.round(row.total / r.interval)]).toEqual([e.name, Number(e.flat), Number(e.cum)]);
    expect([e.name, rTime(BigInt(t.flat), r.interval), rTime(BigInt(t.cum), r.interval)]).toEqual([e.name, row.self, row.total]);
    expect(Math.abs(e.flatPercent - row.selfPct)).toBeLessThanOrEqual(0.005 + 1e-9);
    expect(Math.abs(e.cumPercent - row.totalPct)).toBeLessThanOrEqual(0.005 + 1e-9);
    if (row.self > 0) expect(r.bySelf.get(e.name)).toEqual(row);
  }
  expect(counts.entries.filter((e) => e.flat !== '0').length).toBe(r.bySelf.size);
  if (view === 'memory') {
    const mem = await topJson([file, '--accounting', 'r', '--sample-type', 'memory']);
    for (const e of mem.entries) expect([e.name, Number((Number(e.cum) / 1048576).toFixed(1))]).toEqual([e.name, r.byTotal.get(e.name)!.mem]);
  }
}

describe.skipIf(!hasR)('top --accounting r = summaryRprof', () => {
  const gcFile = join(tmp, 'gc.out');
  const allFile = join(tmp, 'all.out');
  beforeAll(() => {
    rscript(PROFILE_R, [gcFile, 'gc']);
    rscript(PROFILE_R, [allFile, 'all']);
    // the made profiles do exercise GC samples and srcrefs
    expect(readFileSync(gcFile, 'utf8')).toContain('"<GC>"');
    expect(readFileSync(allFile, 'utf8')).toMatch(/ 1#\d+ /);
  }, 120_000);

  it.skipIf(!hasFixtures)('the shared Rprof fixture', async () => {
    await expectSummaryRprof(fixture('r-profile/inst/samples/rprof/1.out'), 'hide');
  });

  it('a GC profile: <GC> is the innermost function, as in R', async () => {
    await expectSummaryRprof(gcFile, 'hide');
    const r = await topJson([gcFile, '--accounting', 'r']);
    expect(r.entries.some((e) => e.name === '<GC>' && e.flat !== '0')).toBe(true);
    // pprof's accounting keeps GC a sample flag: no <GC> entry, and the header says nothing
    const pprofTop = await topJson([gcFile]);
    expect(pprofTop.accounting).toBe('pprof');
    expect(pprofTop.entries.some((e) => e.name === '<GC>')).toBe(false);
    const text = await profkit(['top', gcFile, '--accounting', 'r']);
    expect(text.stdout.split('\n').filter((l) => l.startsWith('Accounting: '))).toEqual([
      'Accounting: R summaryRprof (<GC> counted as the innermost function, samples without functions left out)',
    ]);
    expect((await profkit(['top', gcFile])).stdout).not.toContain('Accounting:');
  });

  it('GC + memory + line profiling: per function, per line (lines = "show") and mem.total (memory = "both")', async () => {
    await expectSummaryRprof(allFile, 'hide');
    await expectSummaryRprof(allFile, 'show');
    await expectSummaryRprof(allFile, 'memory');
  });
});

describe('--accounting usage', () => {
  it('an unknown accounting or --by file is a usage error', async () => {
    const f = join(tmp, 'tiny.out');
    writeFileSync(f, 'sample.interval=20000\n"f" "main"\n');
    const bad = await profkit(['top', f, '--accounting', 'perl']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--accounting perl');
    expect((await profkit(['top', f, '--accounting', 'r', '--by', 'file'])).code).toBe(2);
  });
});
