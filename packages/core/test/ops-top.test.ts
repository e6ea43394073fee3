import { describe, expect, it } from 'vitest';
import { seededRandom } from '@profkit/test-utils';
import { ErrorCodes, ProfileBuilder, ProfkitError, callGraph, formatPercentage, formatTopTable, formatValue, topTable, type Profile } from '../src/node/index.js';
import { goFormatF, goFormatFExact, goFormatG, goFormatGExact } from '../src/ops/format.js';

const MS = 1_000_000n;

function build(): Profile {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }, { type: 'cpu', unit: 'nanoseconds' }] });
  const fn = (name: string, filename = '') => b.internFunction({ name, filename });
  const loc = (name: string, line: number, file = `${name}.c`) => b.internLocation({ functionId: fn(name, file), line });
  const main = loc('main', 1);
  b.addSample([loc('a', 3), main], [1, 10n * MS]);
  b.addSample([loc('r', 7), loc('r', 8), main], [1, 20n * MS]);
  // helper inlined into b, in one location.
  const inl = b.internLocation({ functionId: fn('helper', './lib/../helper.h'), line: 2, inlinedInto: [{ functionId: fn('b', 'b.c'), line: 9 }] });
  b.addSample([inl, main], [1, 30n * MS]);
  b.addSample([loc('b', 4), main], [1, 5n * MS]);
  b.addSample([main], [1, 0n]);
  return b.build();
}

