/**
 * `go tool pprof -dot` in core: `composeDot` against google/pprof's own expected DOT texts
 * (`internal/graph/dotgraph_test.go` and its `testdata/compose*.dot`, inlined here),
 * `shortenFunctionName` against pprof's `TestShortenFunctionName` cases, and `dotReport`'s
 * trimming on small profiles whose graphs are worked out by hand from pprof's rules. The
 * comparison with `go tool pprof -dot` itself on real profiles is in the CLI's interop test.
 */

import { describe, expect, it } from 'vitest';
import { ProfileBuilder, composeDot, dotColor, dotReport, escapeForDot, shortenFunctionName, type DotConfig, type GraphNode, type GraphTag, type Profile } from '../src/node/index.js';

function node(name: string, flat: bigint, cum: bigint): GraphNode {
  return { id: 0, info: { name, file: '', lineno: 0, obj: '', address: 0n }, name, sortKey: name, flat, cum, flatDiv: 0n, cumDiv: 0n, in: new Map(), out: new Map(), labelTags: new Map(), numericTags: new Map() };
}

/** pprof's `baseGraph()` and `baseAttrsAndConfig()`: src (10 of 25) -> dest (15 of 25), weight 10, total 100. */
function baseGraph(): { nodes: GraphNode[]; config: DotConfig } {
  const src = node('src', 10n, 25n);
  const dest = node('dest', 15n, 25n);
  const edge = { src, dest, weight: 10n, weightDiv: 0n, residual: false, inline: false };
  src.out.set(dest, edge);
  dest.in.set(src, edge);
  return { nodes: [src, dest], config: { title: 'testtitle', labels: ['label1', 'label2', 'label3: "foo"'], total: 100n, formatValue: (v) => String(v) } };
}

const tag = (name: string, flat: bigint, cum: bigint, unit = ''): GraphTag => ({ name, unit, value: 0n, flat, cum, flatDiv: 0n, cumDiv: 0n });

const HEADER = [
  'digraph "testtitle" {',
  'node [style=filled fillcolor="#f8f8f8"]',
  'subgraph cluster_L { "label1" [shape=box fontsize=16 label="label1\\llabel2\\llabel3: \\"foo\\"\\l" tooltip="testtitle"] }',
];
const SRC = 'N1 [label="src\\n10 (10.00%)\\nof 25 (25.00%)" id="node1" fontsize=22 shape=box tooltip="src (25)" color="#b23c00" fillcolor="#edddd5"]';
const DEST = 'N2 [label="dest\\n15 (15.00%)\\nof 25 (25.00%)" id="node2" fontsize=24 shape=box tooltip="dest (25)" color="#b23c00" fillcolor="#edddd5"]';

