/**
 * The report views that only sum values over samples (top, tree, peek, folded, flame, diff, and
 * list, graph, callgrind, topproto, which sum the samples `go tool pprof`'s load merges anyway)
 * read with the `samplesSummed` hint (the pprof reader then merges equal samples, so that memory
 * follows the distinct samples); the commands that show or count single samples (traces, raw,
 * tags, filter, merge, convert) do not. And with or without it, the views print the same
 * bytes for every pprof fixture.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { buildRegistry, type RegistryReadOptions } from '@profkit/core/node';
import type { CliCommand, CliContext } from '../src/types.js';
import { readDiffReport, readForReport, readForView, readWithProgress } from '../src/commands/shared.js';
import { readAsGoPprof } from '../src/commands/go-load.js';
import { list } from '../src/commands/list.js';
import { graph } from '../src/commands/graph.js';
import { callgrind } from '../src/commands/callgrind.js';
import { topproto } from '../src/commands/topproto.js';
import { fixture, hasFixtures, profkit, repoRoot } from './views-helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'profkit-summed-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A pprof profile of two samples with the same stack (hand-encoded profile.proto, raw). */
function twoEqualSamples(): Uint8Array {
  // sample_type {type: 1 "samples", unit: 2 "count"}; 2 × sample {location_id: 1, value: 1};
  // location {id: 1, line {function_id: 1}}; function {id: 1, name: 3 "f"}; string_table.
  const strings = ['', 'samples', 'count', 'f'].flatMap((s) => [0x32, s.length, ...Buffer.from(s)]);
  return new Uint8Array([0x0a, 0x04, 0x08, 0x01, 0x10, 0x02, 0x12, 0x04, 0x08, 0x01, 0x10, 0x01, 0x12, 0x04, 0x08, 0x01, 0x10, 0x01, 0x22, 0x06, 0x08, 0x01, 0x22, 0x02, 0x08, 0x01, 0x2a, 0x04, 0x08, 0x01, 0x10, 0x03, ...strings]);
}

