/**
 * The reports of NEW minus BASE from the two profiles' stack tables (`DiffReportBuilder`) against
 * the reports of the merged difference (`diff`: base relabelled, negated, merged in), on random
 * profiles whose ids differ between the two (functions and locations interned in other orders),
 * so that frames can only meet by what they are. The interop tests compare both with
 * `go tool pprof -diff_base` (packages/cli/test/pprof-options-interop.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { seededRandom, thrownBy } from '@profkit/test-utils';
import { DiffReportBuilder, ErrorCodes, ProfileBuilder, diff, isProfkitError, diffReportUnsupported, topReport, treeReport, type Profile, type TopReportOptions } from '../src/node/index.js';

const NAMES = Array.from({ length: 24 }, (_, i) => `pkg.f${i}`);

/**
 * A random profile of `samples` samples over NAMES (count and cpu sample types; some inline
 * frames; some labels), its functions interned in an order of its own. `big` makes cpu values
 * whose sums pass 2^53 (the reports then sum in bigints).
 */
function randomProfile(seed: number, samples: number, { big = false, shared = [] as number[][], functions = NAMES.length, depth = 6 } = {}): Profile {
  const rnd = seededRandom(seed);
  const names = functions === NAMES.length ? NAMES : Array.from({ length: functions }, (_, i) => `pkg.f${i}`);
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }, { type: 'cpu', unit: 'nanoseconds' }] });
  b.internMapping({ filename: '/bin/app', memoryStart: 0x1000n, memoryLimit: 0x100000n });
  const order = names.map((_, i) => i).sort(() => rnd() - 0.5);
  const fns = new Map<number, number>();
  for (const i of order) fns.set(i, b.internFunction({ name: names[i]!, filename: `src/f${i % 5}.go` }));
  // Profiles of even seeds inline more functions: a call can be inlined on one side only.
  const inlined = (f: number) => f % 7 === 3 || (seed % 2 === 0 && f % 7 === 5);
  const loc = (f: number, line: number) =>
    inlined(f)
      ? b.internLocation({ functionId: fns.get(f)!, line, inlinedInto: [{ functionId: fns.get((f + 1) % names.length)!, line: line + 1 }] })
      : b.internLocation({ functionId: fns.get(f)!, line });
  const stacks = [...shared];
  for (let i = 0; i < samples; i++) {
    const stack = i < stacks.length ? stacks[i]! : Array.from({ length: 1 + Math.floor(rnd() * depth) }, () => Math.floor(rnd() * names.length));
    const value = big ? 2n ** 55n + BigInt(Math.floor(rnd() * 1000)) : BigInt(Math.floor(rnd() * 50) * 1_000_000);
    const labels = rnd() < 0.2 ? [{ key: 'worker', str: rnd() < 0.5 ? 'a' : 'b' }] : [];
    b.addSample(
      stack.map((f, k) => loc(f, 10 + ((f + k) % 3))),
      [BigInt(1 + Math.floor(rnd() * 3)), value],
      labels,
    );
  }
  return b.build();
}

/** NEW minus BASE reported from the two stack tables; undefined when the builder refuses the pair. */
function sideBySide(base: Profile, next: Profile, options: TopReportOptions & { sampleTypeIndex: number; normalize?: boolean; untrimmed?: boolean }) {
  const builder = new DiffReportBuilder(options);
  expect(builder.addNew(next)).toBeUndefined();
  expect(builder.addBase(base)).toBeUndefined();
  return builder.input();
}

const OPTIONS: TopReportOptions[] = [
  {},
  { cum: true },
  { by: 'file' },
  { by: 'line' },
  { by: 'filefunctions' },
  { inline: false },
  { nodeCount: 5 },
  { nodeFraction: 0, edgeFraction: 0 },
  { focus: 'f1$' },
  { ignore: 'f2' },
  { hide: 'f3' },
  { show: 'f1' },
  { showFrom: 'f4' },
  { pruneFrom: 'f6' },
  { mean: true },
  { dropNegative: true },
  { divideBy: 2, outputUnit: 'ms' },
];

