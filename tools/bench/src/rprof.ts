/**
 * Rprof benchmark (issue 3). Subcommands:
 *
 *   node tools/bench/dist/rprof.js read [--lines 166000] [--runs 5] [--shape issue|deep] [--json PATH]
 *       Generates a realistic line-profiling Rprof file (deep stacks, several source files,
 *       interleaved #File lines), then times: read → profile, read → pprof bytes (through the
 *       registry with the pprof adapter), Rprof write, folded write, and R's summaryRprof on the
 *       same file (when Rscript is installed).
 *   node tools/bench/dist/rprof.js stream [--mb 1024] [--aggregate true|false] [--shape issue|deep] [--keep PATH] [--json PATH]
 *       Generates a file of about that size (streamed to disk) and reads it with the streaming
 *       reader (`readChunks` → `readRprofChunks`), reporting time and peak RSS of the process.
 *
 * Numbers are printed as JSON lines; docs/performance.md ("Rprof") quotes them. With
 * `--json PATH` the result is also written to PATH (atomically, with core's `writeFileAtomic`).
 * Generated inputs are written atomically too, so an interrupted `stream --keep PATH` never
 * leaves a truncated file that a later run would reuse.
 */

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createRegistry, readChunks, writeFileAtomic } from '@profkit/core/node';
import pprofAdapter from '@profkit/pprof';
import rprofAdapter, { readRprofBytes, readRprofChunks, writeFolded, writeRprofText } from '@profkit/rprof';
import { seededRandom as rng } from '@profkit/test-utils';


type Shape = 'issue' | 'deep';

interface Fn {
  name: string;
  file: number; // 0 = no srcref (builtin / byte-compiled)
  lines: number[];
  callees: number[];
}

/**
 * A synthetic R program: ~120 functions in 6 files plus builtins, a call graph with a few
 * recursive helpers, so stacks are 5–60 frames deep like real R code under source()/lapply.
 */
function program(r: () => number): Fn[] {
  const fns: Fn[] = [];
  const builtins = ['c', 'paste0', 'vapply', 'lapply', 'FUN', 'unlist', 'do.call', 'tryCatch', 'tryCatchList', 'tryCatchOne', 'doTryCatch', 'eval', 'withVisible', '[[', '<Anonymous>', 'standardGeneric'];
  for (const b of builtins) fns.push({ name: b, file: 0, lines: [], callees: [] });
  const stems = ['fit', 'predict', 'prepare', 'load', 'check', 'render', 'summarise', 'transform', 'aggregate', 'plot'];
  for (let i = 0; i < 110; i++) {
    const file = 1 + (i % 6);
    const start = 10 + Math.floor(r() * 400);
    const lines = Array.from({ length: 3 + Math.floor(r() * 6) }, (_, k) => start + k * (1 + Math.floor(r() * 5)));
    const name = i % 9 === 0 ? `pkg${i % 4}::${stems[i % stems.length]}_${i}` : i % 13 === 0 ? `obj$${stems[i % stems.length]}${i}` : `${stems[i % stems.length]}.step${i}`;
    fns.push({ name, file, lines, callees: [] });
  }
  const nb = builtins.length;
  for (let i = nb; i < fns.length; i++) {
    const k = 1 + Math.floor(r() * 4);
    for (let j = 0; j < k; j++) {
      // call deeper functions mostly; builtins sometimes
      const target = r() < 0.25 ? Math.floor(r() * nb) : Math.min(fns.length - 1, i + 1 + Math.floor(r() * 12));
      fns[i]!.callees.push(target);
    }
  }
  for (let i = 0; i < nb; i++) fns[i]!.callees.push(nb + Math.floor(r() * (fns.length - nb)));
  return fns;
}

const FILES = ['R/model.R', 'R/data.R', 'R/utils.R', '~/project/analysis.R', '/usr/lib/R/site-library/pkg/R/core.R', 'R/plot.R'];

/**
 * Yields the file's text in pieces: header, then `lines` trace lines with #File lines interleaved.
 * The program (functions, files, lines) is fixed; `seed` varies only which of its call paths are
 * sampled. Like a real program, it has a bounded number of distinct call paths (`pool`), picked
 * with a skewed distribution, and R's habit of repeating a line while the program stays put.
 */
