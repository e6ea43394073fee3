/**
 * The streaming `.heapprofile` reader (`readHeapProfileChunks`, the adapter's read path) gives the
 * same profile, warnings and errors as the whole-input reader (`readHeapProfileBytes`, JSON.parse
 * of the whole text), whatever the chunk boundaries: every input is fed in chunks of 1, 7 and 4096
 * bytes. Real producer output: `node --heap-prof` on a program made here.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ProfkitError } from '@profkit/core';
import { readHeapProfileBytes, readHeapProfileChunks, type HeapProfileReadOptions } from '../src/index.js';
import { addHeapRow, emptyHeapRows, truncateHeapRows } from '../src/heap.js';
import { callFrame, chunked, enc, outcome } from './helpers.js';

const CHUNK_SIZES = [1, 7, 4096];

const dir = mkdtempSync(join(tmpdir(), 'profkit-v8-heap-stream-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function realHeapProfile(): Uint8Array {
  const script = join(dir, 'alloc.js');
  writeFileSync(script, 'const keep=[];function grow(n){for(let i=0;i<n;i++)keep.push({i,s:"x".repeat(i%64)});}\nfunction outer(){grow(20000);}\nfor(let k=0;k<20;k++)outer();\n');
  execFileSync(process.execPath, ['--heap-prof', '--heap-prof-dir', join(dir, 'heap'), '--heap-prof-interval', '1024', script]);
  const f = readdirSync(join(dir, 'heap')).find((x) => x.endsWith('.heapprofile'))!;
  return readFileSync(join(dir, 'heap', f));
}

function node(id: number, name: string, selfSize: number, children: unknown[] = [], line = 1): Record<string, unknown> {
  return { callFrame: callFrame(name, name === '(root)' ? '' : 'file:///a.js', name === '(root)' ? -1 : line, 2, '3'), selfSize, id, children };
}

/** (root) → main → alloc, (root) → other: samples at alloc and main. */
function small() {
  return {
    head: node(1, '(root)', 0, [node(2, 'main', 8, [node(3, 'alloc', 140, [], 9)]), node(4, 'other', 0)]),
    samples: [
      { size: 100, nodeId: 3, ordinal: 5 },
      { size: 8, nodeId: 2, ordinal: 7 },
      { size: 40, nodeId: 3, ordinal: 9 },
    ],
  };
}

/** A chain `depth` nodes deep (deeper than any recursion would go in a test of a recursive reader). */
function deep(depth: number): string {
  let text = '';
  for (let i = depth; i >= 1; i--) text = `{"callFrame":{"functionName":"f${i % 7}","scriptId":"1","url":"a.js","lineNumber":${i % 7},"columnNumber":0},"selfSize":${i === depth ? 5 : 0},"id":${i},"children":[${text}]}`;
  return `{"head":${text},"samples":[{"size":5,"nodeId":${depth},"ordinal":1}]}`;
}

const json = (x: unknown) => JSON.stringify(x);
const smallText = json(small());