describe('topTable', () => {
  it('computes flat and cum (once per sample, inline frames expanded) in pprof -top order', () => {
    const t = topTable(build());
    expect(t.sampleTypeIndex).toBe(1);
    expect(t.total).toBe(65n * MS);
    expect(t.entries.map((e) => [e.name, e.flat / MS, e.cum / MS, e.inline])).toEqual([
      ['helper', 30n, 30n, '(inline)'],
      ['r', 20n, 20n, ''],
      ['a', 10n, 10n, ''],
      ['b', 5n, 35n, ''],
      ['main', 0n, 65n, ''],
    ]);
    expect(topTable(build(), { cum: true }).entries.map((e) => e.name)).toEqual(['main', 'b', 'helper', 'r', 'a']);
  });

  it('prints like pprof -top', () => {
    expect(formatTopTable(topTable(build()))).toBe(
      [
        '      flat  flat%   sum%        cum   cum%',
        '      30ms 46.15% 46.15%       30ms 46.15%  helper (inline)',
        '      20ms 30.77% 76.92%       20ms 30.77%  r',
        '      10ms 15.38% 92.31%       10ms 15.38%  a',
        '       5ms  7.69%   100%       35ms 53.85%  b',
        '         0     0%   100%       65ms   100%  main',
        '',
      ].join('\n'),
    );
  });

  it('groups by file or line, with cleaned file names', () => {
    const byFile = topTable(build(), { by: 'file' });
    expect(byFile.entries.map((e) => [e.name, e.flat / MS, e.cum / MS])).toEqual([
      ['helper.h', 30n, 30n],
      ['r.c', 20n, 20n],
      ['a.c', 10n, 10n],
      ['b.c', 5n, 35n],
      ['main.c', 0n, 65n],
    ]);
    const byLine = topTable(build(), { by: 'line', sampleTypeIndex: 0 });
    expect(byLine.entries.map((e) => [e.name, e.flat, e.cum])).toEqual([
      ['a a.c:3', 1n, 1n],
      ['b b.c:4', 1n, 1n],
      ['helper helper.h:2', 1n, 1n],
      ['main main.c:1', 1n, 5n],
      ['r r.c:7', 1n, 1n],
      ['b b.c:9', 0n, 1n],
      ['r r.c:8', 0n, 1n],
    ]);
    // Without inline frames only b (the outer line) is seen.
    expect(topTable(build(), { inline: false }).entries.map((e) => [e.name, e.flat / MS])).toEqual([
      ['b', 35n],
      ['r', 20n],
      ['a', 10n],
      ['main', 0n],
    ]);
  });

  it('trims like -nodefraction/-nodecount when asked', () => {
    const t = topTable(build(), { nodeFraction: 0.2 });
    expect(t.entries.map((e) => e.name)).toEqual(['helper', 'r', 'b', 'main']);
    expect(t.dropped).toBe(1);
    expect(topTable(build(), { nodeCount: 2 }).entries.map((e) => e.name)).toEqual(['helper', 'r']);
    try {
      topTable(build(), { sampleTypeIndex: 5 });
      expect.unreachable();
    } catch (e) {
      expect((e as ProfkitError).code).toBe(ErrorCodes.USAGE);
    }
  });

  it('prints every value in one unit chosen like pprof selectOutputUnit, and trims small entries by default', () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
    const loc = (name: string) => b.internLocation({ functionId: b.internFunction({ name }) });
    const main = loc('main');
    b.addSample([loc('x'), main], [430n * MS]);
    b.addSample([loc('y'), main], [240_000n * MS]);
    const p = b.build();
    const all = topTable(p, { nodeFraction: 0 });
    expect(all.outputUnit).toBe('s');
    expect(formatTopTable(all).split('\n').slice(1)).toEqual([
      '      240s 99.82% 99.82%       240s 99.82%  y',
      '     0.43s  0.18%   100%      0.43s  0.18%  x',
      '         0     0%   100%    240.43s   100%  main',
      '',
    ]);
    // pprof's default -nodefraction=0.005: x (cum 0.43s < 1.2s) is dropped.
    const trimmed = topTable(p);
    expect(trimmed.entries.map((e) => e.name)).toEqual(['y', 'main']);
    expect(trimmed.dropped).toBe(1);
  });

  it('marks inline entries from call edges, ignoring edges under edgeFraction', () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const fn = (name: string) => b.internFunction({ name });
    const main = b.internLocation({ functionId: fn('main') });
    const inl = b.internLocation({ functionId: fn('helper'), inlinedInto: [{ functionId: fn('b') }] });
    const helper = b.internLocation({ functionId: fn('helper'), line: 2 });
    b.addSample([inl, main], [1]);
    b.addSample([helper, b.internLocation({ functionId: fn('c') }), main], [10_000]);
    const p = b.build();
    const mark = (t: ReturnType<typeof topTable>) => t.entries.find((e) => e.name === 'helper')!.inline;
    // b -> helper (inlined, weight 1) is under 0.001 of 10001: only the plain c -> helper edge counts.
    expect(mark(topTable(p))).toBe('');
    expect(mark(topTable(p, { edgeFraction: 0 }))).toBe('(partial-inline)');
  });

  it('stays exact when sums exceed 2^53', () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const loc = (name: string) => b.internLocation({ functionId: b.internFunction({ name }) });
    const main = loc('main');
    b.addSample([loc('a'), main], [2n ** 60n + 1n]);
    b.addSample([loc('b'), main], [2n ** 60n]);
    const t = topTable(b.build());
    expect(t.total).toBe(2n ** 61n + 1n);
    expect(t.entries.map((e) => [e.name, e.flat, e.cum])).toEqual([
      ['a', 2n ** 60n + 1n, 2n ** 60n + 1n],
      ['b', 2n ** 60n, 2n ** 60n],
      ['main', 0n, 2n ** 61n + 1n],
    ]);
  });

  it('names frames without a function after their mapping, or <unknown>', () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const m = b.internMapping({ filename: '/usr/lib/libfoo.so' });
    b.addSample([b.internLocation({ address: 0x10n, mappingId: m }), b.internLocation({ address: 0x20n })], [3]);
    expect(topTable(b.build()).entries.map((e) => [e.name, e.flat, e.cum])).toEqual([
      ['[libfoo.so]', 3n, 3n],
      ['<unknown>', 0n, 3n],
    ]);
  });

  it('names functions without a name (<?>, how adapters read pprof\'s empty name) after their mapping, like pprof', () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const m = b.internMapping({ filename: '/usr/lib/libbar.so.1' });
    const noName = b.internLocation({ functionId: b.internFunction({ name: '<?>' }), address: 0x10n, mappingId: m });
    const noNameNoMapping = b.internLocation({ functionId: b.internFunction({ name: '<?>', filename: 'x.c' }), address: 0x30n });
    const main = b.internLocation({ functionId: b.internFunction({ name: 'main' }), address: 0x20n, mappingId: m });
    b.addSample([noName, main], [5]);
    b.addSample([noNameNoMapping, main], [2]);
    const t = topTable(b.build(), { nodeFraction: 0 });
    expect(t.entries.map((e) => [e.name, e.flat, e.cum])).toEqual([
      ['[libbar.so.1]', 5n, 5n],
      ['<unknown>', 2n, 2n],
      ['main', 0n, 7n],
    ]);
    expect(topTable(b.build(), { by: 'file', nodeFraction: 0 }).entries.map((e) => e.name)).toContain('x.c');
  });
});