export function* generate(lines: number, seed = 42, shape: Shape = 'issue', pool = 20_000): Generator<string> {
  const pr = rng(42);
  const fns = program(pr);
  const nb = 16;
  const roots = [nb, nb + 1, nb + 2, nb + 3];
  // Each path: innermost-first frames [function index, srcref line or 0].
  const paths: [number, number][][] = [];
  for (let k = 0; k < pool; k++) {
    // 'issue': the size of the file (166,000 lines in 4.4 MB, ~27 bytes a line, so
    // mostly 1-3 frames); 'deep': 5-60 frames, as under source()/lapply/tryCatch.
    const depth = shape === 'deep' ? 5 + Math.floor(pr() ** 2 * 55) : 1 + Math.floor(pr() ** 4 * 4);
    const stack: number[] = [roots[Math.floor(pr() * roots.length)]!];
    while (stack.length < depth) {
      const f = fns[stack[stack.length - 1]!]!;
      stack.push(f.callees[Math.floor(pr() * f.callees.length)]!);
    }
    const path: [number, number][] = [];
    for (let i = stack.length - 1; i >= 0; i--) {
      const f = fns[stack[i]!]!;
      const withLine = f.file !== 0 && (i < stack.length - 1 || pr() < 0.5);
      path.push([stack[i]!, withLine ? f.lines[Math.floor(pr() * f.lines.length)]! : 0]);
    }
    paths.push(path);
  }
  const r = rng(seed);
  yield 'line profiling: sample.interval=20000\n';
  const declared = new Map<number, number>();
  let prev: string | undefined;
  for (let n = 0; n < lines; n++) {
    if (prev !== undefined && r() < 0.35) {
      // R's samples repeat while the program stays in the same place.
      yield prev;
      continue;
    }
    const path = paths[Math.floor(r() ** 2 * paths.length)]!;
    // Innermost first; a srcref before a name is a line in that function.
    let text = '';
    let fileLines = '';
    for (const [fi, line] of path) {
      const f = fns[fi]!;
      if (line !== 0) {
        let no = declared.get(f.file);
        if (no === undefined) {
          no = declared.size + 1;
          declared.set(f.file, no);
          fileLines += `#File ${no}: ${FILES[f.file - 1]}\n`;
        }
        text += `${no}#${line} `;
      }
      text += `"${f.name}" `;
    }
    prev = text + '\n';
    yield fileLines + prev;
  }
}

async function writeGenerated(path: string, lines: number, shape: Shape): Promise<void> {
  await writeFileAtomic(path, new TextEncoder().encode(Array.from(generate(lines, 42, shape)).join('')));
}

/** Prints a result as one JSON line and, with `--json PATH`, writes it to PATH atomically. */
async function report(result: Record<string, unknown>, jsonPath: string | undefined): Promise<void> {
  const line = JSON.stringify(result);
  console.log(line);
  if (jsonPath !== undefined) await writeFileAtomic(jsonPath, new TextEncoder().encode(line + '\n'));
}