describe('the streaming .heapprofile reader gives what the whole-input reader gives', () => {
  const inputs: [string, Uint8Array][] = [
    ['node --heap-prof', realHeapProfile()],
    ['small, indented', enc(JSON.stringify(small(), null, 2))],
    ['no samples', enc(json({ head: small().head }))],
    ['samples naming no node, selfSize other than the samples', enc(smallText.replace('"nodeId":2', '"nodeId":77').replace('"selfSize":140', '"selfSize":141'))],
    ['no ordinals, sizes beyond 32 bits', enc(smallText.replace(/,"ordinal":\d+/g, '').replace('"size":100', '"size":5000000000'))],
    ['keys the reader does not use, at every level, holding anything', enc(smallText.replace('"selfSize":8,', '"selfSize":8,"x":{"children":[{"id":9}],"head":1},"deopt":[[]],').replace('"functionName":"main",', '"functionName":"main","extra":{"url":[1]},').replace('"ordinal":7', '"ordinal":7,"nodeId2":{"a":[1,2]}').replace('"samples":', '"meta":{"samples":[1],"head":null},"samples":'))],
    ['keys in another order, repeated keys (the last counts)', enc('{"samples":[{"ordinal":3,"nodeId":1,"size":4,"size":6}],"head":{"children":[{"id":5}],"children":[{"children":[],"id":2,"selfSize":0,"callFrame":{"functionName":"b","url":"u","lineNumber":1,"lineNumber":2}}],"id":1,"id":1,"callFrame":{"functionName":"(root)"},"selfSize":6}}')],
    ['a repeated children whose dropped nodes were not objects or had children not an array (their rows made again)', enc('{"head":{"id":1,"callFrame":{"functionName":"(root)"},"children":[5,{"id":9,"children":"no"}],"children":[{"id":2,"callFrame":{"functionName":"a"},"selfSize":3},{"id":3,"callFrame":{"functionName":"b"},"selfSize":4}]}}')],
    ['a repeated head (the last counts)', enc(`{"head":${json(node(7, 'gone', 0, [node(8, 'gone2', 0)]))},${smallText.slice(1)}`)],
    ['children null, selfSize null', enc(smallText.replace('"children":[]}', '"children":null}').replace('"selfSize":0,', '"selfSize":null,'))],
    ['a tree 1500 deep (3000 JSON levels)', enc(deep(1500))],
  ];
  for (const [name, bytes] of inputs) {
    for (const size of CHUNK_SIZES) {
      it(`${name}, chunks of ${size}`, async () => {
        for (const options of [{ fileName: 'h.heapprofile' }, { fileName: 'h.heapprofile', selfSize: true }] as HeapProfileReadOptions[]) {
          const whole = readHeapProfileBytes(bytes, options);
          expect(await readHeapProfileChunks(chunked(bytes, size), options)).toEqual(whole);
        }
      });
    }
  }
  it('the inputs have what they are meant to test', () => {
    const real = readHeapProfileBytes(inputs[0]![1]);
    expect(real.profile.samples.value.length).toBeGreaterThan(20);
    expect(real.profile.functions.name).toContain('grow');
    expect(readHeapProfileBytes(inputs[3]![1]).warnings.map((w) => w.code)).toEqual(['PROFKIT_W_V8_ORPHAN_SAMPLES', 'PROFKIT_W_V8_SELF_SIZE']);
    expect(readHeapProfileBytes(inputs[6]![1]).profile.functions.name).toEqual(['b']);
    expect(readHeapProfileBytes(inputs[7]![1]).profile.functions.name).toEqual(['a', 'b']);
    expect(readHeapProfileBytes(inputs[8]![1]).profile.functions.name).not.toContain('gone');
    expect(readHeapProfileBytes(inputs[10]![1]).profile.samples.value.length).toBe(1);
  });
});

describe('the streaming .heapprofile reader refuses what the whole-input reader refuses, with the same message and path', () => {
  const cases: [string, string][] = [
    ['no head', '{"samples":[]}'],
    ['head a number', '{"head":5}'],
    ['head an array', '{"head":[1,[2],3]}'],
    ['a node that is an array', smallText.replace('"children":[]}', '"children":[[1,2]]}')],
    ['a node that is a string', smallText.replace('"children":[]}', '"children":["x"]}')],
    ['children an object', smallText.replace('"children":[]}', '"children":{"id":1,"children":[]}}')],
    ['children a string', smallText.replace('"children":[]}', '"children":"none"}')],
    ['an id that is an array', smallText.replace('"id":3', '"id":[3,{"a":1}]')],
    ['an id above 2^53', smallText.replace('"id":3', '"id":9007199254740993')],
    ['a duplicate id', smallText.replace('"id":4', '"id":2')],
    ['a selfSize that is an object', smallText.replace('"selfSize":140', '"selfSize":{"x":[1]}')],
    ['a callFrame that is an array', smallText.replace(/"callFrame":\{"functionName":"alloc"[^}]*\}/, '"callFrame":[1,2]')],
    ['a lineNumber that is an array', smallText.replace('"lineNumber":9', '"lineNumber":[9]')],
    ['a functionName that is a number', smallText.replace('"functionName":"alloc"', '"functionName":7')],
    ['samples an object', smallText.replace(/"samples":\[.*\]/, '"samples":{"size":1}')],
    ['samples null', smallText.replace(/"samples":\[.*\]/, '"samples":null')],
    ['a sample that is an array', smallText.replace('{"size":8,"nodeId":2,"ordinal":7}', '[8,2,7]')],
    ['a sample size that is an array', smallText.replace('"size":8,', '"size":[8],')],
    ['a negative sample size', smallText.replace('"size":8,', '"size":-8,')],
    ['an ordinal that is a string', smallText.replace('"ordinal":7', '"ordinal":"7"')],
    ['not an object', '5'],
    ['the end cut off', smallText.slice(0, 60)],
  ];
  for (const [name, text] of cases) {
    for (const size of CHUNK_SIZES) {
      it(`${name}, chunks of ${size}`, async () => {
        const bytes = enc(text);
        for (const options of [{ fileName: 'h.heapprofile' }, { fileName: 'h.heapprofile', selfSize: true }] as HeapProfileReadOptions[]) {
          const whole = await outcome(() => readHeapProfileBytes(bytes, options));
          const streamed = await outcome(() => readHeapProfileChunks(chunked(bytes, size), options));
          // The two JSON parsers word syntax errors differently; their code and file agree.
          if (name === 'the end cut off') expect([(streamed as ProfkitError).code, (streamed as ProfkitError).detail.file]).toEqual([(whole as ProfkitError).code, 'h.heapprofile']);
          else expect(streamed).toEqual(whole);
          if (!options.selfSize || !/sample|ordinal/.test(name) || /^samples/.test(name)) expect(whole).toHaveProperty('code');
        }
      });
    }
  }
});

