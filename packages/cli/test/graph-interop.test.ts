/**
 * `profkit graph` against `go tool pprof -dot` on profiles of different producers: the Go runtime
 * (google/pprof's sample.cpu, the legacy heap fixture, and CPU (with pprof labels) and heap
 * profiles made here by `fixtures/goprof/main.go`), gperftools (heap and CPU fixtures, and heap
 * dumps and a CPU profile of a C program run here), Java, R (the profile.proto fixture, and an
 * Rprof file read directly, compared with pprof on its profkit conversion), and pprof's large.cpu;
 * with -nodecount, -nodefraction/-edgefraction, -focus/-ignore, each granularity, -call_tree, the
 * other report filters, -unit, -noinlines, -relative_percentages, -divide_by, -drop_negative, -mean,
 * -base and -diff_base.
 *
 * Normalisation (documented in docs/cli.md): pprof runs with TZ=UTC and -symbolize=none. DOT texts
 * are compared as sets: every node line (nodes and tag nodelets) with all its attributes (label,
 * font size, shape, tooltip, colours) except its `id="…"`, every edge line with its endpoints
 * replaced by their node lines and all its attributes (label, weight, penwidth, colour, tooltips,
 * style, minlen), and every other line (header, legend) as it is. Without -call_tree the texts are
 * also identical line for line, node numbers included (asserted), up to the order of calls of
 * equal weight between equal names, which pprof leaves open; with it, nodes with the same name are
 * in no defined order in pprof (a Go sort of equal keys), so only the sets compare.
 * `svg`/`png`: the SVG is well-formed XML holding every node's name; the PNG has the PNG signature,
 * an IHDR of a plausible size and decodes (IEND present).
 */

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { inflateSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fixture, goAvailable, hasFixtures, profkit } from './views-helpers.js';
import { goPprofAsCompared, goProfilesNow, gperftoolsProfilesNow, haveGperftools, warnIfNoGperftools } from './producers.js';

