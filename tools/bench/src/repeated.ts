/**
 * Views of a profile whose stacks repeat, as real CPU profiles do (the views suite's `goref gen`
 * profiles have a distinct stack per sample): the report views read pprof with `aggregate`, so
 * that their memory follows the distinct samples, not the samples.
 *
 *   npm run bench -- repeated [--samples 2000000] [--stacks 5000] [--locations 100] [--labels 4] [--runs 3] [--keep FILE [--no-generate]]
 *
 * Writes a profile of `--samples` samples over `--stacks` distinct stacks of depth 10–30 (drawn
 * from `--locations` locations, one function each; a `worker` label of `--labels` values on a
 * quarter of the samples; sample types samples/count and cpu/nanoseconds), then measures whole
 * processes (`/usr/bin/time -v`) of `profkit top`, `folded` and `flame` as they read it (with
 * `aggregate`) and with `--read-option aggregate=false`, and `go tool pprof -top` for reference.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createGzip } from 'node:zlib';
import { once } from 'node:events';
import { writeFileAtomic } from '@profkit/core/node';
import { fmtMiB, fmtS, goPprof, measure, type Measured } from './views.js';

const here = dirname(fileURLToPath(import.meta.url));
const profkitBin = join(resolve(here, '../../..'), 'packages/cli/bin/profkit.js');

/** Protobuf encoding, just what this profile needs. */
function varint(out: number[], v: number): void {
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
}
function field(out: number[], f: number, bytes: number[]): void {
  varint(out, f * 8 + 2);
  varint(out, bytes.length);
  for (const b of bytes) out.push(b);
}
function message(...parts: [number, number | number[]][]): number[] {
  const out: number[] = [];
  for (const [f, v] of parts) {
    if (typeof v === 'number') {
      varint(out, f * 8);
      varint(out, v);
    } else field(out, f, v);
  }
  return out;
}
function packed(values: number[]): number[] {
  const out: number[] = [];
  for (const v of values) varint(out, v);
  return out;
}

/** A deterministic generator (LCG): the same options write the same bytes. */
function random(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n) => {
    a = (Math.imul(a, 1664525) + 1013904223) >>> 0;
    return a % n;
  };
}

export interface RepeatedOptions {
  samples: number;
  stacks: number;
  locations: number;
  labels: number;
}

/** Writes the gzipped profile to `file` (atomically); returns its raw (inflated) size. */
export async function writeRepeatedProfile(file: string, o: RepeatedOptions): Promise<number> {
  const rnd = random(7);
  const strings = ['', 'samples', 'count', 'cpu', 'nanoseconds', 'worker', 'app.go'];
  const labelValue = Array.from({ length: o.labels }, (_, k) => strings.push(`w${k}`) - 1);
  const nameOf = Array.from({ length: o.locations }, (_, k) => strings.push(`pkg${k % 37}.func${k}`) - 1);
  const gzip = createGzip({ level: 1 });
  // Written atomically as it is gzipped (a --keep file is never left half-written).
  const written = writeFileAtomic(file, gzip as AsyncIterable<Uint8Array>);
  let raw = 0;
  let pending: number[] = [];
  const flush = async (force = false): Promise<void> => {
    if (pending.length < 1 << 16 && !force) return;
    const chunk = Buffer.from(pending);
    raw += chunk.length;
    pending = [];
    // A failed write (a bad --keep path) rejects `written`: the wait for 'drain' must not outlive it.
    if (!gzip.write(chunk)) await Promise.race([once(gzip, 'drain'), written]);
  };
  const emit = async (bytes: number[]): Promise<void> => {
    for (const b of bytes) pending.push(b);
    await flush();
  };
  await emit(message([1, message([1, 1], [2, 2])], [1, message([1, 3], [2, 4])]));
  // Stacks share their roots (a tree of calls): each is a prefix of one before it plus new frames.
  const stacks: number[][] = [];
  for (let s = 0; s < o.stacks; s++) {
    const depth = 10 + rnd(21);
    const from = s === 0 ? [] : stacks[rnd(s)]!.slice(-1 - rnd(8)).reverse();
    const leafFirst = [...Array.from({ length: Math.max(0, depth - from.length) }, () => 1 + rnd(o.locations)), ...from.reverse()];
    stacks.push(leafFirst.slice(0, depth));
  }
  const encodedStacks = stacks.map((ids) => packed(ids));
  for (let i = 0; i < o.samples; i++) {
    // Skewed: a few stacks take most samples, as in a CPU profile.
    const s = rnd(4) === 0 ? rnd(o.stacks) : rnd(Math.max(1, o.stacks >>> 4));
    const count = 1 + rnd(3);
    const parts: [number, number | number[]][] = [[1, encodedStacks[s]!], [2, packed([count, count * 10_000_000])]];
    if (o.labels > 0 && (i & 3) === 0) parts.push([3, message([1, 5], [2, labelValue[rnd(o.labels)]!])]);
    await emit(message([2, message(...parts)]));
  }
  for (let l = 1; l <= o.locations; l++) await emit(message([4, message([1, l], [3, 0x1000 + 16 * l], [4, message([1, l], [2, 10 + (l % 500)])])]));
  for (let f = 1; f <= o.locations; f++) await emit(message([5, message([1, f], [2, nameOf[f - 1]!], [3, nameOf[f - 1]!], [4, 6])]));
  for (const s of strings) await emit(message([6, [...Buffer.from(s)]]));
  await emit(message([12, 10_000_000], [11, message([1, 3], [2, 4])]));
  await flush(true);
  gzip.end();
  await written;
  return raw;
}