describe('limits, checked as the tree and the samples grow (before the input ends)', () => {
  // Cut off: only a check made while reading can report the limit rather than the truncation.
  const cut = (text: string, at: string) => enc(text.slice(0, text.indexOf(at) + at.length));
  const cases: [string, Uint8Array, Record<string, number>, string][] = [
    ['maxTableEntries', cut(smallText, '"id":4'), { maxTableEntries: 3 }, 'maxTableEntries'],
    ['maxFramesPerStack', cut(deep(50), '"id":20'), { maxFramesPerStack: 10 }, 'maxFramesPerStack'],
    ['maxSamples', cut(smallText, '"ordinal":9'), { maxSamples: 2 }, 'maxSamples'],
    ['maxInputBytes', enc(smallText), { maxInputBytes: 100 }, 'maxInputBytes'],
  ];
  for (const [name, bytes, limits, option] of cases) {
    it(name, async () => {
      const e = (await outcome(() => readHeapProfileChunks(chunked(bytes, 7), { limits }))) as ProfkitError;
      expect([e.code, e.detail.option]).toEqual(['PROFKIT_E_LIMIT', option]);
    });
  }
  it('the same limits as the whole-input reader, on whole inputs', async () => {
    for (const [option, value] of [['maxSamples', 2], ['maxTableEntries', 3], ['maxFramesPerStack', 1], ['maxTotalFrames', 4], ['maxInputBytes', 100]] as const) {
      const options = { limits: { [option]: value } };
      const whole = (await outcome(() => readHeapProfileBytes(enc(smallText), options))) as ProfkitError;
      const streamed = (await outcome(() => readHeapProfileChunks(chunked(enc(smallText), 7), options))) as ProfkitError;
      // The stream stops at the first chunk beyond maxInputBytes: the count in the message differs.
      expect([streamed.code, streamed.detail.option, streamed.detail.path]).toEqual([whole.code, whole.detail.option, whole.detail.path]);
      expect([whole.code, whole.detail.option]).toEqual(['PROFKIT_E_LIMIT', option]);
    }
  });
  it('a deep tree is refused by maxFramesPerStack, not by the JSON nesting guard', async () => {
    const e = (await outcome(() => readHeapProfileChunks(chunked(enc(deep(3000)), 4096), { limits: { maxFramesPerStack: 2000 } }))) as ProfkitError;
    expect([e.code, e.detail.option]).toEqual(['PROFKIT_E_LIMIT', 'maxFramesPerStack']);
  });
});

describe('rows dropped by a repeated key', () => {
  /** A Map that counts the walks over it. */
  class WalkCountingMap<K, V> extends Map<K, V> {
    walks = 0;
    override keys() {
      this.walks++;
      return super.keys();
    }
    override entries() {
      this.walks++;
      return super.entries();
    }
    override values() {
      this.walks++;
      return super.values();
    }
    override forEach(f: (v: V, k: K, m: Map<K, V>) => void) {
      this.walks++;
      super.forEach(f);
    }
    override [Symbol.iterator]() {
      this.walks++;
      return super[Symbol.iterator]();
    }
  }
  it('cost no walk over the bad rows (a file repeating "children":[{}] after many bad nodes was quadratic: 1.8 MB took 32 s)', () => {
    const rows = emptyHeapRows();
    const notObject = new WalkCountingMap<number, unknown>();
    const childrenNotArray = new WalkCountingMap<number, unknown>();
    Object.assign(rows, { notObject, childrenNotArray });
    const src = { file: 'h.heapprofile', format: '.heapprofile' };
    addHeapRow(rows, -1, 0, 0, src, undefined);
    for (let i = 1; i <= 1000; i++) notObject.set(addHeapRow(rows, 0, i - 1, 1, src, undefined), i);
    const node = addHeapRow(rows, 0, 1000, 1, src, undefined);
    for (let k = 0; k < 100; k++) {
      truncateHeapRows(rows, node + 1);
      addHeapRow(rows, node, 0, 2, src, undefined);
    }
    expect([notObject.walks, childrenNotArray.walks, rows.parent.length, notObject.size]).toEqual([0, 0, node + 2, 1000]);
  });
});