describe('topTable is the -top view of callGraph', () => {
  /** Random stacks over a few functions, some frames inlined, some functions without a name. */
  function randomProfile(seed: number): Profile {
    const r = seededRandom(seed);
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
    const m = b.internMapping({ filename: '/usr/lib/librand.so' });
    const fns = Array.from({ length: 12 }, (_, i) => b.internFunction({ name: i % 5 === 4 ? '<?>' : `f${i}`, filename: `f${i % 3}.c` }));
    const pick = () => fns[Math.floor(r() * fns.length)]!;
    const locs = Array.from({ length: 30 }, (_, i) =>
      b.internLocation({ functionId: pick(), line: 1 + (i % 4), column: i % 3, address: BigInt(0x100 + i), mappingId: m, inlinedInto: r() < 0.3 ? [{ functionId: pick(), line: 9 }] : undefined }),
    );
    for (let i = 0; i < 300; i++) {
      const stack = Array.from({ length: 1 + Math.floor(r() * 6) }, () => locs[Math.floor(r() * locs.length)]!);
      b.addSample(stack, [BigInt(Math.floor(r() * 1000) - 100)]);
    }
    return b.build();
  }

  it('has the nodes, values and inline markers of the full call graph, for every granularity', () => {
    const markers = new Set<string>();
    for (const seed of [1, 2, 3]) {
      const p = randomProfile(seed);
      for (const opts of [{}, { by: 'file' as const }, { by: 'line' as const, columns: true }, { cum: true, nodeCount: 5 }, { inline: false, edgeFraction: 0 }, { nodeFraction: 0.1 }]) {
        const g = callGraph(p, opts);
        const marker = (n: (typeof g.nodes)[number]) => {
          const inl = n.in.some((e) => e.inline);
          return inl ? (n.in.some((e) => !e.inline) ? '(partial-inline)' : '(inline)') : '';
        };
        const t = topTable(p, opts);
        expect(t.entries, JSON.stringify({ seed, opts })).toEqual(g.nodes.map((n) => ({ name: n.name, flat: n.flat, cum: n.cum, inline: marker(n) })));
        expect([t.total, t.outputUnit]).toEqual([g.total, g.outputUnit]);
        for (const e of t.entries) markers.add(e.inline);
      }
    }
    // The profiles exercise every marker.
    expect([...markers].sort()).toEqual(['', '(inline)', '(partial-inline)']);
  });

  it('shows columns in line entries only when asked (pprof -show_columns)', () => {
    const p = randomProfile(4);
    const names = (columns: boolean) => topTable(p, { by: 'line', columns, nodeFraction: 0 }).entries.map((e) => e.name);
    expect(names(false).every((n) => !/:\d+:\d+$/.test(n))).toBe(true);
    expect(names(true).some((n) => /\.c:\d+:[12]$/.test(n))).toBe(true);
    expect(names(true).some((n) => n.includes('<?>'))).toBe(false);
  });
});

describe('formatValue / formatPercentage', () => {
  it('scales units like pprof measurement', () => {
    expect(formatValue(10_000_000n, 'nanoseconds')).toBe('10ms');
    expect(formatValue(1_500_000_000n, 'nanoseconds')).toBe('1.50s');
    expect(formatValue(-1_500_000_000n, 'nanoseconds')).toBe('-1.50s');
    expect(formatValue(999n, 'nanoseconds')).toBe('999ns');
    expect(formatValue(1500n, 'microseconds')).toBe('1.50ms');
    expect(formatValue(7_200_000_000_000n, 'nanoseconds')).toBe('2hrs');
    expect(formatValue(13_107_200n, 'bytes')).toBe('12.50MB');
    expect(formatValue(512n, 'bytes')).toBe('512B');
    expect(formatValue(1536n, 'kilobytes')).toBe('1.50MB');
    expect(formatValue(0n, 'bytes')).toBe('0');
    expect(formatValue(1234n, 'count')).toBe('1234');
    expect(formatValue(7n, 'widgets')).toBe('7');
    // Go's %.2f rounds exact ties to even: 0.125 s -> 125ms; 1.125 kB -> 1.12kB
    expect(formatValue(1152n, 'bytes')).toBe('1.12kB');
    expect(formatValue(1160n, 'bytes')).toBe('1.13kB');
  });

  it('formats percentages like pprof', () => {
    expect(formatPercentage(1n, 3n)).toBe('33.33%');
    expect(formatPercentage(1n, 1000n)).toBe('  0.1%');
    expect(formatPercentage(1n, 100_000n)).toBe('0.001%');
    expect(formatPercentage(1n, 10_000_000n)).toBe('1e-05%');
    expect(formatPercentage(123n, 10_000n)).toBe(' 1.23%');
    expect(formatPercentage(-1n, 1n)).toBe('  100%');
    expect(formatPercentage(0n, 0n)).toBe('    0%');
    expect(formatPercentage(2n, 1n)).toBe('200.00%');
    // Go rounds the exact binary value half to even: 0.125 -> 0.12, 0.375 -> 0.38, 0.625 -> 0.62.
    expect(formatPercentage(125n, 100_000n)).toBe(' 0.12%');
    expect(formatPercentage(375n, 100_000n)).toBe(' 0.38%');
    expect(formatPercentage(625n, 100_000n)).toBe(' 0.62%');
  });
});

