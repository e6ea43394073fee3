import { describe, expect, it } from 'vitest';
import { ProfileBuilder, ProfileIndex, aggregateBy, aggregateStacks, locationRow, mappingRow, resolveStack, sampleRow, validate, type Profile } from '../src/node/index.js';

function sampleMeaning(p: Profile) {
  const idx = new ProfileIndex(p);
  return Array.from({ length: p.samples.value.length }, (_, i) => ({
    frames: resolveStack(p, i, idx).map((f) => `${f.name}@${f.filename}:${f.line}:${f.column}#${f.address.toString(16)}`),
    value: p.samples.value[i],
    labels: sampleRow(p, i).labels,
  }));
}

/** Two locations of `work` (different lines/addresses), one with `helper` inlined into it. */
function build(): Profile {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
  const m = b.internMapping({ memoryStart: 0x1000n, memoryLimit: 0x9000n, filename: '/bin/app', hasFunctions: true, hasFilenames: true, hasLineNumbers: true, hasInlineFrames: true });
  const work = b.internFunction({ name: 'work', filename: 'src/work.c', startLine: 10 });
  const helper = b.internFunction({ name: 'helper', filename: 'src/helper.h', startLine: 3 });
  const main = b.internFunction({ name: 'main', filename: 'src/main.c', startLine: 1 });
  const l1 = b.internLocation({ functionId: work, line: 12, column: 4, address: 0x1100n, mappingId: m });
  const l2 = b.internLocation({ functionId: helper, line: 5, column: 2, address: 0x1200n, mappingId: m, inlinedInto: [{ functionId: work, line: 15, column: 8 }] });
  const l3 = b.internLocation({ functionId: main, line: 20, address: 0x1300n, mappingId: m });
  b.addSample([l1, l3], [1], [{ key: 't', str: 'a' }]);
  b.addSample([l2, l3], [2]);
  b.addSample([l1, l3], [4], [{ key: 't', str: 'a' }]);
  b.addSample([l1, l3], [8], [{ key: 't', str: 'b' }]);
  b.addSample([l1, l3], [0], [{ key: 't', str: 'b' }]);
  b.setSampleExtension('fmt', 'row', 4);
  return b.build();
}

describe('aggregateStacks', () => {
  it('sums samples with the same stack and labels, keeping zero samples', () => {
    const p = build();
    const a = aggregateStacks(p);
    expect(sampleMeaning(a).map((s) => [s.frames.map((f) => f.split('@')[0]).join(' <- '), s.value, s.labels])).toEqual([
      ['work <- main', 5n, [{ key: 't', str: 'a' }]],
      ['helper <- work <- main', 2n, []],
      ['work <- main', 8n, [{ key: 't', str: 'b' }]],
    ]);
    // Samples were combined: per-sample extension columns are dropped.
    expect(a['.extensions'].fmt?.samples).toBeUndefined();
    expect(validate(a).ok).toBe(true);
    const zero = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    zero.addSample([zero.internLocation({ functionId: zero.internFunction({ name: 'f' }) })], [0]);
    expect(aggregateStacks(zero.build()).samples.value.length).toBe(1);
  });
});

describe('aggregateBy', () => {
  it('by function: clears lines, columns and addresses; locations of the same frames merge', () => {
    const a = aggregateBy(build(), 'function');
    expect(a.locations.location_id.length).toBe(3);
    expect(sampleMeaning(a)[1]!.frames).toEqual(['helper@:0:0#0', 'work@:0:0#0', 'main@:0:0#0']);
    expect(sampleMeaning(a)[0]!.frames).toEqual(['work@:0:0#0', 'main@:0:0#0']);
    expect(mappingRow(a, 0)).toMatchObject({ hasFunctions: true, hasFilenames: false, hasLineNumbers: false, hasInlineFrames: true });
    // Samples stay one per input sample.
    expect(a.samples.value.length).toBe(5);
    expect(Array.from(a['.extensions'].fmt!.samples!.row as Float64Array)).toEqual([0, 0, 0, 0, 4]);
  });

  it('by function without inline frames keeps only the outermost line', () => {
    const a = aggregateBy(build(), 'function', { inline: false });
    expect(sampleMeaning(a)[1]!.frames).toEqual(['work@:0:0#0', 'main@:0:0#0']);
    // work's two locations are now identical.
    expect(a.locations.location_id.length).toBe(2);
    expect(mappingRow(a, 0).hasInlineFrames).toBe(false);
  });

  it('by line keeps file and line, drops columns unless asked', () => {
    const a = aggregateBy(build(), 'line');
    expect(sampleMeaning(a)[1]!.frames).toEqual(['helper@src/helper.h:5:0#0', 'work@src/work.c:15:0#0', 'main@src/main.c:20:0#0']);
    const c = aggregateBy(build(), 'line', { columns: true });
    expect(sampleMeaning(c)[1]!.frames[0]).toBe('helper@src/helper.h:5:2#0');
  });

  it('by file names functions after their file (the model needs a name)', () => {
    const a = aggregateBy(build(), 'file');
    expect(sampleMeaning(a)[1]!.frames).toEqual(['src/helper.h@src/helper.h:0:0#0', 'src/work.c@src/work.c:0:0#0', 'src/main.c@src/main.c:0:0#0']);
    expect(mappingRow(a, 0)).toMatchObject({ hasFunctions: false, hasFilenames: true });
  });

  it('by address: a copy with inline frames, else only outermost lines at their addresses', () => {
    const p = build();
    expect(sampleMeaning(aggregateBy(p, 'address'))).toEqual(sampleMeaning(p));
    const a = aggregateBy(p, 'address', { inline: false });
    expect(sampleMeaning(a)[1]!.frames).toEqual(['work@src/work.c:15:0#1200', 'main@src/main.c:20:0#1300']);
    expect(locationRow(a, 0).address).toBe(0x1100n);
  });
});