export async function runRepeatedBench(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      samples: { type: 'string', default: '2000000' },
      stacks: { type: 'string', default: '5000' },
      locations: { type: 'string', default: '100' },
      labels: { type: 'string', default: '4' },
      runs: { type: 'string', default: '3' },
      keep: { type: 'string' },
      'no-generate': { type: 'boolean' },
    },
  });
  const o: RepeatedOptions = { samples: Number(values.samples), stacks: Number(values.stacks), locations: Number(values.locations), labels: Number(values.labels) };
  const runs = Number(values.runs);
  const tmp = mkdtempSync(join(tmpdir(), 'profkit-repeated-'));
  try {
    const file = values.keep ?? join(tmp, 'repeated.pb.gz');
    // --no-generate: measure the --keep file written by an earlier run.
    if (!values['no-generate']) {
      const raw = await writeRepeatedProfile(file, o);
      process.stderr.write(`${file}: ${o.samples} samples over ${o.stacks} stacks, ${(raw / 1e6).toFixed(1)} MB raw\n`);
    }
    // 2M samples of 20 frames on average are 40M location ids, past maxTotalFrames' 32M (it
    // counts the input's, with or without aggregate).
    const limit = ['--limit', `maxTotalFrames=${Math.max(32_000_000, 31 * o.samples)}`];
    const views: [string, string[]][] = [
      ['top', ['top', '-n', '20', file, ...limit]],
      ['folded', ['folded', file, '-o', join(tmp, 'out.folded'), ...limit]],
      ['flame', ['flame', file, '-o', join(tmp, 'out.html'), ...limit]],
    ];
    const rows = ['| command | wall | CPU | peak RSS |', '| --- | ---: | ---: | ---: |'];
    const row = (name: string, m: Measured) => rows.push(m.failed ? `| ${name} | failed: ${m.failed} | | |` : `| ${name} | ${fmtS(m.wallMs)} | ${fmtS(m.cpuMs)} | ${fmtMiB(m.rssBytes)} |`);
    for (const [name, args] of views) {
      for (const [how, extra] of [['aggregate=false', ['--read-option', 'aggregate=false']], ['aggregated (default)', []]] as const) {
        process.stderr.write(`profkit ${name} (${how})\n`);
        row(`profkit ${name} (${how})`, measure([process.execPath, profkitBin, ...args, ...extra], runs, process.env));
      }
    }
    const pprof = goPprof();
    if (pprof) {
      process.stderr.write('go tool pprof -top\n');
      row('go tool pprof -top', measure([...pprof, '-symbolize=none', '-top', file], runs, { ...process.env, PPROF_TMPDIR: tmp, HOME: tmp }));
    }
    process.stdout.write(`${rows.join('\n')}\n\nload average after: ${loadavg().map((x) => x.toFixed(2)).join(' ')}\n`);
    return 0;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