const tmp = mkdtempSync(join(tmpdir(), 'profkit-graph-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A DOT text as sets of node and edge descriptions (see the file comment). */
function dotSets(text: string): { other: string[]; nodes: string[]; edges: string[] } {
  const described = new Map<string, string>();
  const other: string[] = [];
  const nodes: string[] = [];
  const edges: [string, string, string][] = [];
  for (const line of text.split('\n')) {
    const edge = /^(N\w+) -> (N\w+) \[(.*)\]$/.exec(line);
    if (edge) {
      edges.push([edge[1]!, edge[2]!, edge[3]!]);
      continue;
    }
    const node = /^(N\w+) \[(.*)\]$/.exec(line);
    if (node) {
      const d = node[2]!.replace(/ ?id="[^"]*"/, '');
      described.set(node[1]!, d);
      nodes.push(d);
      continue;
    }
    other.push(line);
  }
  return {
    other,
    nodes: nodes.sort(),
    edges: edges.map(([a, b, attrs]) => `${described.get(a) ?? a} -> ${described.get(b) ?? b} [${attrs}]`).sort(),
  };
}

/**
 * The DOT text with its call edges (`N<a> -> N<b>`, after the nodes) sorted: pprof sorts them by
 * weight and names, and leaves edges equal in both in no defined order.
 */
function withCallsSorted(text: string): string {
  const lines = text.split('\n');
  const isCall = (l: string) => /^N\d+ -> N\d+ \[/.test(l);
  const calls = lines.filter(isCall).sort();
  return lines.map((l) => (isCall(l) ? calls.shift()! : l)).join('\n');
}

/** pprof flag spellings of the variants (profkit takes them too, through its go-flags layer). */
const VARIANTS: string[][] = [[], ['-nodecount=12'], ['-nodefraction=0', '-edgefraction=0'], ['-lines', '-nodecount=30'], ['-files'], ['-addresses', '-nodecount=20'], ['-filefunctions']];

/** `go tool pprof -dot ARGS THEIRS` and `profkit graph OURS ARGS` give the same graph; returns ours. */
async function expectSameGraph(ours: string, args: string[] = [], theirs = ours): Promise<string> {
  const g = goPprofAsCompared(['-dot', ...args, theirs], tmp);
  expect(g.code, g.stderr).toBe(0);
  const r = await profkit(['graph', ours, ...args, '--quiet']);
  expect(r.code, r.stderr).toBe(0);
  expect(dotSets(r.stdout)).toEqual(dotSets(g.stdout));
  if (!args.includes('-call_tree')) expect(withCallsSorted(r.stdout)).toBe(withCallsSorted(g.stdout));
  // Not a trivial graph: the legend and at least one node.
  expect(r.stdout).toMatch(/^N1 \[label=/m);
  return r.stdout;
}

const T = 'pprof/profile/testdata/';

describe.skipIf(!hasFixtures || !goAvailable)('graph --format dot = go tool pprof -dot (shared fixtures)', () => {
  it.each([
    ['pprof/internal/report/testdata/sample.cpu', '-focus=mapassign', true], // Go runtime CPU (profile.proto)
    [T + 'gobench.heap', '-ignore=nothing', true], // Go legacy heap (bytes nodelets)
    [T + 'cppbench.heap', '-focus=libpthread', false], // gperftools heap
    [T + 'cppbench.cpu', '-ignore=libc', true], // gperftools CPU
    [T + 'java.cpu', '-focus=function1[d-f]', true], // Java CPU (no mappings)
    [T + 'java.heap', '-ignore=String', true], // Java heapz
    ['r-profile/inst/samples/proto/1.out.prof.pb.gz', '-focus=sqlite', false], // R (Rprof via profile.proto)
  ])('%s', async (rel, filter, callTreeDeterministic) => {
    const f = fixture(rel);
    for (const v of VARIANTS) await expectSameGraph(f, v);
    await expectSameGraph(f, [filter, '-nodecount=20']);
    await expectSameGraph(f, [filter, '-relative_percentages']);
    // Where many call-tree nodes share a name (R, unsymbolized gperftools), pprof's own order of
    // them (a Go sort of equal keys, different from run to run) decides which survive the cut of
    // 80: a smaller -nodecount keeps the comparison to nodes pprof always picks.
    await expectSameGraph(f, callTreeDeterministic ? ['-call_tree'] : ['-call_tree', '-nodecount=10']);
  });

  it("the frame filters and text options of every pprof report (Go's sample.cpu)", async () => {
    const f = fixture('pprof/internal/report/testdata/sample.cpu');
    for (const v of [['-hide=runtime'], ['-show=main'], ['-show_from=busyLoop'], ['-prune_from=mapiternext'], ['-unit=ms'], ['-noinlines'], ['-divide_by=10'], ['-compact_labels']]) {
      await expectSameGraph(f, v);
    }
  });

  it('large.cpu (23k functions): the node-fraction cut', async () => {
    const out = await expectSameGraph(fixture('pprof/internal/proftest/testdata/large.cpu'), ['-nodecount=40']);
    expect(out).toMatch(/Dropped \d+ nodes \(cum <= /);
  });

  it('an Rprof profile read directly draws the graph pprof draws for its profile.proto conversion', async () => {
    const src = fixture('r-profile/inst/samples/rprof/1.out');
    const pb = join(tmp, 'rprof-1.pb.gz');
    const c = await profkit(['convert', src, pb, '--quiet']);
    expect(c.code, c.stderr).toBe(0);
    for (const v of [[], ['-nodecount=5'], ['-call_tree', '-nodecount=8']]) await expectSameGraph(src, v, pb);
  });

  it('-compact_labels: pprof -dot keeps the full legend (File:, Type:, …) on every producer', async () => {
    for (const rel of [T + 'cppbench.cpu', T + 'java.heap', 'r-profile/inst/samples/proto/1.out.prof.pb.gz', T + 'gobench.heap']) {
      expect(await expectSameGraph(fixture(rel), ['-compact_labels'])).toMatch(/label="(File|Type): /);
    }
  });
});

describe.skipIf(!goAvailable)('graph = go tool pprof -dot on profiles the Go runtime writes now', () => {
  const dir = join(tmp, 'go');
  goProfilesNow(dir, tmp);

  it('CPU profile with pprof labels: label nodelets', async () => {
    const cpu = join(dir, 'cpu.pb.gz');
    const out = await expectSameGraph(cpu);
    expect(out).toMatch(/\[label = "phase:\w+\\nworker:(fast|slow)" id="N\d+_0" fontsize=8 shape=box3d/);
    await expectSameGraph(cpu, ['-focus=spin', '-nodecount=6']);
    await expectSameGraph(cpu, ['-call_tree']);
    // The label filters and label frames of every pprof report.
    for (const v of [['-tagfocus=worker=slow'], ['-tagignore=phase=x'], ['-tagshow=worker'], ['-taghide=phase'], ['-tagroot=worker'], ['-tagleaf=phase,worker']]) {
      await expectSameGraph(cpu, v);
    }
  });

  it.skipIf(!hasFixtures)('-diff_base / -base against another Go CPU profile: negative (green) nodes and edges', async () => {
    const cpu = join(dir, 'cpu.pb.gz');
    const other = fixture('pprof/internal/report/testdata/sample.cpu');
    for (const v of [[`-diff_base=${other}`], [`-base=${other}`, '-nodecount=10'], [`-diff_base=${other}`, '-call_tree']]) {
      // A node whose cum went down is green: red channel low, green at pprof's 0.7 (b2).
      expect(await expectSameGraph(cpu, v)).toMatch(/^N\d+ \[label="[^"]*of -[^"]*".* color="#[0-7][0-9a-f]b2[0-9a-f]{2}"/m);
    }
    // -drop_negative leaves the shrunk functions out (pprof keeps the calls into them, to N0).
    expect(await expectSameGraph(cpu, [`-diff_base=${other}`, '-drop_negative', '-nodefraction=0'])).not.toMatch(/^N\d+ \[label="[^"]*\\n-/m);
  });

  it('heap profile: bytes nodelets, each sample type', async () => {
    const heap = join(dir, 'heap.pb.gz');
    for (const t of ['alloc_space', 'alloc_objects', 'inuse_space']) {
      const out = await expectSameGraph(heap, [`-sample_index=${t}`]);
      expect(out).toMatch(/\[label = "\d+(\.\d+)?[kM]?B(\.\.\d+(\.\d+)?[kM]?B)?" id="NN\d+_0"/);
    }
    // -unit also formats the size tags (pprof formats them with it while building the graph).
    expect(await expectSameGraph(heap, ['-unit=kb'])).toMatch(/label = "\d+(\.\d+)?kB"/);
    await expectSameGraph(heap, ['-tagfocus=1kb:']);
    // -mean: values over the counts (samples of value 0 still count, their calls drawn to N0).
    for (const v of [['-mean'], ['-mean', '-call_tree'], ['-mean', '-sample_index=alloc_space', '-nodecount=10']]) {
      expect(await expectSameGraph(heap, v)).toContain('Type: mean_');
    }
  });
});

warnIfNoGperftools('graph interop');

describe.skipIf(!goAvailable || !haveGperftools)('graph = go tool pprof -dot on profiles gperftools writes now', () => {
  const dir = join(tmp, 'gperftools');
  const producedFiles = gperftoolsProfilesNow(dir);

  it('heap dumps and the CPU profile', async () => {
    const files = producedFiles();
    expect(files).toContain('cpu.prof');
    for (const f of files) {
      await expectSameGraph(join(dir, f));
      await expectSameGraph(join(dir, f), ['-nodecount=3']);
    }
  });
});

/** The names in a DOT text's node tooltips (`tooltip="NAME (VALUE)"`). */
const nodeNames = (dot: string) => [...dot.matchAll(/^N\d+ \[label=.* tooltip="(.*) \([^)]*\)" color=/gm)].map((m) => m[1]!.replaceAll('\\"', '"'));

/** XML attribute escaping as Graphviz writes it (`-` as `&#45;` too). */
const svgAttr = (s: string) => s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll('-', '&#45;');

describe.skipIf(!hasFixtures)('graph --format svg / png without Graphviz', () => {
  const f = () => fixture('pprof/internal/report/testdata/sample.cpu');

  it('svg: well-formed, every node of the DOT graph drawn with its name', async () => {
    const dot = (await profkit(['graph', f(), '--quiet'])).stdout;
    const out = join(tmp, 'g.svg');
    const r = await profkit(['graph', f(), '-o', out, '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    const svg = readFileSync(out, 'utf8');
    expect(svg).toMatch(/^<\?xml [^>]*\?>\s*<!DOCTYPE svg[^>]*>\s*(<!--[\s\S]*?-->\s*)*<svg[\s>]/);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    // Balanced elements (a cheap well-formedness check: every opened tag is closed in order).
    const stack: string[] = [];
    for (const m of svg.replace(/<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<!DOCTYPE[^>]*>/g, '').matchAll(/<(\/?)([\w:-]+)[^>]*?(\/?)>/g)) {
      if (m[3] === '/') continue;
      if (m[1] === '/') expect(stack.pop()).toBe(m[2]);
      else stack.push(m[2]!);
    }
    expect(stack).toEqual([]);
    const names = nodeNames(dot);
    expect(names.length).toBeGreaterThan(5);
    // Each node's tooltip (its full name) and the last part of its label.
    for (const name of names) {
      expect(svg).toContain(`xlink:title="${svgAttr(name)} (`);
      expect(svg).toContain(`>${name.split('.').pop()}</text>`);
    }
    // The edge labels too (1.76s from runtime.main).
    expect(svg).toContain('> 1.76s</text>');
  });

  it('png: PNG signature, IHDR size of the laid out graph, IEND', async () => {
    const out = join(tmp, 'g.png');
    const r = await profkit(['graph', f(), '--format', 'png', '-o', out, '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    const png = readFileSync(out);
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    expect(png.subarray(12, 16).toString('latin1')).toBe('IHDR');
    const width = png.readUInt32BE(16);
    const height = png.readUInt32BE(20);
    expect(width).toBeGreaterThan(200);
    expect(height).toBeGreaterThan(200);
    expect(png.subarray(png.length - 8, png.length - 4).toString('latin1')).toBe('IEND');
    // Decodes: the IDAT chunks inflate to one filter byte plus width x 4 bytes (8-bit RGBA, IHDR
    // bit depth 8, colour type 6) per row.
    expect([png[24], png[25]]).toEqual([8, 6]);
    const idat: Buffer[] = [];
    for (let at = 8; at < png.length; ) {
      const len = png.readUInt32BE(at);
      if (png.subarray(at + 4, at + 8).toString('latin1') === 'IDAT') idat.push(png.subarray(at + 8, at + 8 + len));
      at += 12 + len;
    }
    expect(inflateSync(Buffer.concat(idat)).length).toBe(height * (1 + width * 4));
  }, 60_000);

  it("pprof's spellings: -dot/-svg/-png as the mode, -nodecount=, -call_tree, -output=", async () => {
    const dot = await profkit(['graph', f(), '--nodecount', '7', '--call-tree', '--quiet']);
    expect(dot.code, dot.stderr).toBe(0);
    const goStyle = await profkit(['-dot', '-nodecount=7', '-call_tree', f(), '--quiet']);
    expect(goStyle.code, goStyle.stderr).toBe(0);
    expect(goStyle.stdout).toBe(dot.stdout);
    const out = join(tmp, 'go-style.svg');
    const svg = await profkit(['-svg', '-output=' + out, f(), '--quiet']);
    expect(svg.code, svg.stderr).toBe(0);
    expect(readFileSync(out, 'utf8')).toContain('<svg');
  });

  it('the format comes from OUT, an unknown --format is a usage error', async () => {
    const out = join(tmp, 'by-ext.svg');
    expect((await profkit(['graph', f(), '-o', out, '--quiet'])).code).toBe(0);
    expect(readFileSync(out, 'utf8')).toContain('<svg');
    const bad = await profkit(['graph', f(), '--format', 'pdf']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--format pdf: expected dot, svg or png');
  });
});