/** `twoEqualSamples` with the values 5 and -3 (pprof's total sums |value| per sample; flame graphs leave out negative ones). */
function oppositeSigns(): Uint8Array {
  const bytes = Array.from(twoEqualSamples());
  const minus3 = [0x08, 0x01, 0x10, 0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
  return new Uint8Array([...bytes.slice(0, 6), 0x12, 0x04, 0x08, 0x01, 0x10, 0x05, 0x12, minus3.length, ...minus3, ...bytes.slice(18)]);
}

/** `twoEqualSamples` with one sample of stack [1] for each of `values` (any int64). */
function equalSamplesOf(values: bigint[]): Uint8Array {
  const varint = (v: bigint) => {
    const out: number[] = [];
    for (let u = BigInt.asUintN(64, v); ; u >>= 7n) {
      if (u < 0x80n) return [...out, Number(u)];
      out.push(Number(u & 0x7fn) | 0x80);
    }
  };
  const bytes = Array.from(twoEqualSamples());
  const samples = values.flatMap((v) => {
    const body = [0x08, 0x01, 0x10, ...varint(v)];
    return [0x12, body.length, ...body];
  });
  return new Uint8Array([...bytes.slice(0, 6), ...samples, ...bytes.slice(18)]);
}

/** A command context over the real registry whose reads are recorded. */
async function recordingContext(values: CliContext['values'] = {}): Promise<{ ctx: CliContext; reads: RegistryReadOptions[]; samples: number[] }> {
  const { registry } = await buildRegistry({ cwd: repoRoot });
  const reads: RegistryReadOptions[] = [];
  const samples: number[] = [];
  const recording = Object.create(registry) as typeof registry;
  recording.read = async (source, options = {}) => {
    reads.push(options);
    const r = await registry.read(source, options);
    samples.push(r.profile.samples.value.length);
    return r;
  };
  const ctx = {
    registry: recording,
    values: { 'no-drop-frames': true, ...values },
    positionals: [],
    json: false,
    signal: new AbortController().signal,
    progress: () => ({ update() {}, done() {} }),
    out: { warnings() {}, document() {}, line() {} },
    stdout: { write: (_chunk: unknown, written?: (err?: Error) => void) => written?.() },
    quiet: true,
  } as unknown as CliContext;
  return { ctx, reads, samples };
}

describe('samplesSummed', () => {
  const file = join(tmp, 'two.pb');
  writeFileSync(file, twoEqualSamples());

  it('is set by the reads of the summing views, and the pprof reader then merges equal samples', async () => {
    for (const read of [
      (ctx: CliContext) => readForView(ctx, file), // folded, flame
      (ctx: CliContext) => readForReport(ctx, file, 1), // top, tree, peek
      (ctx: CliContext) => readDiffReport(ctx, file, file, 1, { normalize: false, baseWarningsFirst: true }), // diff
    ]) {
      const { ctx, reads, samples } = await recordingContext();
      await read(ctx);
      expect(reads.length).toBeGreaterThan(0);
      expect(reads.every((o) => o.samplesSummed === true)).toBe(true);
      expect(samples.every((n) => n === 1)).toBe(true);
    }
    // --base: both profiles.
    const { ctx, reads } = await recordingContext({ base: file });
    await readForView(ctx, file);
    expect(reads.map((o) => o.samplesSummed)).toEqual([true, true]);
  });

  it("is set by list, graph, callgrind and topproto (they sum what go tool pprof's load merges)", async () => {
    const runs: [CliCommand, string[], CliContext['values']][] = [
      [list, [file, 'f'], {}],
      [graph, [file], { format: 'dot', output: join(tmp, 'two.dot') }],
      [callgrind, [file], { output: join(tmp, 'two.callgrind') }],
      [topproto, [file], { output: join(tmp, 'top.pb.gz') }],
    ];
    for (const [command, positionals, values] of runs) {
      const { ctx, reads, samples } = await recordingContext(values);
      ctx.positionals = positionals;
      expect(await command.run(ctx), command.name).toBe(0);
      expect(reads.map((o) => o.samplesSummed), command.name).toEqual([true]);
      expect(samples, command.name).toEqual([1]);
    }
  });

  it('is not set by the reads of the commands that show single samples', async () => {
    const { ctx, reads, samples } = await recordingContext();
    await readAsGoPprof(ctx, file); // traces, raw, tags, disasm
    await readWithProgress(ctx, file); // filter, merge
    expect(reads.map((o) => o.samplesSummed)).toEqual([undefined, undefined]);
    expect(samples).toEqual([2, 2]);
  });

  it('is overruled by --read-option aggregate=false', async () => {
    const { ctx, samples } = await recordingContext({ 'read-option': ['aggregate=false'] });
    await readForView(ctx, file);
    expect(samples).toEqual([2]);
  });
});

describe('views with and without aggregate', () => {
  it('print the same for equal samples of opposite signs (not merged under the hint)', async () => {
    const file = join(tmp, 'signs.pb');
    writeFileSync(file, oppositeSigns());
    const svg = join(tmp, 'signs.svg');
    for (const view of [['top', file], ['tree', file], ['flame', file, '-o', svg]]) {
      const outputs = [];
      for (const extra of [[], ['--read-option', 'aggregate=false']]) {
        const r = await profkit([...view, ...extra]);
        outputs.push([r.code, r.stdout, r.stderr, view[0] === 'flame' ? readFileSync(svg, 'utf8') : '']);
      }
      expect(outputs[0], view[0]).toEqual(outputs[1]);
    }
    // The file is what the test means: one location, two samples, a total of |5| + |-3|.
    expect((await profkit(['top', file, '--read-option', 'aggregate=false'])).stdout).toContain('of 8 total');
  });

  it("load as go tool pprof does alike whatever the reader merged first: int64 sums whose partial sums leave int64 in one order only (list, graph, callgrind, topproto)", async () => {
    // The reader merges the 1 into the 2^62 (same sign, no wrap), the negative ones into neither:
    // in file order the load's partial sums reach 2^62 - (2^62+1) - 2^63 < -2^63, merged first
    // never. Either way the sum is -2^63: written, not refused.
    const file = join(tmp, 'int64-order.pb');
    writeFileSync(file, equalSamplesOf([1n << 62n, -(1n << 62n) - 1n, -(1n << 63n), 1n]));
    for (const view of [['list', file, 'f'], ['graph', file, '--format', 'dot', '-o', join(tmp, 'o.dot')], ['callgrind', file, '-o', join(tmp, 'o.cg')], ['topproto', file, '-o', join(tmp, 'o.pb')]]) {
      const runs = [];
      for (const extra of [[], ['--read-option', 'aggregate=false']]) {
        const r = await profkit([...view, ...extra]);
        runs.push([r.code, r.stdout, r.stderr, view[0] === 'list' ? '' : readFileSync(view.at(-1)!, 'latin1')]);
      }
      expect(runs[0], view[0]).toEqual(runs[1]);
      expect(runs[0]![0], `${view[0]}: ${runs[0]![2]}`).toBe(0);
    }
    expect((await profkit(['list', file, 'f'])).stdout).toContain('Total: 9223372036854775808');
    // A base whose equal samples sum to -2^63: negated apart, they fit (the reader keeps them apart).
    const base = join(tmp, 'int64-base.pb');
    writeFileSync(base, equalSamplesOf([-(1n << 62n), -(1n << 62n)]));
    writeFileSync(file, equalSamplesOf([-1n]));
    for (const view of [['top', file, '--base', base], ['graph', file, '--base', base, '--format', 'dot']]) {
      const runs = [];
      for (const extra of [[], ['--read-option', 'aggregate=false']]) runs.push(await profkit([...view, ...extra]));
      expect(runs[0], view[0]).toEqual(runs[1]);
      expect(runs[0]!.code, `${view[0]}: ${runs[0]!.stderr}`).toBe(0);
    }
  });
});

const PPROF_FIXTURES = [
  'pprof/internal/driver/testdata/cppbench.cpu_no_samples_type',
  'pprof/internal/driver/testdata/go.nomappings.crash',
  'pprof/internal/report/testdata/sample.cpu',
  'pprof/internal/proftest/testdata/large.cpu',
  'r-profile/inst/samples/proto/1.out.prof.pb.gz',
];

const VIEWS: string[][] = [
  ['top', '-n', '1000'],
  ['top', '--cum', '--by', 'line'],
  ['tree'],
  ['peek', '.'],
  ['folded'],
  ['flame', '-o', 'OUT.html'],
  ['flame', '-o', 'OUT.svg'],
  ['top', '--tag-root', 'thread', '--json'],
];

/** The views that sum what `go tool pprof`'s load merges: run on the files whose samples all repeat (where merging happens). */
const LOADED_VIEWS: string[][] = [
  ['list', '.'],
  ['graph', '--format', 'dot', '-o', 'OUT.dot'],
  ['callgrind', '-o', 'OUT.callgrind'],
  ['topproto', '-o', 'OUT.pb'],
];

/** `raw` (profile.proto) with its samples appended again in reverse order: every sample twice, equal samples far apart. */
function samplesTwice(raw: Uint8Array): Uint8Array {
  const samples: Uint8Array[] = [];
  for (let p = 0; p < raw.length; ) {
    const start = p;
    let tag = 0;
    for (let shift = 0; ; shift += 7) {
      const b = raw[p++]!;
      tag += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) break;
    }
    let len = 0;
    if ((tag & 7) === 2) {
      for (let shift = 0; ; shift += 7) {
        const b = raw[p++]!;
        len += (b & 0x7f) * 2 ** shift;
        if (b < 0x80) break;
      }
    } else if ((tag & 7) === 0) while (raw[p++]! >= 0x80);
    else throw new Error(`wire type ${tag & 7} in a fixture`);
    p += len;
    if (tag === 0x12) samples.push(raw.subarray(start, p));
  }
  return Buffer.concat([raw, ...samples.reverse()]);
}