describe('composeDot (pprof dotgraph_test.go)', () => {
  it('standard graph (compose1.dot)', () => {
    const { nodes, config } = baseGraph();
    expect(composeDot(nodes, config)).toBe(
      [...HEADER, SRC, DEST, 'N1 -> N2 [label=" 10" weight=11 color="#b28559" tooltip="src -> dest (10)" labeltooltip="src -> dest (10)"]', '}', ''].join('\n'),
    );
  });

  it('tags and a residual edge (compose3.dot)', () => {
    const { nodes, config } = baseGraph();
    nodes[0]!.labelTags.set('a', tag('tag1', 10n, 10n));
    nodes[0]!.numericTags.set('', new Map([['b', tag('tag2', 20n, 20n, 'ms')]]));
    nodes[0]!.out.get(nodes[1]!)!.residual = true;
    expect(composeDot(nodes, config)).toBe(
      [
        ...HEADER,
        SRC,
        'N1_0 [label = "tag1" id="N1_0" fontsize=8 shape=box3d tooltip="10"]',
        'N1 -> N1_0 [label=" 10" weight=100 tooltip="10" labeltooltip="10"]',
        'NN1_0 [label = "tag2" id="NN1_0" fontsize=8 shape=box3d tooltip="20"]',
        'N1 -> NN1_0 [label=" 20" weight=100 tooltip="20" labeltooltip="20"]',
        DEST,
        'N1 -> N2 [label=" 10" weight=11 color="#b28559" tooltip="src ... dest (10)" labeltooltip="src ... dest (10)" style="dotted" minlen=2]',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('empty graph (compose4.dot)', () => {
    expect(composeDot([], baseGraph().config)).toBe([...HEADER, '}', ''].join('\n'));
  });

  it('numeric tags nested under a label tag (compose5.dot)', () => {
    const { nodes, config } = baseGraph();
    nodes[0]!.labelTags.set('tag1', tag('tag1', 10n, 10n));
    nodes[0]!.numericTags.set('tag1', new Map([['tag2', tag('tag2', 20n, 20n, 'ms')]]));
    expect(composeDot(nodes, config)).toBe(
      [
        ...HEADER,
        SRC,
        'N1_0 [label = "tag1" id="N1_0" fontsize=8 shape=box3d tooltip="10"]',
        'N1 -> N1_0 [label=" 10" weight=100 tooltip="10" labeltooltip="10"]',
        'NN1_0_0 [label = "tag2" id="NN1_0_0" fontsize=8 shape=box3d tooltip="20"]',
        'N1_0 -> NN1_0_0 [label=" 20" weight=100 tooltip="20" labeltooltip="20"]',
        DEST,
        'N1 -> N2 [label=" 10" weight=11 color="#b28559" tooltip="src -> dest (10)" labeltooltip="src -> dest (10)" minlen=2]',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('names that need escaping (compose7.dot)', () => {
    const { nodes, config } = baseGraph();
    for (const [n, name] of [
      [nodes[0]!, 'var"src"'],
      [nodes[1]!, 'var"#dest#"'],
    ] as const) {
      n.info = { ...n.info, name };
      n.name = name;
    }
    expect(composeDot(nodes, config)).toBe(
      [
        ...HEADER,
        'N1 [label="var\\"src\\"\\n10 (10.00%)\\nof 25 (25.00%)" id="node1" fontsize=22 shape=box tooltip="var\\"src\\" (25)" color="#b23c00" fillcolor="#edddd5"]',
        'N2 [label="var\\"#dest#\\"\\n15 (15.00%)\\nof 25 (25.00%)" id="node2" fontsize=24 shape=box tooltip="var\\"#dest#\\" (25)" color="#b23c00" fillcolor="#edddd5"]',
        'N1 -> N2 [label=" 10" weight=11 color="#b28559" tooltip="var\\"src\\" -> var\\"#dest#\\" (10)" labeltooltip="var\\"src\\" -> var\\"#dest#\\" (10)"]',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('a quote in a tag name or the title cannot end the DOT string (no injected attributes such as an SVG link)', () => {
    const { nodes, config } = baseGraph();
    nodes[0]!.labelTags.set('a', tag('x" URL="javascript:alert(1)', 10n, 10n));
    nodes[0]!.numericTags.set('', new Map([['b', tag('y\\" URL="z', 20n, 20n, 'ms')]]));
    const dot = composeDot(nodes, { ...config, title: 'prog" URL="z' });
    expect(dot).toContain('digraph "prog\\" URL=\\"z" {');
    expect(dot).toContain(' tooltip="prog\\" URL=\\"z"] }');
    expect(dot).toContain('N1_0 [label = "x\\" URL=\\"javascript:alert(1)" id="N1_0"');
    // A backslash before the quote cannot cancel its escape.
    expect(dot).toContain('NN1_0 [label = "y\\\\\\" URL=\\"z" id="NN1_0"');
    expect(dot).not.toMatch(/(?:^|[^\\])(?:\\\\)*" URL=/m);
  });

  it('a quote in a file or object name cannot end the node label', () => {
    const { nodes, config } = baseGraph();
    nodes[0]!.info = { ...nodes[0]!.info, file: '/src/a" URL="z.c', lineno: 3 };
    nodes[1]!.info = { ...nodes[1]!.info, name: '', obj: '/bin/p" URL="z' };
    const dot = composeDot(nodes, config);
    expect(dot).toContain('N1 [label="src\\na\\" URL=\\"z.c:3\\n10 (10.00%)');
    expect(dot).toContain('N2 [label="[p\\" URL=\\"z]\\n15 (15.00%)');
  });

  it('escapeForDot and dotColor', () => {
    expect(escapeForDot('a\\b"c\nd')).toBe('a\\\\b\\"c\\ld');
    // Grey at 0, red at 1, green at -1 (pprof's HSV ramp).
    expect([dotColor(0, false), dotColor(1, false), dotColor(-1, false), dotColor(1, true)]).toEqual(['#b2b2b2', '#b20000', '#00b200', '#edd5d5']);
  });
});

describe('shortenFunctionName (pprof TestShortenFunctionName)', () => {
  it.each([
    ['root', 'root'],
    ['syscall.Syscall', 'syscall.Syscall'],
    ['net/http.(*conn).serve', 'http.(*conn).serve'],
    ['github.com/blahBlah/foo.Foo', 'foo.Foo'],
    ['github.com/blah-blah/foo_bar.(*FooBar).Foo', 'foo_bar.(*FooBar).Foo'],
    ['encoding/json.(*structEncoder).(encoding/json.encode)-fm', 'json.(*structEncoder).(encoding/json.encode)-fm'],
    ['github.com/foo/bar/v4.(*Foo).Bar', 'bar.(*Foo).Bar'],
    ['github.com/foo/bar/v4/baz.Foo.Bar', 'baz.Foo.Bar'],
    ['github.com/foobar/v0.(*Foo).Bar', 'v0.(*Foo).Bar'],
    ['example.org/v2xyz.Foo', 'v2xyz.Foo'],
    ['java.util.concurrent.ThreadPoolExecutor$Worker.run', 'ThreadPoolExecutor$Worker.run'],
    ['java.bar.foo.FooBar.run(java.lang.Runnable)', 'FooBar.run'],
    ['(anonymous namespace)::Bar::Foo', 'Bar::Foo'],
    ['(anonymous namespace)::foo', 'foo'],
    ['cpp::namespace::Class::method()::$_100::operator()', 'Class::method'],
    ['foo_bar::Foo::bar', 'Foo::bar'],
    ['cpp::namespace::Class::method<float, long, int>()', 'Class::method<float, long, int>'],
    ['com.google.perftools.gwp.benchmark.FloatBench.lambda$run$0', 'FloatBench.lambda$run$0'],
  ])('%s', (name, short) => {
    expect(shortenFunctionName(name)).toBe(short);
  });
});

/** A CPU-like profile (count) from `stacks` (root first) with `values`, optional labels per sample. */
function profileOf(samples: { stack: string[]; value: number; labels?: ({ key: string; str: string } | { key: string; num: number; unit?: string })[] }[]): Profile {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
  const locs = new Map<string, number>();
  const loc = (name: string) => {
    let id = locs.get(name);
    if (id === undefined) locs.set(name, (id = b.internLocation({ functionId: b.internFunction({ name, filename: name + '.go' }), line: 1 })));
    return id;
  };
  for (const s of samples) b.addSample([...s.stack].reverse().map(loc), [s.value], s.labels);
  return b.build();
}

const lines = (dot: string, re: RegExp) => dot.split('\n').filter((l) => re.test(l));

describe('dotReport: pprof newTrimmedGraph in visual mode', () => {
  it('a dropped middle node leaves a dotted residual edge, and the legend says what was dropped', () => {
    // x (cum 10 of 200) is below the node fraction 0.1 (cutoff 20): main...leaf becomes residual
    // (and stays: main reaches leaf no other way).
    const p = profileOf([
      { stack: ['main', 'x', 'leaf'], value: 10 },
      { stack: ['r', 'leaf'], value: 50 },
      { stack: ['main', 'z'], value: 140 },
    ]);
    const r = dotReport(p, { nodeFraction: 0.1 });
    expect(r.graph.map((n) => n.name).sort()).toEqual(['leaf', 'main', 'r', 'z']);
    expect(lines(r.text, /tooltip="main \.\.\. leaf/)).toEqual([expect.stringMatching(/label=" 10" .* style="dotted"\]$/)]);
    expect(r.labels).toContain('Dropped 1 node (cum <= 20)');
    // Without the cut every call is a plain edge.
    expect(dotReport(p, { nodeFraction: 0 }).text).not.toContain('style="dotted"');
  });

  it('a residual edge is removed when the callee is reached another way', () => {
    // main -> a -> b -> c and main -> (dropped d) -> c: main...c is redundant (main reaches c via a, b).
    const p = profileOf([
      { stack: ['main', 'a', 'b', 'c'], value: 100 },
      { stack: ['main', 'd', 'c'], value: 1 },
    ]);
    const r = dotReport(p, { nodeFraction: 0.05, edgeFraction: 0 });
    expect(r.graph.map((n) => n.name)).not.toContain('d');
    expect(r.text).not.toContain('main ... c');
  });

  it('bytes labels become nodelets; the top-N selection counts them as nodes', () => {
    const p = profileOf([
      { stack: ['main', 'alloc'], value: 60, labels: [{ key: 'bytes', num: 1024 }] },
      { stack: ['main', 'alloc'], value: 40, labels: [{ key: 'bytes', num: 64 }] },
      { stack: ['main', 'other'], value: 30 },
    ]);
    const r = dotReport(p);
    expect(lines(r.text, /box3d/).map((l) => /label = "([^"]+)"/.exec(l)![1])).toEqual(['1kB', '64B']);
    // By entropy score main (1 + fan-out entropy, times cum 130) comes before alloc (1 x 100 +
    // flat 100); alloc with its 2 tags counts 3, so -nodecount 3 keeps main and alloc, not other
    // (then re-sorted: main's only call left, it scores 130, below alloc's 200).
    const top = dotReport(p, { nodeCount: 3 });
    expect(top.graph.map((n) => n.name)).toEqual(['alloc', 'main']);
    expect(top.labels).toContain('Showing top 2 nodes out of 3');
  });

  it('string labels are joined per sample, and focus keeps the total of the whole profile', () => {
    const p = profileOf([
      { stack: ['main', 'work'], value: 75, labels: [{ key: 'worker', str: 'slow' }, { key: 'phase', str: 'b' }] },
      { stack: ['main', 'idle'], value: 25 },
    ]);
    const r = dotReport(p, { focus: 'work' });
    expect(r.text).toContain('label = "phase:b\\nworker:slow"');
    expect(r.labels).toContain('Active filters:');
    expect(r.labels).toContain('Showing nodes accounting for 75, 75.00% of 100 total');
  });

  it('negative values (diffs): a NaN entropy score sorts as Go on amd64 does, first (was a crash: NaN to BigInt)', () => {
    // x: flat -10, one call of +5: its out-entropy takes the log of a negative fraction (NaN),
    // which Go's int64() turns into the minimum int64; plus flat -10 it wraps to the top.
    const p = profileOf([
      { stack: ['main', 'x'], value: -10 },
      { stack: ['main', 'x', 'y'], value: 5 },
      { stack: ['main', 'z'], value: 100 },
    ]);
    expect(dotReport(p).graph.map((n) => n.name)).toEqual(['x', 'z', 'main', 'y']);
  });

  it('drop negative: the negative node goes, the call into it stays (to N0, as pprof draws it)', () => {
    const p = profileOf([
      { stack: ['main', 'x'], value: -10 },
      { stack: ['main', 'x', 'y'], value: 5 },
      { stack: ['main', 'z'], value: 100 },
    ]);
    const r = dotReport(p, { dropNegative: true });
    expect(r.graph.map((n) => n.name)).toEqual(['z', 'main', 'y']);
    expect(lines(r.text, / -> N0 /)).toEqual([expect.stringContaining('tooltip="main -> x (-5)"')]);
    expect(() => dotReport(p, { dropNegative: true, callTree: true })).toThrow(/not supported with call_tree/);
  });

  it('-mean: each value over the count of the same samples (Go integer division); trimming on the sums', () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }, { type: 'cpu', unit: 'count' }] });
    const loc = (name: string) => b.internLocation({ functionId: b.internFunction({ name }), line: 1 });
    const [main, a, bb] = [loc('main'), loc('a'), loc('b')];
    b.addSample([a, main], [2, 10]);
    b.addSample([bb, main], [1, 30]);
    const r = dotReport(b.build(), { sampleTypeIndex: 1, meanDivisorIndex: 0 });
    // total 40 / 3 counts = 13; a: 10/2 = 5, b: 30/1, main: 40/3 = 13.
    expect(r.total).toBe(13n);
    expect(r.text).toContain('label="a\\n5 (38.46%)"');
    expect(r.text).toContain('label="b\\n30 (230.77%)"');
    expect(r.text).toContain('label="main\\n0 of 13 (100%)"');
    expect(r.labels[0]).toBe('Type: mean_cpu');
  });

  it('call tree: a node per path', () => {
    const p = profileOf([
      { stack: ['main', 'a', 'leaf'], value: 10 },
      { stack: ['main', 'b', 'leaf'], value: 20 },
    ]);
    expect(dotReport(p).graph.filter((n) => n.name === 'leaf').map((n) => n.cum)).toEqual([30n]);
    expect(
      dotReport(p, { callTree: true })
        .graph.filter((n) => n.name === 'leaf')
        .map((n) => n.cum)
        .sort(),
    ).toEqual([10n, 20n]);
  });
});
