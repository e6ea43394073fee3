import { describe, expect, it } from 'vitest';
import { ErrorCodes, ProfileBuilder, ProfileIndex, ProfkitError, filterSamples, resolveStack, selectSampleTypes, type LabelInput, type Profile } from '../src/node/index.js';

/** Frames are `name` or `name@file`; `inner>outer` for inlined lines; `lib:name` maps to /lib/<lib>.so. */
function build(samples: [string[], number, LabelInput[]?][]): Profile {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }, { type: 'cpu', unit: 'nanoseconds' }] });
  const fn = (s: string) => {
    const [name, file] = s.split('@');
    return b.internFunction({ name: name!, filename: file ?? '' });
  };
  samples.forEach(([frames, v, labels], i) => {
    const ids = frames.map((fr) => {
      let mappingId: number | undefined;
      let text = fr;
      const colon = fr.indexOf(':');
      if (colon > 0) {
        mappingId = b.internMapping({ filename: `/lib/${fr.slice(0, colon)}.so` });
        text = fr.slice(colon + 1);
      }
      const [first, ...rest] = text.split('>');
      return b.internLocation({ functionId: fn(first!), mappingId, inlinedInto: rest.map((r) => ({ functionId: fn(r) })) });
    });
    b.addSample(ids, [v, v * 10], labels);
    b.setSampleExtension('fmt', 'row', i);
  });
  return b.build();
}

function stacks(p: Profile): string[] {
  const idx = new ProfileIndex(p);
  return Array.from({ length: p.samples.value.length }, (_, i) => `${resolveStack(p, i, idx).map((f) => f.name).join(' <- ')} = ${p.samples.value[i]}`);
}

const P = () =>
  build([
    [['a', 'main'], 1, [{ key: 'thread', str: 'w1' }]],
    [['b@util.c', 'a', 'main'], 2, [{ key: 'thread', str: 'w2' }]],
    [['c', 'main'], 3],
    [['ssl:read', 'c', 'main'], 4, [{ key: 'bytes', num: 5 }]],
    [['x>b@util.c', 'main'], 5],
    [[], 6],
  ]);

describe('filterSamples', () => {
  it('focus keeps samples with a matching frame (name, file or mapping file)', () => {
    expect(stacks(filterSamples(P(), { focus: '^a$' }))).toEqual(['a <- main = 1', 'b <- a <- main = 2']);
    expect(stacks(filterSamples(P(), { focus: 'util' }))).toEqual(['b <- a <- main = 2', 'x <- b <- main = 5']);
    expect(stacks(filterSamples(P(), { focus: 'ssl\\.so' }))).toEqual(['read <- c <- main = 4']);
  });

  it('ignore drops samples with any matching frame; an ignored frame is never focused', () => {
    expect(stacks(filterSamples(P(), { ignore: '^b$' }))).toEqual(['a <- main = 1', 'c <- main = 3', 'read <- c <- main = 4']);
    expect(stacks(filterSamples(P(), { focus: 'main', ignore: '^c$' }))).toEqual(['a <- main = 1', 'b <- a <- main = 2', 'x <- b <- main = 5']);
    // The focused location is the one ignored: the sample goes.
    expect(stacks(filterSamples(P(), { focus: '^a$', ignore: '^a$' }))).toEqual([]);
  });

  it('hide removes matching frames, show keeps only matching ones; empty stacks go', () => {
    expect(stacks(filterSamples(P(), { hide: '^main$' }))).toEqual(['a = 1', 'b <- a = 2', 'c = 3', 'read <- c = 4', 'x <- b = 5']);
    // Hiding an inlined line keeps the rest of its location.
    expect(stacks(filterSamples(P(), { hide: '^x$' }))).toEqual(['a <- main = 1', 'b <- a <- main = 2', 'c <- main = 3', 'read <- c <- main = 4', 'b <- main = 5']);
    // A matching mapping file hides the whole location.
    expect(stacks(filterSamples(P(), { hide: '/lib/ssl' }))[3]).toBe('c <- main = 4');
    expect(stacks(filterSamples(P(), { show: '^(a|b)$' }))).toEqual(['a = 1', 'b <- a = 2', 'b = 5']);
  });

  it('filters by tags and keeps per-sample extension columns of the kept samples', () => {
    const f = filterSamples(P(), { tagFocus: 'thread=w2|w9' });
    expect(stacks(f)).toEqual(['b <- a <- main = 2']);
    expect(Array.from(f['.extensions'].fmt!.samples!.row as Float64Array)).toEqual([1]);
    // Without a key, pprof matches every expression against `key:value` strings.
    expect(stacks(filterSamples(P(), { tagFocus: '^thread:w' }))).toEqual(['a <- main = 1', 'b <- a <- main = 2']);
    expect(stacks(filterSamples(P(), { tagFocus: '^w' }))).toEqual([]);
    expect(stacks(filterSamples(P(), { tagFocus: 'thread:,1$' }))).toEqual(['a <- main = 1']);
    expect(stacks(filterSamples(P(), { tagIgnore: 'thread=.' })).length).toBe(4);
    // Tag filters alone keep samples without frames (like pprof's separate tag filtering).
    expect(stacks(filterSamples(P(), { tagIgnore: (ls) => ls.some((l) => l.key === 'bytes') }))).toContain(' = 6');
  });
});