describe("Go's FormatFloat 'f' (goFormatF)", () => {
  it('prints what the exact expansion gives: ties to even, negative zero, large and tiny values', () => {
    let seed = 7;
    const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    const values = [0, -0, 0.005, 0.015, 0.025, 0.125, 0.375, 2.5, 3.5, -0.125, -2.675, 1.005, 1e-7, 5e-324, 1e20, 9.999e20, 1e21, 2 ** 60, -(2 ** 53) - 2, 123456.785, NaN];
    for (let i = 0; i < 20000; i++) {
      const magnitude = 10 ** Math.floor(random() * 16 - 8);
      values.push((random() - 0.3) * magnitude);
      // Ties of each precision and their neighbours: j / 2^(prec + 1), j odd.
      const tie = (2 * Math.floor(random() * 1e6) + 1) / 2 ** (1 + (i % 4));
      values.push(tie, -tie, tie + 2 ** -30, tie - 2 ** -30);
    }
    // The disagreements, listed (one expect per value took 14 s for these 400,000).
    const differing: [number, number, string, string][] = [];
    for (const prec of [0, 1, 2, 3]) for (const x of values) if (goFormatF(x, prec) !== goFormatFExact(x, prec)) differing.push([x, prec, goFormatF(x, prec), goFormatFExact(x, prec)]);
    expect(differing).toEqual([]);
    // Half to even where JavaScript's toFixed rounds half up.
    expect([goFormatF(0.125, 2), goFormatF(0.375, 2), goFormatF(2.5, 0), goFormatF(-0.125, 2), goFormatF(-0, 2)]).toEqual(['0.12', '0.38', '2', '-0.12', '-0.00']);
  });
});

describe("Go's FormatFloat 'g' (goFormatG)", () => {
  it('prints what the exact expansion gives: ties to even, carries, exponents, large and tiny values', () => {
    let seed = 11;
    const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    const values = [0, -0, 0.125, 0.375, 0.0625, 2.5, 25, 125, 1250, 0.00125, 9.95, 9.96, 0.0995, 99.5, 1e-5, 9.5e-5, 1e21, 2 ** 60, 5e-324, -0.125, NaN, Infinity];
    for (let i = 0; i < 20000; i++) {
      const magnitude = 10 ** Math.floor(random() * 24 - 12);
      values.push((random() - 0.3) * magnitude);
      // Ties at 1 to 3 significant digits (odd / 2^k of one to three digits) and their neighbours.
      const tie = ((2 * Math.floor(random() * 500) + 1) / 2 ** (1 + (i % 6))) * 10 ** ((i % 5) - 2);
      values.push(tie, -tie, tie + 2 ** -40, tie - 2 ** -40, Math.round(random() * 1e6) * 5);
    }
    const differing: [number, number, string, string][] = [];
    for (const prec of [1, 2, 3, 6]) for (const x of values) if (goFormatG(x, prec) !== goFormatGExact(x, prec)) differing.push([x, prec, goFormatG(x, prec), goFormatGExact(x, prec)]);
    expect(differing).toEqual([]);
    // Half to even where JavaScript rounds half up.
    expect([goFormatG(0.125, 2), goFormatG(0.375, 2), goFormatG(125, 2), goFormatG(0.0625, 1), goFormatG(9.96, 2)]).toEqual(['0.12', '0.38', '1.2e+02', '0.06', '10']);
    // Precisions below 1 or above 100 (toExponential would throw a RangeError): the exact path.
    for (const prec of [0, 102, 120]) for (const x of [0.123, 1.5, 123456.789]) expect(goFormatG(x, prec)).toBe(goFormatGExact(x, prec));
  });
});