function median(xs: number[]): number {
  const s = xs.slice().sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Median wall time and median CPU time (user + system) of `runs` calls, after one warm-up call. */
async function time<T>(runs: number, f: () => Promise<T> | T): Promise<{ ms: number; cpuMs: number; last: T }> {
  const all: number[] = [];
  const cpu: number[] = [];
  let last: T = await f();
  for (let i = 0; i < runs; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    last = await f();
    all.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  return { ms: median(all), cpuMs: median(cpu), last };
}

async function collect(data: Uint8Array | AsyncIterable<Uint8Array>): Promise<number> {
  if (data instanceof Uint8Array) return data.length;
  let n = 0;
  for await (const c of data) n += c.length;
  return n;
}

/** Median elapsed and CPU (user + system) milliseconds of an R expression, `runs` times in one R process. */
function rTime(expr: string, runs: number): { ms: number; cpuMs: number } | undefined {
  const code = `invisible(${expr}); e <- c(); u <- c(); for (i in seq_len(${runs})) { t <- system.time(${expr}); e <- c(e, t[["elapsed"]]); u <- c(u, t[["user.self"]] + t[["sys.self"]]) }; cat(median(e), median(u))`;
  const r = spawnSync('Rscript', ['--vanilla', '-e', code], { encoding: 'utf8' });
  if (r.status !== 0) return undefined;
  const [e, u] = r.stdout.trim().split(/\s+/).slice(-2).map(Number);
  return { ms: Math.round(e! * 1000), cpuMs: Math.round(u! * 1000) };
}

async function benchRead(lines: number, runs: number, shape: Shape, jsonPath?: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'profkit-bench-rprof-'));
  try {
    const path = join(dir, 'line.out');
    await writeGenerated(path, lines, shape);
    const bytes = new Uint8Array(readFileSync(path));
    const registry = createRegistry([rprofAdapter, pprofAdapter]);
    const read = await time(runs, () => readRprofBytes(bytes));
    const p = read.last.profile;
    const viaRegistry = await time(runs, async () => {
      const r = await registry.read(bytes, { fileName: 'line.out', format: 'rprof' });
      const out = await registry.serialize(r.profile, { format: 'pprof' });
      return collect(out.data);
    });
    const codecsOnly = await time(runs, async () => {
      const r = readRprofBytes(bytes);
      const out = await registry.serialize(r.profile, { format: 'pprof', validate: false });
      return collect(out.data);
    });
    const rprofOut = await time(runs, () => writeRprofText(p).then((r) => r.text.length));
    const folded = await time(runs, () => writeFolded(p).text.length);
    const result: Record<string, unknown> = {
      bench: 'rprof-read',
      shape,
      file_bytes: statSync(path).size,
      lines,
      samples: p.samples.value.length,
      functions: p.functions.function_id.length,
      locations: p.locations.location_id.length,
      frames: p.samples.locations.location_id.length,
      read_ms: Math.round(read.ms),
      read_cpu_ms: Math.round(read.cpuMs),
      read_plus_write_pprof_ms: Math.round(viaRegistry.ms),
      read_plus_write_pprof_cpu_ms: Math.round(viaRegistry.cpuMs),
      read_plus_write_pprof_unvalidated_ms: Math.round(codecsOnly.ms),
      read_plus_write_pprof_unvalidated_cpu_ms: Math.round(codecsOnly.cpuMs),
      pprof_bytes: viaRegistry.last,
      write_rprof_ms: Math.round(rprofOut.ms),
      write_folded_ms: Math.round(folded.ms),
      load_average: loadavg()[0]!.toFixed(1),
    };
    const hasR = spawnSync('Rscript', ['--version']).status === 0;
    if (hasR) {
      const rRuns = Math.max(1, Math.min(3, runs));
      const hide = rTime(`summaryRprof("${path}")`, rRuns);
      const show = rTime(`summaryRprof("${path}", lines = "show")`, rRuns);
      result.r_summaryRprof_ms = hide?.ms ?? null;
      result.r_summaryRprof_cpu_ms = hide?.cpuMs ?? null;
      result.r_summaryRprof_lines_show_ms = show?.ms ?? null;
      result.r_summaryRprof_lines_show_cpu_ms = show?.cpuMs ?? null;
      const hasProfile = spawnSync('Rscript', ['--vanilla', '-e', 'quit(status = !requireNamespace("profile", quietly = TRUE))']).status === 0;
      if (hasProfile) {
        const rr = rTime(`profile::read_rprof("${path}")`, 1);
        result.r_profile_read_rprof_ms = rr?.ms ?? null;
      } else result.r_profile_read_rprof_ms = 'R package "profile" not installed';
    } else result.r_summaryRprof_ms = 'Rscript not installed';
    await report(result, jsonPath);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function benchStream(mb: number, aggregate: boolean, keep: string | undefined, shape: Shape, jsonPath?: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'profkit-bench-rprof-'));
  const path = keep ?? join(dir, 'big.out');
  try {
    let exists = false;
    try {
      exists = statSync(path).size > 0;
    } catch {
      exists = false;
    }
    if (!exists) {
      // ~4.4 MB per 166,000 lines of the generator above; stream it to disk.
      const target = mb * 1024 * 1024;
      const enc = new TextEncoder();
      // Blocks of 100,000 lines, each with its own header: like Rprof(append = TRUE) runs.
      // Written atomically (temp file + rename): an interrupted run leaves no partial --keep file.
      const pieces = function* (): Generator<Uint8Array> {
        let written = 0;
        let seed = 1;
        let batch: string[] = [];
        let batched = 0;
        for (;;) {
          for (const piece of generate(100_000, seed++, shape)) {
            batch.push(piece);
            batched += piece.length;
            written += piece.length;
            if (written >= target) {
              yield enc.encode(batch.join(''));
              return;
            }
            if (batched >= 1 << 20) {
              yield enc.encode(batch.join(''));
              batch = [];
              batched = 0;
            }
          }
        }
      };
      await writeFileAtomic(path, pieces());
    }
    const size = statSync(path).size;
    const rss0 = process.memoryUsage().rss;
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const { profile, warnings } = await readRprofChunks(readChunks(path), { aggregate, fileName: path });
    const ms = performance.now() - t0;
    const ru = process.resourceUsage();
    await report(
      {
        bench: 'rprof-stream',
        shape,
        aggregate,
        file_bytes: size,
        samples: profile.samples.value.length,
        runs: (profile['.extensions'].rprof!.facts!.runs as unknown[]).length,
        warnings: warnings.length,
        ms: Math.round(ms),
        cpu_ms: Math.round(((c) => (c.user + c.system) / 1000)(process.cpuUsage(c0))),
        load_average: loadavg()[0]!.toFixed(1),
        mb_per_s: Math.round(size / 1048576 / (ms / 1000)),
        rss_before_mb: Math.round(rss0 / 1048576),
        peak_rss_mb: Math.round(ru.maxRSS / 1024),
      },
      jsonPath,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runRprofBench(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      lines: { type: 'string', default: '166000' },
      runs: { type: 'string', default: '5' },
      mb: { type: 'string', default: '1024' },
      aggregate: { type: 'string', default: 'true' },
      keep: { type: 'string' },
      shape: { type: 'string', default: 'issue' },
      json: { type: 'string' },
    },
  });
  const cmd = positionals[0] ?? 'read';
  const shape = values.shape as Shape;
  if (shape !== 'issue' && shape !== 'deep') throw new Error(`--shape must be issue or deep, not ${shape}`);
  if (cmd === 'read') await benchRead(Number(values.lines), Number(values.runs), shape, values.json);
  else if (cmd === 'stream') await benchStream(Number(values.mb), values.aggregate !== 'false', values.keep, shape, values.json);
  else throw new Error(`unknown rprof bench command ${cmd} (read | stream)`);
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  runRprofBench(process.argv.slice(2)).catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
