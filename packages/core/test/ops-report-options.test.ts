/**
 * pprof's text options and filters in core's reports (topReport, treeReport, tracesReport,
 * tagsReport): the values below follow pprof's rules worked out by hand on a small profile; the
 * CLI's interop tests compare the same options with `go tool pprof` on real profiles.
 */

import { describe, expect, it } from 'vitest';
import {
  ErrorCodes,
  ProfileBuilder,
  activeFilterLabels,
  addTagFrames,
  applyReportFilters,
  callGraph,
  callGraphNode,
  parseGranularity,
  showFrom,
  tagsReport,
  topReport,
  tracesReport,
  treeReport,
  type Profile,
  type ReportFilterOptions,
} from '../src/node/index.js';
import { seededRandom, thrownBy } from '@profkit/test-utils';

const MS = 1_000_000n;

/** main calls a, r (recursively, lines 7 and 8), b (with helper inlined) and b again; labels on three samples. */
function build(types = [{ type: 'samples', unit: 'count' }, { type: 'cpu', unit: 'nanoseconds' }]): Profile {
  const b = new ProfileBuilder({ sampleTypes: types });
  const fn = (name: string, filename = `${name}.c`) => b.internFunction({ name, filename });
  const loc = (name: string, line: number, address: bigint) => b.internLocation({ functionId: fn(name), line, address });
  const main = loc('main', 1, 0x1000n);
  b.addSample([loc('a', 3, 0x2000n), main], [1, 10n * MS], [{ key: 'worker', str: 'slow' }, { key: 'bytes', num: 1024n, unit: 'bytes' }]);
  b.addSample([loc('r', 7, 0x3000n), loc('r', 8, 0x3008n), main], [1, 20n * MS], [{ key: 'worker', str: 'fast' }]);
  const inl = b.internLocation({ functionId: fn('helper'), line: 2, address: 0x4000n, inlinedInto: [{ functionId: fn('b'), line: 9 }] });
  b.addSample([inl, main], [2, 30n * MS], [{ key: 'worker', str: 'slow' }]);
  b.addSample([loc('b', 4, 0x4100n), main], [1, 5n * MS]);
  return b.build();
}

const rows = (text: string) => text.split('\n').filter((l) => /^ +\S+ +\S+% +\S+% +\S+ +\S+%  /.test(l)).map((l) => l.trim().split(/ +/));