describe('DiffReportBuilder: diff reports from two stack tables', () => {
  const shared = Array.from({ length: 40 }, (_, i) => [i % NAMES.length, (i * 7) % NAMES.length, (i * 5) % NAMES.length]);
  const next = randomProfile(1, 400, { shared });
  const base = randomProfile(2, 300, { shared });

  it.each(OPTIONS.map((o) => [JSON.stringify(o), o] as const))('top, tree and peek equal those of the merged difference: %s', (_name, options) => {
    for (const t of [0, 1]) {
      for (const normalize of options.mean ? [false] : [false, true]) {
        const merged = diff(base, next, { normalize });
        const o = { ...options, sampleTypeIndex: t };
        const input = () => sideBySide(base, next, { ...o, normalize });
        const top = topReport(input(), o);
        expect(top.text).toBe(topReport(merged, o).text);
        expect(top.total).toBe(topReport(merged, o).total);
        expect(treeReport(input(), o).text).toBe(treeReport(merged, o).text);
        expect(treeReport(input(), { ...o, symbol: 'f1' }).text).toBe(treeReport(merged, { ...o, symbol: 'f1' }).text);
      }
    }
  });

  // The report sums every node from the samples, then walks tables cut to the frames of the shown
  // nodes (diff-report.ts `prunedSource`): many nodes and deep stacks that share little make most
  // of each stack cut, with calls of the shown nodes whose weights include cut callees.
  it.each([{}, { nodeCount: 3 }, { nodeCount: 10, cum: true }, { nodeCount: 8, nodeFraction: 0, edgeFraction: 0 }, { by: 'line', nodeCount: 6 }, { nodeFraction: 0.02, edgeFraction: 0.01 }] as TopReportOptions[])(
    'reports of a few of many nodes equal those of the merged difference: %j',
    (options) => {
      const manyNext = randomProfile(5, 600, { functions: 300, depth: 30 });
      const manyBase = randomProfile(6, 500, { functions: 300, depth: 30 });
      for (const normalize of [false, true]) {
        const merged = diff(manyBase, manyNext, { normalize });
        const o = { ...options, sampleTypeIndex: 1 };
        const input = () => sideBySide(manyBase, manyNext, { ...o, normalize });
        expect(topReport(input(), o).text).toBe(topReport(merged, o).text);
        expect(treeReport(input(), o).text).toBe(treeReport(merged, o).text);
        expect(treeReport(input(), { ...o, symbol: 'f1' }).text).toBe(treeReport(merged, { ...o, symbol: 'f1' }).text);
        // Kept whole for an untrimmed report (peek): the same numbers.
        const whole = sideBySide(manyBase, manyNext, { ...o, normalize, untrimmed: true });
        expect(treeReport(whole, { ...o, symbol: 'f1' }).text).toBe(treeReport(merged, { ...o, symbol: 'f1' }).text);
      }
    },
  );

  // Random pairs and option sets: profiles whose functions differ (nodes on one side only),
  // shallow or deep stacks (the cut, callers far back in the table), no samples on one side,
  // sums past 2^53, every granularity, trimming option, stack filter and -normalize.
  it('reports of random pairs and options equal those of the merged difference (many seeds)', () => {
    const pick = <T>(rnd: () => number, list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!;
    const filters: TopReportOptions[] = [{}, {}, { focus: 'f1' }, { ignore: 'f2$' }, { hide: 'f3' }, { show: 'f[0-4]$' }, { showFrom: 'f4' }, { pruneFrom: 'f6' }];
    let compared = 0;
    for (let seed = 100; seed < 160; seed++) {
      const rnd = seededRandom(seed);
      const [newFunctions, baseFunctions] = rnd() < 0.5 ? [pick(rnd, [8, 40, 200]), pick(rnd, [8, 40, 200])] : [30, 30];
      const depth = pick(rnd, [3, 12, 40]);
      const big = rnd() < 0.15;
      const nextSamples = rnd() < 0.1 ? 0 : 50 + Math.floor(rnd() * 250);
      const baseSamples = rnd() < 0.1 ? 0 : 50 + Math.floor(rnd() * 250);
      const pairNext = randomProfile(seed * 2, nextSamples, { functions: newFunctions, depth, big });
      const pairBase = randomProfile(seed * 2 + 1, baseSamples, { functions: baseFunctions, depth, big: big && rnd() < 0.5 });
      const options: TopReportOptions = {
        ...pick(rnd, filters),
        ...(rnd() < 0.6 ? { nodeCount: pick(rnd, [1, 3, 10, 40]) } : {}),
        ...(rnd() < 0.5 ? { nodeFraction: pick(rnd, [0, 0.01, 0.05]) } : {}),
        ...(rnd() < 0.5 ? { edgeFraction: pick(rnd, [0, 0.02, 0.1]) } : {}),
        ...(rnd() < 0.3 ? { cum: true } : {}),
        ...(rnd() < 0.5 ? { by: pick(rnd, ['file', 'line', 'filefunctions'] as const) } : {}),
        ...(rnd() < 0.2 ? { inline: false } : {}),
        ...(rnd() < 0.2 ? { dropNegative: true } : {}),
      };
      const t = rnd() < 0.8 ? 1 : 0;
      const normalize = rnd() < 0.3;
      const o = { ...options, sampleTypeIndex: t };
      const builder = (untrimmed: boolean) => {
        const b = new DiffReportBuilder({ ...o, normalize, untrimmed });
        return b.addNew(pairNext) === undefined && b.addBase(pairBase) === undefined ? b.input() : undefined;
      };
      // Refused only for -normalize rounding samples to 0 (e.g. a base of no samples).
      if (!builder(false)) {
        expect(normalize).toBe(true);
        continue;
      }
      compared++;
      const merged = diff(pairBase, pairNext, { normalize });
      const name = `seed ${seed} ${JSON.stringify({ ...o, normalize, newFunctions, baseFunctions, depth, nextSamples, baseSamples })}`;
      expect(topReport(builder(false)!, o).text, name).toBe(topReport(merged, o).text);
      expect(treeReport(builder(false)!, o).text, name).toBe(treeReport(merged, o).text);
      // A peek whose symbol matches no shown node fails alike on both paths.
      const peek = { ...o, symbol: pick(rnd, ['f1', 'f1[0-9]$', '^pkg']) };
      const peekText = (input: Profile | ReturnType<DiffReportBuilder['input']>) => {
        try {
          return treeReport(input, peek).text;
        } catch (e) {
          return `error: ${(e as Error).message}`;
        }
      };
      const expected = peekText(merged);
      expect(peekText(builder(false)!), name).toBe(expected);
      expect(peekText(builder(true)!), name).toBe(expected);
    }
    expect(compared).toBeGreaterThan(45);
  });

  it('a profile minus itself: no entry (every node nets to 0) against the base total', () => {
    const input = sideBySide(next, next, { sampleTypeIndex: 1 });
    const top = topReport(input, { sampleTypeIndex: 1, nodeFraction: 0 });
    expect(top.text).toBe(topReport(diff(next, next), { sampleTypeIndex: 1, nodeFraction: 0 }).text);
    expect(top.total).toBeGreaterThan(0n);
    // Every node nets to 0, and nodes of 0 are not shown (pprof's "Showing nodes accounting for 0").
    expect(top.table.entries).toEqual([]);
    expect(top.text).toMatch(/^Showing nodes accounting for 0, 0% of [\d.]+m?s total$/m);
  });

  // The base is reduced in place (diff-report.ts `sideSamples`: its own stack column, nodes listed
  // by location id), the new profile copied: an id that names no location is no frame on either,
  // and a sample of value 0 no stack (it would add rows, and so calls, to the cut tables).
  it('location ids that name no location and samples of value 0 count as in the merged difference', () => {
    // Ids past the last location and id 0, which names none (the base is read in place through
    // its id -> row table only when every id is within it).
    const edited = (p: Profile, seed: number, absent: number): Profile => {
      const rnd = seededRandom(seed);
      const ids = p.samples.locations.location_id.slice();
      for (let k = 0; k < ids.length; k++) if (rnd() < 0.15) ids[k] = absent;
      const values = p.samples['.values'].map((c) => c.map((v) => (rnd() < 0.1 ? 0n : v)));
      return { ...p, samples: { ...p.samples, value: values[0]!, '.values': values, locations: { offsets: p.samples.locations.offsets, location_id: ids } } };
    };
    const [nextProfile, baseProfile] = [randomProfile(9, 500, { functions: 200, depth: 20 }), randomProfile(10, 400, { functions: 200, depth: 20 })];
    const past = (p: Profile) => p.locations.location_id.length + 7;
    for (const [manyNext, manyBase] of [
      [edited(nextProfile, 1, past(nextProfile)), edited(baseProfile, 2, 0)],
      [edited(nextProfile, 3, 0), edited(baseProfile, 4, past(baseProfile))],
    ] as const) {
      for (const options of [{ nodeCount: 4 }, { nodeCount: 12, cum: true }, { nodeFraction: 0 }] as TopReportOptions[]) {
        const o = { ...options, sampleTypeIndex: 1 };
        const merged = diff(manyBase, manyNext);
        expect(topReport(sideBySide(manyBase, manyNext, o), o).text).toBe(topReport(merged, o).text);
        expect(treeReport(sideBySide(manyBase, manyNext, o), o).text).toBe(treeReport(merged, o).text);
        const peek = { ...o, symbol: 'f1' };
        expect(treeReport(sideBySide(manyBase, manyNext, { ...o, untrimmed: true }), peek).text).toBe(treeReport(merged, peek).text);
      }
    }
  });

  it('sums beyond 2^53 stay exact', () => {
    const bigNext = randomProfile(3, 200, { big: true, shared });
    const bigBase = randomProfile(4, 150, { big: true, shared });
    const o = { sampleTypeIndex: 1, nodeFraction: 0 };
    const top = topReport(sideBySide(bigBase, bigNext, o), o);
    expect(top.total).toBeGreaterThan(2n ** 53n);
    expect(top.text).toBe(topReport(diff(bigBase, bigNext), o).text);
    expect(treeReport(sideBySide(bigBase, bigNext, o), o).text).toBe(treeReport(diff(bigBase, bigNext), o).text);
    // One side summed in doubles, the other in bigints: the calls' weights add across representations.
    expect(treeReport(sideBySide(base, bigNext, o), o).text).toBe(treeReport(diff(base, bigNext), o).text);
    expect(treeReport(sideBySide(bigBase, next, o), o).text).toBe(treeReport(diff(bigBase, next), o).text);
  });

  // Values are summed in doubles while their magnitudes sum to less than 2^53 (read through the
  // columns' 32-bit halves), else in bigints: sums at the edge, values with a high half at the edge.
  it('sums at 2^53 and values at 2^53 stay exact', () => {
    const valued = (values: bigint[]): Profile => {
      const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
      const loc = (name: string) => b.internLocation({ functionId: b.internFunction({ name }), line: 1 });
      const [main, f, g] = [loc('main'), loc('f'), loc('g')];
      values.forEach((v, i) => b.addSample(i % 2 === 0 ? [f, main] : [g, f, main], [v]));
      return b.build();
    };
    const edges = [2n ** 52n, 2n ** 52n - 1n, 2n ** 52n + 1n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, 3n];
    // Every node, or one (the others cut: every node's sums given to the report as `nodeSums`).
    for (const o of [{ sampleTypeIndex: 0, nodeFraction: 0 }, { sampleTypeIndex: 0, nodeCount: 1 }]) {
      for (const a of edges) {
        for (const b of edges) {
          const [next, base] = [valued([a, b, 1n]), valued([b, a])];
          const merged = diff(base, next);
          expect(treeReport(sideBySide(base, next, o), o).text, `${a} ${b}`).toBe(treeReport(merged, o).text);
          // The printed units round: the numbers themselves, to the unit.
          const [top, mergedTop] = [topReport(sideBySide(base, next, o), o), topReport(merged, o)];
          expect(top.total, `${a} ${b}`).toBe(mergedTop.total);
          expect(top.table.entries, `${a} ${b}`).toEqual(mergedTop.table.entries);
        }
      }
    }
  });

  // The sides' sums are read in doubles or, past 2^53, in bigints: a negative value is found either way.
  it('refuses negative values in sides whose sums pass 2^53', () => {
    const valued = (values: bigint[]): Profile => {
      const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
      const main = b.internLocation({ functionId: b.internFunction({ name: 'main' }), line: 1 });
      for (const v of values) b.addSample([main], [v]);
      return b.build();
    };
    const o = { sampleTypeIndex: 0 };
    for (const negative of [-3n, -(2n ** 60n)]) {
      const [big, bigWithNegative] = [valued([2n ** 55n, 5n]), valued([2n ** 55n, negative])];
      const refusedBase = new DiffReportBuilder(o);
      expect(refusedBase.addNew(big)).toBeUndefined();
      expect(refusedBase.addBase(bigWithNegative)).toMatch(/base profile has negative values/);
      const refusedNew = new DiffReportBuilder(o);
      expect(refusedNew.addNew(bigWithNegative)).toBeUndefined();
      expect(refusedNew.addBase(big)).toMatch(/new profile has negative values/);
    }
  });

  // Merging drops samples that cancel out, and pprof -normalize drops those it rounds to 0: walked
  // here, a stack of only those would show its calls with weight 0 (x -> a below).
  it('refuses a new profile whose samples merging or -normalize would drop', () => {
    const named = (samples: [string[], bigint][]): Profile => {
      const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
      const fns = new Map<string, number>();
      const loc = (n: string) => fns.get(n) ?? fns.set(n, b.internLocation({ functionId: b.internFunction({ name: n }), line: 1 })).get(n)!;
      for (const [stack, v] of samples) b.addSample(stack.map(loc), [v]);
      return b.build();
    };
    const o = { sampleTypeIndex: 0, nodeFraction: 0, edgeFraction: 0 };
    const cancelling = named([[['a', 'x', 'main'], 5n], [['a', 'x', 'main'], -5n], [['a', 'main'], 3n], [['x', 'main'], 2n]]);
    const small = named([[['b', 'main'], 1n]]);
    const builder = new DiffReportBuilder(o);
    expect(builder.addNew(cancelling)).toBeUndefined();
    expect(builder.addBase(small)).toMatch(/new profile has negative values/);
    // The merged tree has no call of weight 0 (the side-by-side walk had x -> a and a <- x).
    expect(treeReport(diff(small, cancelling), o).text).not.toMatch(/^ +0 +0% \|   [ax]$/m);
    expect(treeReport(diff(small, cancelling), o).text).toMatch(/^ +3ns +100% \|   main$/m);
    const rounded = named([[['a', 'x', 'main'], 1n], [['a', 'main'], 1_000_000n], [['x', 'main'], 1_000_000n]]);
    const normalized = new DiffReportBuilder({ ...o, normalize: true });
    expect(normalized.addNew(rounded)).toBeUndefined();
    expect(normalized.addBase(named([[['a', 'main'], 10n], [['x', 'main'], 10n]]))).toMatch(/-normalize rounds samples of the new profile to 0/);
  });

  // pprof merges mappings of one identity (build id, size, offset) into the first one, whose file
  // then names the unsymbolized frames of both: one node [app], not one per directory.
  it('refuses mappings that merging makes one under another file name', () => {
    const unsymbolized = (filename: string, value: bigint): Profile => {
      const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
      const m = b.internMapping({ filename, buildId: 'abc', memoryStart: 0x1000n, memoryLimit: 0x9000n });
      b.addSample([b.internLocation({ mappingId: m, address: 0x1234n }), b.internLocation({ functionId: b.internFunction({ name: 'main' }), line: 1 })], [value]);
      return b.build();
    };
    const [newer, older] = [unsymbolized('/v2/app', 10n), unsymbolized('/v1/app', 4n)];
    const o = { sampleTypeIndex: 0, nodeFraction: 0 };
    const builder = new DiffReportBuilder(o);
    expect(builder.addNew(newer)).toBeUndefined();
    expect(builder.addBase(older)).toMatch(/"\/v2\/app" and "\/v1\/app" are merged into one/);
    expect(topReport(diff(older, newer), o).table.entries.map((e) => [e.name, e.flat])).toEqual([['[app]', 6n], ['main', 0n]]);
    // The same file: one mapping either way, reported side by side.
    const same = new DiffReportBuilder(o);
    expect(same.addNew(newer)).toBeUndefined();
    expect(same.addBase(unsymbolized('/v2/app', 4n))).toBeUndefined();
    expect(topReport(same.input(), o).text).toBe(topReport(diff(unsymbolized('/v2/app', 4n), newer), o).text);
  });

  it('names the options and profiles it cannot report without merging', () => {
    expect(diffReportUnsupported({ tagFocus: 'worker=a' })).toMatch(/tag filters/);
    expect(diffReportUnsupported({ tagRoot: ['worker'] })).toMatch(/tag frames/);
    expect(diffReportUnsupported({ relativePercentages: true })).toMatch(/relative/);
    expect(diffReportUnsupported({ by: 'address' })).toMatch(/addresses/);
    expect(diffReportUnsupported({ mean: true, normalize: true })).toMatch(/normalize/);
    expect(diffReportUnsupported({ focus: 'f1', mean: true, by: 'line' })).toBeUndefined();
    expect(() => new DiffReportBuilder({ sampleTypeIndex: 0, relativePercentages: true })).toThrow(/needs the merged profile/);
    // A base with negative values (itself a difference): the merged total is not the sides' sum of |value|.
    const builder = new DiffReportBuilder({ sampleTypeIndex: 1 });
    expect(builder.addNew(next)).toBeUndefined();
    expect(builder.addBase(diff(base, next))).toMatch(/negative values/);
    // A new profile that is itself a -diff_base difference (samples labelled pprof::base).
    expect(new DiffReportBuilder({ sampleTypeIndex: 1 }).addNew(diff(base, next))).toMatch(/pprof::base/);
    // The merged profile defaults to the base's default sample type when the new one names none.
    const named: Profile = { ...base, '.profile': { ...base['.profile'], default_sample_type: 'samples' } };
    const defaulted = new DiffReportBuilder({ sampleTypeIndex: 1, sampleTypeDefaulted: true });
    expect(defaulted.addNew(next)).toBeUndefined();
    expect(defaulted.addBase(named)).toMatch(/another sample type/);
    const asked = new DiffReportBuilder({ sampleTypeIndex: 1 });
    expect(asked.addNew(next)).toBeUndefined();
    expect(asked.addBase(named)).toBeUndefined();
  });

  // A copied side keeps its frames as location rows in 2 bytes while the rows fit (at most 65,536
  // locations: rows 0..65,535), else in 4 (diff-report.ts `sideSamples`). The samples reach the
  // last rows, whose function and line differ from row 0's (where a wrapped row would land).
  it('frames of sides of 65,536 and 65,537 locations (the last rows) count as in the merged difference', () => {
    const manyLocations = (locations: number, seed: number, pastLast = false): Profile => {
      const rnd = seededRandom(seed);
      const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
      const fns = Array.from({ length: 50 }, (_, i) => b.internFunction({ name: `pkg.f${i}`, filename: `src/f${i % 5}.go` }));
      const locs = Array.from({ length: locations }, (_, i) => b.internLocation({ functionId: fns[i % fns.length]!, line: i + 1 }));
      for (let i = 0; i < 200; i++) {
        const stack = [locs[locations - 1 - (i % 3)]!, locs[Math.floor(rnd() * locations)]!, locs[i % 2]!];
        b.addSample(stack, [BigInt(1 + Math.floor(rnd() * 1000))]);
      }
      const p = b.build();
      if (!pastLast) return p;
      // An id past the last location: the base is then copied (not read in place) too.
      const ids = p.samples.locations.location_id.slice();
      ids[1] = locations + 5;
      return { ...p, samples: { ...p.samples, locations: { offsets: p.samples.locations.offsets, location_id: ids } } };
    };
    for (const locations of [65_536, 65_537]) {
      // Both sides copied (the base has an id past its last location).
      const [pairNext, pairBase] = [manyLocations(locations, 1), manyLocations(locations, 2, true)];
      expect(pairNext.locations.location_id.length).toBe(locations);
      // Every node and call (by line: a node per location).
      const o = { sampleTypeIndex: 0, by: 'line', nodeFraction: 0 } as const;
      expect(treeReport(sideBySide(pairBase, pairNext, o), o).text, `${locations} locations`).toBe(treeReport(diff(pairBase, pairNext), o).text);
    }
  });

  // Location ids far apart (the id -> row lookup is then a Map, not an array: the base is copied),
  // ids past 2^31, and ids of the samples that name no location, on either side.
  it('sparse location ids, ids past 2^31 and unknown ids count as in the merged difference', () => {
    const sparse = (p: Profile, seed: number): Profile => {
      const rnd = seededRandom(seed);
      const idOf = (id: number) => (id === 1 ? 0xffff_fff0 : id * 100_003);
      const ids = Uint32Array.from(p.samples.locations.location_id, (id) => (rnd() < 0.1 ? 0xffff_ff00 + Math.floor(rnd() * 16) : idOf(id)));
      return {
        ...p,
        locations: { ...p.locations, location_id: Uint32Array.from(p.locations.location_id, idOf) },
        samples: { ...p.samples, locations: { offsets: p.samples.locations.offsets, location_id: ids } },
      };
    };
    const [plainNext, plainBase] = [randomProfile(11, 400, { functions: 60, depth: 12 }), randomProfile(12, 300, { functions: 60, depth: 12 })];
    for (const [pairNext, pairBase] of [
      [sparse(plainNext, 1), sparse(plainBase, 2)],
      [plainNext, sparse(plainBase, 3)],
      [sparse(plainNext, 4), plainBase],
    ] as const) {
      for (const options of [{ nodeCount: 5 }, { nodeFraction: 0, cum: true }, { by: 'line', nodeCount: 10 }, { focus: 'f1' }] as TopReportOptions[]) {
        const o = { ...options, sampleTypeIndex: 1 };
        const merged = diff(pairBase, pairNext);
        expect(topReport(sideBySide(pairBase, pairNext, o), o).text, JSON.stringify(o)).toBe(topReport(merged, o).text);
        expect(treeReport(sideBySide(pairBase, pairNext, o), o).text, JSON.stringify(o)).toBe(treeReport(merged, o).text);
      }
    }
  });

  // A side of no samples (and of no locations): the total is then the other side's (pprof
  // computeTotal), every node of one sign.
  it('sides of no samples report as the merged difference', () => {
    const empty = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }, { type: 'cpu', unit: 'nanoseconds' }] }).build();
    const noSamples = randomProfile(13, 0);
    const some = randomProfile(14, 300);
    for (const [pairBase, pairNext] of [
      [empty, some],
      [some, empty],
      [noSamples, some],
      [some, noSamples],
      [empty, empty],
      [empty, noSamples],
    ] as const) {
      for (const options of [{}, { nodeFraction: 0 }, { by: 'file' }, { focus: 'f1' }, { mean: true }] as TopReportOptions[]) {
        const o = { ...options, sampleTypeIndex: 1 };
        const merged = diff(pairBase, pairNext);
        expect(topReport(sideBySide(pairBase, pairNext, o), o).text, JSON.stringify(o)).toBe(topReport(merged, o).text);
        expect(treeReport(sideBySide(pairBase, pairNext, o), o).text, JSON.stringify(o)).toBe(treeReport(merged, o).text);
      }
    }
  });

  // The tables the report walks for the calls are cut to the frames of shown nodes (diff-report.ts
  // `sideStackTable`): a run of other frames between two becomes one frame (the call across it
  // stays residual), the frames above the outermost and below the innermost are left out. Direct
  // and residual calls of one pair, runs at the root and at the leaf, inlined frames, recursion,
  // and nodes not shown between shown ones when nothing is trimmed (every node kept: no call
  // across them): one netting to 0, one left out by -drop_negative.
  it('calls between shown nodes across cut runs of other frames are those of the merged difference', () => {
    const profile = (stacks: [string[], bigint][]) => {
      const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
      const fns = new Map<string, number>();
      const fn = (name: string) => fns.get(name) ?? fns.set(name, b.internFunction({ name, filename: 'a.go' })).get(name)!;
      // 'f+g': g inlined into f.
      const loc = (frame: string) => {
        const [outer, inner] = frame.split('+') as [string, string?];
        if (!inner) return b.internLocation({ functionId: fn(outer), line: 1 });
        return b.internLocation({ functionId: fn(inner), line: 2, inlinedInto: [{ functionId: fn(outer), line: 3 }] });
      };
      for (const [rootFirst, value] of stacks) b.addSample(rootFirst.map(loc).reverse(), [value]);
      return b.build();
    };
    const next = profile([
      [['main', 'a', 'S1', 'x1', 'x2', 'S2', 'y'], 500n],
      [['main', 'S1', 'S2'], 300n],
      [['main', 'S1', 'x3', 'S2+S3'], 200n],
      [['main', 'b', 'z', 'S1', 'z', 'S3', 'S1'], 100n],
      [['main', 'S1', 'same', 'S2'], 70n],
      [['main', 'S1', 'shrunk', 'S2'], 20n],
      [['leafy', 'S2', 'w1', 'w2'], 50n],
    ]);
    const base = profile([
      [['main', 'S1', 'x1', 'S2'], 100n],
      [['main', 'S1', 'same', 'S2'], 70n],
      [['main', 'S1', 'shrunk', 'S2'], 90n],
      [['main', 'c', 'S3'], 60n],
      [['main', 'S2', 'x2', 'S1'], 40n],
      [['main', 'S2+S3', 'w1'], 30n],
    ]);
    const merged = diff(base, next);
    const optionSets: TopReportOptions[] = [{ nodeCount: 2 }, { nodeCount: 3 }, { nodeCount: 4, cum: true }, { nodeCount: 5, edgeFraction: 0 }, { nodeFraction: 0 }, { nodeFraction: 0, edgeFraction: 0 }, { nodeFraction: 0, dropNegative: true }, { inline: false, nodeCount: 3 }];
    let residualCalls = 0;
    for (const o of optionSets) {
      const input = () => sideBySide(base, next, { ...o, sampleTypeIndex: 0 });
      expect(topReport(input(), o).text, JSON.stringify(o)).toBe(topReport(merged, o).text);
      expect(treeReport(input(), o).text, JSON.stringify(o)).toBe(treeReport(merged, o).text);
      // The text prints no residual flag: the graphs hold it (a call across a dropped run would be direct).
      const graph = treeReport(merged, o).graph;
      expect(treeReport(input(), o).graph.nodes, JSON.stringify(o)).toEqual(graph.nodes);
      residualCalls += graph.nodes.reduce((sum, n) => sum + n.out.filter((e) => e.residual).length, 0);
      expect(treeReport(input(), { ...o, symbol: 'S' }).text, JSON.stringify(o)).toBe(treeReport(merged, { ...o, symbol: 'S' }).text);
    }
    expect(residualCalls).toBeGreaterThan(0);
  });

  // The input holds the sides' nodes and filtered frames as built: a report with another
  // granularity, -noinlines or stack filter printed them under its own header (e.g. "focus=zzz"
  // above every frame, "--by line" above function nodes).
  it('a report with other nodes or stack filters than the input was built with is a typed usage error', () => {
    const input = sideBySide(base, next, { sampleTypeIndex: 1, focus: 'f1', by: 'file' });
    const built = topReport(input, { sampleTypeIndex: 1, focus: 'f1', by: 'file' }).text;
    expect(built).toBe(topReport(diff(base, next), { sampleTypeIndex: 1, focus: 'f1', by: 'file' }).text);
    // A RegExp pattern given again (another object of the same text) is the same filter.
    const byRegExp = sideBySide(base, next, { sampleTypeIndex: 1, focus: /f1/, by: 'file' });
    expect(topReport(byRegExp, { sampleTypeIndex: 1, focus: new RegExp('f1'), by: 'file' }).text).toBe(topReport(diff(base, next), { sampleTypeIndex: 1, focus: /f1/, by: 'file' }).text);
    const others: TopReportOptions[] = [{ focus: 'f1' }, { focus: 'f1', by: 'line' }, { focus: 'f1', by: 'file', inline: false }, { focus: 'zzz', by: 'file' }, { by: 'file' }, { focus: 'f1', hide: 'f2', by: 'file' }];
    for (const o of others) {
      const e = thrownBy(() => topReport(input, { ...o, sampleTypeIndex: 1 }));
      expect(isProfkitError(e) ? [e.code, e.detail.rule] : e, JSON.stringify(o)).toEqual([ErrorCodes.USAGE, 'DiffReportBuilder options match the report options']);
    }
  });

  // Names past 4,096 characters are keyed by a short id of the node table's (StringKeys): the ids
  // must be those of the one table both sides add to. Given per side, the base's first long name
  // took the id of the new profile's first one (another function), and its own name a node twice.
  it('long function names meet by name across the two profiles', () => {
    const long = (c: string) => `pkg.${c.repeat(5000)}`;
    const profile = (names: string[], values: bigint[]) => {
      const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
      const locs = names.map((name) => b.internLocation({ functionId: b.internFunction({ name, filename: 'a.go' }), line: 1 }));
      locs.forEach((loc, i) => b.addSample([loc, ...locs.slice(0, i)], [values[i]!]));
      return b.build();
    };
    const next = profile([long('a'), long('b')], [30n, 70n]);
    const base = profile([long('b'), long('a'), long('c')], [10n, 20n, 40n]);
    const merged = diff(base, next);
    for (const o of [{}, { cum: true }, { by: 'line' as const }]) {
      const input = () => sideBySide(base, next, { ...o, sampleTypeIndex: 0 });
      expect(topReport(input(), o).text).toBe(topReport(merged, o).text);
      expect(treeReport(input(), o).text).toBe(treeReport(merged, o).text);
    }
  });
});