describe.skipIf(!hasFixtures)('views with and without aggregate', () => {
  it('print the same bytes for every pprof fixture, and for each with every sample repeated (and diff, --base, list, graph, callgrind, topproto)', async () => {
    const files: string[] = [];
    for (const rel of PPROF_FIXTURES) {
      const f = fixture(rel);
      const twice = join(tmp, `${rel.split('/').pop()!.replace(/\.pb\.gz$/, '')}.twice.pb`);
      const bytes = readFileSync(f);
      writeFileSync(twice, samplesTwice(bytes[0] === 0x1f ? gunzipSync(bytes) : bytes));
      files.push(f, twice);
    }
    // The views see only the profiles read: a run whose files all read the same with and without
    // the hint prints the same, and is not run. Of the fixtures, those are the files where nothing
    // repeats, and large.cpu twice (its first 4,096 samples distinct: judged plain, read as it
    // is); their runs were 3/4 of the test's time.
    const { registry } = await buildRegistry({ cwd: repoRoot });
    const changed = new Set<string>();
    for (const f of files) {
      const [summed, each] = [await registry.read(f, { samplesSummed: true }), await registry.read(f)];
      if (!isDeepStrictEqual([summed.profile, summed.warnings], [each.profile, each.warnings])) changed.add(f);
    }
    const name = (f: string) => f.split('/').pop()!;
    expect([...changed].map(name)).toEqual(['cppbench.cpu_no_samples_type', ...['cppbench.cpu_no_samples_type', 'go.nomappings.crash', 'sample.cpu', '1.out.prof'].map((n) => `${n}.twice.pb`)]);
    for (const [k, f] of files.entries()) {
      const other = files[(k + 2) % files.length]!;
      const views = f.endsWith('.twice.pb') ? [...VIEWS, ...LOADED_VIEWS] : VIEWS;
      const runs = [...views.map((v) => [v[0]!, f, ...v.slice(1)]), ['diff', f, f], ['diff', other, f], ['diff', other, f, '--normalize'], ['top', f, '--base', other], ['top', f, '--diff-base', other]];
      for (const view of runs) {
        if (!view.some((a) => changed.has(a))) continue;
        const outputs: string[] = [];
        const results = [];
        for (const extra of [[], ['--read-option', 'aggregate=false']]) {
          const out = join(tmp, 'out');
          const args = view.map((a) => (a.startsWith('OUT.') ? `${out}${a.slice(3)}` : a));
          results.push(await profkit([...args, ...extra]));
          // latin1: every byte as it is (topproto writes profile.proto).
          outputs.push(args.find((a) => a.startsWith(out)) ? readFileSync(args.find((a) => a.startsWith(out))!, 'latin1') : '');
        }
        const [summed, each] = results as [Awaited<ReturnType<typeof profkit>>, Awaited<ReturnType<typeof profkit>>];
        expect(summed.code, `${view.join(' ')}: ${summed.stderr}`).toBe(each.code);
        expect(summed.stdout, view.join(' ')).toBe(each.stdout);
        expect(summed.stderr, view.join(' ')).toBe(each.stderr);
        expect(outputs[0], view.join(' ')).toBe(outputs[1]);
      }
    }
  }, 600_000);
});