describe('text options', () => {
  it('-show_from keeps the frames from the leaf up to the outermost match, and only samples with one', () => {
    const rep = topReport(build(), { showFrom: '^r$', nodeFraction: 0 });
    expect(rep.table.entries.map((e) => [e.name, e.flat / MS, e.cum / MS])).toEqual([['r', 20n, 20n]]);
    // The total is taken before the filters, as pprof does.
    expect(rep.total).toBe(65n * MS);
    expect(rep.header).toContain('Active filters:');
    expect(rep.header).toContain('   show_from=^r$');
    const p = showFrom(build(), 'helper');
    expect(p.samples.value.length).toBe(1);
  });

  it('-relative_percentages takes the total after the filters', () => {
    const abs = topReport(build(), { focus: '^a$' });
    expect(abs.total).toBe(65n * MS);
    const rel = topReport(build(), { focus: '^a$', relativePercentages: true });
    expect(rel.total).toBe(10n * MS);
    expect(rel.text).toContain('Showing nodes accounting for 10ms, 100% of 10ms total');
  });

  it('-tagroot / -tagleaf add label values as frames (a sample without the label gets a nameless one)', () => {
    const byWorker = topReport(build(), { tagRoot: ['worker'], nodeFraction: 0, cum: true });
    const cum = Object.fromEntries(byWorker.table.entries.map((e) => [e.name, e.cum / MS]));
    expect(cum).toMatchObject({ main: 65n, slow: 40n, fast: 20n, '<unknown>': 5n });
    const leaf = topReport(build(), { tagLeaf: ['bytes'], nodeFraction: 0 });
    expect(leaf.table.entries.find((e) => e.name === '1kB')).toMatchObject({ flat: 10n * MS, cum: 10n * MS });
    // The samples without the label end in a nameless frame.
    expect(leaf.table.entries.find((e) => e.name === '<unknown>')).toMatchObject({ flat: 55n * MS });
    // In -unit's unit, as pprof formats numeric label values.
    expect(topReport(build(), { tagLeaf: ['bytes'], outputUnit: 'B', nodeFraction: 0 }).table.entries.map((e) => e.name)).toContain('1024B');
    const added = addTagFrames(build(), ['nokey'], []);
    expect(added.rootMatched).toBe(false);
    expect(added.profile.samples.value.length).toBe(4);
  });

  it('-mean divides by the count of the same samples (sorting on the sums), Type: mean_…', () => {
    const rep = topReport(build([{ type: 'contentions', unit: 'count' }, { type: 'delay', unit: 'nanoseconds' }]), { mean: true, nodeFraction: 0 });
    // helper 30ms over 2 contentions, r 20ms over 1, a 10ms over 1, b 5ms over 1 (flat; cum of b: 35ms / 3).
    expect(rep.table.entries.map((e) => [e.name, e.flat / MS, e.cum / 1000n])).toEqual([
      ['helper', 15n, 15000n],
      ['r', 20n, 20000n],
      ['a', 10n, 10000n],
      ['b', 5n, 11666n],
      ['main', 0n, 13000n],
    ]);
    expect(rep.total).toBe(13n * MS);
    expect(rep.header).toContain('Type: mean_delay');
  });

  it('-divide_by divides the printed values only', () => {
    const rep = topReport(build(), { divideBy: 2, nodeFraction: 0 });
    expect(rows(rep.text)[0]).toEqual(['15ms', '46.15%', '46.15%', '15ms', '46.15%', 'helper', '(inline)']);
    expect(rep.text).toContain('of 32.50ms total');
    expect(thrownBy(() => topReport(build(), { divideBy: 0 }))).toMatchObject({ code: ErrorCodes.USAGE });
  });

  it('-unit prints every value in that unit', () => {
    expect(rows(topReport(build(), { outputUnit: 's', nodeFraction: 0 }).text)[0]!.slice(0, 1)).toEqual(['0.03s']);
  });

  it('-drop_negative leaves out nodes whose flat (or, at flat 0, cum) is negative', () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
    const loc = (name: string) => b.internLocation({ functionId: b.internFunction({ name }) });
    const main = loc('main');
    b.addSample([loc('a'), main], [-10n * MS]);
    b.addSample([loc('b'), main], [4n * MS]);
    const p = b.build();
    expect(topReport(p, { nodeFraction: 0 }).table.entries.map((e) => e.name)).toEqual(['a', 'b', 'main']);
    expect(topReport(p, { nodeFraction: 0, dropNegative: true }).table.entries.map((e) => e.name)).toEqual(['b']);
  });

  it('-addresses and -filefunctions name nodes as pprof does', () => {
    const byAddress = topReport(build(), { by: 'address', nodeFraction: 0 }).table.entries.map((e) => e.name);
    expect(byAddress).toContain('0000000000004000 helper helper.c:2');
    expect(byAddress).toContain('0000000000004000 b b.c:9');
    expect(byAddress).toContain('0000000000003000 r r.c:7');
    expect(topReport(build(), { by: 'address', inline: false, nodeFraction: 0 }).table.entries.map((e) => e.name)).not.toContain('0000000000004000 helper helper.c:2');
    expect(topReport(build(), { by: 'filefunctions', nodeFraction: 0 }).table.entries.map((e) => e.name)).toContain('helper helper.c');
    expect(parseGranularity('lines')).toBe('line');
    expect(parseGranularity('addresses')).toBe('address');
    expect(thrownBy(() => parseGranularity('bytes'))).toMatchObject({ code: ErrorCodes.USAGE });
  });

  it('-tagshow / -taghide remove label keys from tags and traces; -tagfocus on the tree', () => {
    expect(tagsReport(build()).keys.map((k) => k.key)).toEqual(['bytes', 'worker']);
    expect(tagsReport(build(), { tagHide: 'work' }).keys.map((k) => k.key)).toEqual(['bytes']);
    expect(tagsReport(build(), { tagShow: 'work' }).keys.map((k) => k.key)).toEqual(['worker']);
    expect(tracesReport(build(), { tagHide: 'worker' }).samples.every((s) => s.labels.length === 0)).toBe(true);
    const tree = treeReport(build(), { tagFocus: 'worker=fast', nodeFraction: 0, edgeFraction: 0 });
    expect(tree.graph.nodes.map((n) => n.name).sort()).toEqual(['main', 'r']);
    expect(tree.header).toContain('   tagfocus=worker=fast');
  });

  it('traces: -mean per sample, -lines frames, -divide_by values', () => {
    const t = tracesReport(build([{ type: 'contentions', unit: 'count' }, { type: 'delay', unit: 'nanoseconds' }]), { mean: true, by: 'line' });
    expect(t.samples.map((s) => s.value / MS)).toEqual([10n, 20n, 15n, 5n]);
    expect(t.samples[1]!.frames.map((f) => f.name)).toEqual(['r r.c:7', 'r r.c:8', 'main main.c:1']);
    expect(t.header).toContain('Type: mean_delay');
    expect(tracesReport(build(), { divideBy: 10 }).text).toMatch(/^ +1ms {3}a$/m);
  });

  it('lists the active filters in pprof order', () => {
    expect(activeFilterLabels({ tagHide: 'h', pruneFrom: 'p', showFrom: 's', focus: 'f', tagFocus: 'k=v', hide: 'x' })).toEqual(['focus=f', 'hide=x', 'show_from=s', 'tagfocus=k=v', 'taghide=h']);
  });
});

