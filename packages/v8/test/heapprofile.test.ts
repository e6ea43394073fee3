import { describe, expect, it } from 'vitest';
import { ProfileBuilder, type ProfkitError } from '@profkit/core';
import { createRegistry } from '@profkit/core/node';
import { thrownBy } from '@profkit/test-utils';
import v8Adapter, { readHeapProfileBytes, writeHeapProfile } from '../src/index.js';
import { callFrame, dec, enc, expectValid, stacksByMeaning } from './helpers.js';

/** (root) → main (line 0) → alloc (line 9): samples 100 B + 40 B at alloc, 8 B at main. */
function smallHeapProfile() {
  return {
    head: {
      callFrame: callFrame('(root)'),
      selfSize: 0,
      id: 1,
      children: [
        {
          callFrame: callFrame('main', 'file:///a.js', 0, 4, '3'),
          selfSize: 8,
          id: 2,
          children: [{ callFrame: callFrame('alloc', 'file:///a.js', 9, 14, '3'), selfSize: 140, id: 3, children: [] }],
        },
      ],
    },
    samples: [
      { size: 100, nodeId: 3, ordinal: 5 },
      { size: 8, nodeId: 2, ordinal: 7 },
      { size: 40, nodeId: 3, ordinal: 9 },
    ],
  };
}

const bytesOf = (d: Uint8Array | AsyncIterable<Uint8Array>) => d as Uint8Array;

describe('.heapprofile read', () => {
  const { profile, warnings } = readHeapProfileBytes(enc(smallHeapProfile()));
  it('one sample per sampled allocation: objects 1, space = size; 1-based positions; ordinals kept', () => {
    expectValid(profile);
    expect(warnings).toEqual([]);
    expect(profile.sample_types).toEqual({ type: ['objects', 'space'], unit: ['count', 'bytes'] });
    expect(stacksByMeaning(profile, 1)).toEqual(
      new Map([
        ['main@file:///a.js:1:5;alloc@file:///a.js:10:15', 140n],
        ['main@file:///a.js:1:5', 8n],
      ]),
    );
    expect(Array.from(profile['.extensions'].v8!.samples!.ordinal as Float64Array)).toEqual([5, 7, 9]);
  });
  it('selfSize that disagrees with the samples: a warning; no samples: selfSize per node', () => {
    const p = smallHeapProfile();
    p.head.children[0]!.selfSize = 9;
    expect(readHeapProfileBytes(enc(p)).warnings.map((w) => w.code)).toEqual(['PROFKIT_W_V8_SELF_SIZE']);
    const r = readHeapProfileBytes(enc({ head: smallHeapProfile().head }));
    expect(stacksByMeaning(r.profile, 1).get('main@file:///a.js:1:5;alloc@file:///a.js:10:15')).toBe(140n);
    expect(r.warnings.map((w) => w.code)).toEqual(['PROFKIT_W_V8_NO_HEAP_SAMPLES']);
  });
});

describe('.heapprofile errors', () => {
  const err = (p: unknown, limits?: Record<string, number>) => thrownBy<ProfkitError>(() => readHeapProfileBytes(enc(p), { fileName: 'h.heapprofile', limits }));
  it('a duplicate id, a bad size; paths in the nested tree; a sample naming no node is dropped', () => {
    // Node.js writes samples naming nodes missing from the tree: dropped with a warning.
    const p = smallHeapProfile();
    p.samples[1]!.nodeId = 77;
    p.head.children[0]!.selfSize = 0;
    const orphan = readHeapProfileBytes(enc(p));
    expect(orphan.warnings.map((w) => [w.code, w.detail])).toEqual([['PROFKIT_W_V8_ORPHAN_SAMPLES', { file: '<input>', samples: 1, bytes: 8 }]]);
    expect(orphan.profile.samples.value.length).toBe(2);
    let e: ProfkitError;
    const q = smallHeapProfile();
    q.head.children[0]!.children[0]!.id = 2;
    e = err(q);
    expect(e.message).toBe('head.children[0].children[0].id: node id 2 is also the id of head.children[0]');
    const r = smallHeapProfile();
    (r.samples[0] as { size: unknown }).size = -1;
    expect(err(r).detail.path).toBe('samples[0].size');
    expect(err({ samples: [] }).message).toBe('head: expected an object, got nothing');
  });
  it('limits: maxSamples, maxTableEntries, maxFramesPerStack, maxTotalFrames, maxInputBytes (before JSON.parse)', () => {
    for (const [option, value] of [['maxSamples', 2], ['maxTableEntries', 2], ['maxFramesPerStack', 1], ['maxTotalFrames', 4], ['maxInputBytes', 100]] as const) {
      expect(err(smallHeapProfile(), { [option]: value }).detail.option).toBe(option);
    }
  });
});

describe('.heapprofile write', () => {
  it('round trip: same stacks, sizes, ordinals, selfSize sums, script ids', () => {
    const first = readHeapProfileBytes(enc(smallHeapProfile())).profile;
    const w = writeHeapProfile(first);
    expect(w.warnings).toEqual([]);
    const json = dec(bytesOf(w.data)) as ReturnType<typeof smallHeapProfile>;
    expect(json.head.callFrame).toEqual(callFrame('(root)'));
    expect(json.head.children[0]).toMatchObject({ callFrame: callFrame('main', 'file:///a.js', 0, 4, '3'), selfSize: 8 });
    expect(json.head.children[0]!.children[0]).toMatchObject({ callFrame: callFrame('alloc', 'file:///a.js', 9, 14, '3'), selfSize: 140 });
    expect(json.samples.map((s) => [s.size, s.ordinal])).toEqual([[100, 5], [8, 7], [40, 9]]);
    const second = readHeapProfileBytes(bytesOf(w.data)).profile;
    expect(stacksByMeaning(second, 1)).toEqual(stacksByMeaning(first, 1));
  });
  it('from a pprof-style heap profile: the bytes type; other types named in a warning; no bytes type: UNSUPPORTED', async () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'alloc_objects', unit: 'count' }, { type: 'alloc_space', unit: 'bytes' }, { type: 'inuse_space', unit: 'bytes' }] });
    const f = b.internFunction({ name: 'make', filename: 'x.js', startLine: 2 });
    b.addSample([b.internLocation({ functionId: f, line: 2 })], [1, 64, 32]);
    const p = b.build();
    const w = writeHeapProfile(p);
    const json = dec(bytesOf(w.data)) as ReturnType<typeof smallHeapProfile>;
    expect(json.samples.map((s) => s.size)).toEqual([32]); // default type: the last (inuse_space)
    expect(w.warnings.map((x) => x.message).join()).toMatch(/alloc_space not written/);
    const c = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    expect(thrownBy<ProfkitError>(() => writeHeapProfile(c.build())).code).toBe('PROFKIT_E_UNSUPPORTED');
    const reg = createRegistry([v8Adapter]);
    const r = await reg.read(enc(smallHeapProfile()));
    expect(r.format).toBe('v8-heapprofile');
  });
  it('selfSize is the exact sum of 64-bit sizes (2^53 + 1 is not rounded)', () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'space', unit: 'bytes' }] });
    const loc = b.internLocation({ functionId: b.internFunction({ name: 'big', filename: 'x.js', startLine: 1 }), line: 1 });
    b.addSample([loc], [2n ** 53n]);
    b.addSample([loc], [1n]);
    const text = new TextDecoder().decode(bytesOf(writeHeapProfile(b.build()).data));
    expect(text).toContain('"selfSize":9007199254740993,');
  });
});