describe('numeric tag ranges (pprof -tagfocus syntax)', () => {
  it('compares numeric labels after unit scaling, in the key unit', () => {
    const p = build([
      [['a'], 1, [{ key: 'bytes', num: 5 }]],
      [['b'], 2, [{ key: 'bytes', num: 3000 }]],
      [['c'], 3, [{ key: 'mem', num: 2, unit: 'megabytes' }]],
      [['d'], 4],
    ]);
    expect(stacks(filterSamples(p, { tagFocus: 'bytes=4b:6b' }))).toEqual(['a = 1']);
    expect(stacks(filterSamples(p, { tagFocus: '2kb:' }))).toEqual(['b = 2', 'c = 3']);
    expect(stacks(filterSamples(p, { tagFocus: ':1kb' }))).toEqual(['a = 1']);
    expect(stacks(filterSamples(p, { tagFocus: 'mem=2mb' }))).toEqual(['c = 3']);
    expect(stacks(filterSamples(p, { tagIgnore: '1b:1gb' }))).toEqual(['d = 4']);
    // A bare number has no unit, so it never equals a value in bytes (as in pprof).
    expect(stacks(filterSamples(p, { tagFocus: 'bytes=5' }))).toEqual([]);
  });
});

describe('selectSampleTypes', () => {
  it('keeps the chosen value columns, in the given order', () => {
    const p = P();
    p['.profile'].default_sample_type = 'samples';
    const s = selectSampleTypes(p, [1]);
    expect(s.sample_types).toEqual({ type: ['cpu'], unit: ['nanoseconds'] });
    expect(Array.from(s.samples.value)).toEqual([10n, 20n, 30n, 40n, 50n, 60n]);
    expect(s.samples['.values'][0]).toBe(s.samples.value);
    expect(s['.profile'].default_sample_type).toBe('');
    const r = selectSampleTypes(p, [1, 0]);
    expect(r.sample_types.type).toEqual(['cpu', 'samples']);
    expect(Array.from(r.samples['.values'][1]!)).toEqual([1n, 2n, 3n, 4n, 5n, 6n]);
    expect(r['.profile'].default_sample_type).toBe('samples');
    for (const bad of [[2], [-1], []]) {
      try {
        selectSampleTypes(p, bad);
        expect.unreachable();
      } catch (e) {
        expect((e as ProfkitError).code).toBe(ErrorCodes.USAGE);
      }
    }
  });
});