/** A random profile: recursive stacks over 12 functions, inline frames, two mappings, labels. */
function randomProfile(seed: number): Profile {
  const rnd = seededRandom(seed);
  const pick = (n: number) => Math.floor(rnd() * n);
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }, { type: 'cpu', unit: 'nanoseconds' }] });
  const maps = [b.internMapping({ filename: '/bin/app', memoryStart: 0n, memoryLimit: 0x10000n }), b.internMapping({ filename: '/lib/libc.so', memoryStart: 0x10000n, memoryLimit: 0x20000n })];
  const fns = Array.from({ length: 12 }, (_, k) => b.internFunction({ name: `f${k}`, filename: `src/m${k % 3}.c` }));
  const locs = Array.from({ length: 30 }, (_, k) =>
    b.internLocation({
      functionId: fns[pick(12)]!,
      line: 1 + pick(5),
      address: BigInt(0x100 * (k + 1)),
      mappingId: maps[k % 7 === 0 ? 1 : 0]!,
      inlinedInto: rnd() < 0.3 ? [{ functionId: fns[pick(12)]!, line: 1 + pick(5) }] : [],
    }),
  );
  for (let i = 0; i < 400; i++) {
    const depth = 1 + pick(8);
    const stack = Array.from({ length: depth }, () => locs[pick(30)]!);
    const labels = rnd() < 0.5 ? [{ key: 'worker', str: rnd() < 0.5 ? 'slow' : 'fast' }] : [];
    b.addSample(stack, [1, BigInt(1 + pick(50)) * MS], labels);
  }
  return b.build();
}

describe('filters per distinct stack', () => {
  const combos: ReportFilterOptions[] = [
    { focus: 'f1$' },
    { ignore: 'f2', focus: 'm1' },
    { hide: 'f[3-5]' },
    { show: 'f[0-6]' },
    { hide: 'libc' },
    { showFrom: 'f7' },
    { pruneFrom: 'f8' },
    { tagFocus: 'worker=slow', hide: 'f1' },
    { tagIgnore: 'fast', showFrom: 'm2', pruneFrom: 'f9' },
    { focus: 'f4', hide: 'f4', show: 'm0|m1', showFrom: 'f1', pruneFrom: 'f0', tagFocus: 'worker=.' },
  ];
  it.each([1, 2, 3])('give the reports of the filtered profile (seed %i)', (seed) => {
    const p = randomProfile(seed);
    for (const filters of combos) {
      const filtered = applyReportFilters(p, filters);
      for (const options of [{ nodeFraction: 0 }, { nodeFraction: 0, by: 'line' as const }, { nodeFraction: 0, mean: true }, { nodeFraction: 0.05, cum: true }]) {
        const perStack = topReport(p, { ...filters, ...options });
        const onSamples = topReport(filtered, options);
        expect(perStack.table.entries, JSON.stringify(filters)).toEqual(onSamples.table.entries);
        const t1 = treeReport(p, { ...filters, ...options, edgeFraction: 0 }).graph.nodes;
        const t2 = treeReport(filtered, { ...options, edgeFraction: 0 }).graph.nodes;
        expect(t1, JSON.stringify(filters)).toEqual(t2);
      }
    }
  });
});

describe('calls between a shown node and a node not shown', () => {
  /** `z` nets to 0 (flat and cum: no entry) and calls `work` (10ms) and `other` (-10ms); `main` nets to 0 too. */
  function netting(): Profile {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
    const loc = (name: string) => b.internLocation({ functionId: b.internFunction({ name, filename: `${name}.go` }), line: 1 });
    const [main, z, work, other] = ['main', 'z', 'work', 'other'].map(loc);
    b.addSample([work!, z!, main!], [10n * MS]);
    b.addSample([other!, z!, main!], [-10n * MS]);
    return b.build();
  }
  const callers = (g: ReturnType<typeof callGraph>, name: string) => g.nodes.find((n) => n.name === name)!.in.map((e) => [callGraphNode(g, e.src).name, e.weight / MS]);

  it('are kept when nothing is trimmed (as pprof, which then does not rebuild its graph), the other end in offGraph', () => {
    const g = callGraph(netting());
    expect(g.nodes.map((n) => n.name).sort()).toEqual(['other', 'work']);
    expect(g.offGraph.map((n) => [n.name, n.flat, n.cum])).toEqual([['z', 0n, 0n]]);
    expect(g.nodes.every((n) => [...n.in, ...n.out].every((e) => e.src === g.nodes.length || e.dst === g.nodes.length))).toBe(true);
    expect(callers(g, 'work')).toEqual([['z', 10n]]);
    expect(callers(g, 'other')).toEqual([['z', -10n]]);
    expect(treeReport(netting()).text).toMatch(/ 10ms +100% \|   z\n +10ms .*\| work\n/);
    // -drop_negative: other is no entry either, and z's call to it (both not shown) is not kept.
    const dropped = callGraph(netting(), { dropNegative: true });
    expect([dropped.nodes.map((n) => n.name), dropped.offGraph.map((n) => n.name), callers(dropped, 'work')]).toEqual([['work'], ['z'], [['z', 10n]]]);
  });

  it('are not kept when the graph is trimmed (pprof rebuilds it with the kept nodes only)', () => {
    const g = callGraph(netting(), { nodeCount: 1 });
    expect(g.nodes).toHaveLength(1);
    expect([g.offGraph, g.nodes[0]!.in, g.nodes[0]!.out]).toEqual([[], [], []]);
  });
});
