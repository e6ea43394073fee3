import { describe, expect, it } from 'vitest';
import { ErrorCodes, isProfkitError, sampleCount, stackOf, type ReadLimits } from '@profkit/core/node';
import { readLegacy } from '../src/node.js';
import { bytes } from './helpers.js';

// maxSamples and maxFramesPerStack are checked while the input is read (each text parser checks
// a record before adding it, src/limits.ts; the CPU reader has its record limit): the reader
// stops at the first record over a limit. The proof that it stops there, without timing anything:
// a malformed record after that one is never reached (the same input read with a higher limit
// fails on it), and the error names the line (text) or byte offset (binary) of the record over
// the limit. Errors come in input order: a malformed record before that one is reported as such.

type Outcome = { ok: true; samples: number; frames: number } | { ok: false; code: string; option?: unknown; line?: unknown; offset?: unknown; message: string };

function read(input: Uint8Array, limits?: ReadLimits & { maxRecords?: number }, format?: string): Outcome {
  try {
    const r = readLegacy(input, { limits, format, fileName: 'in', maxRecords: limits?.maxRecords });
    const p = r.profile;
    let frames = 0;
    for (let i = 0; i < sampleCount(p); i++) frames = Math.max(frames, stackOf(p, i).length);
    return { ok: true, samples: sampleCount(p), frames };
  } catch (e) {
    if (!isProfkitError(e)) throw e;
    return { ok: false, code: e.code, option: e.detail.option, line: e.detail.line, offset: e.detail.offset, message: e.message };
  }
}

const addr = (i: number, k = 0) => `0x${(0x401000 + i * 0x40 + k * 4).toString(16)}`;
const stack = (i: number, frames: number) => Array.from({ length: frames }, (_, k) => addr(i, k)).join(' ');

/**
 * One text reader's input, made of a header, one part per record (`record(frames, i)`, or
 * `bad(i)` for a record the parser rejects; the record's own line comes first in its part) and a
 * footer. The line numbers the errors must name are counted here, from the parts.
 */
interface TextCase {
  name: string;
  format: string;
  header: string;
  record(frames: number, i: number): string;
  bad(i: number): string;
  footer: string;
}

function build(c: TextCase, rows: (number | 'bad')[]): { input: Uint8Array; line: (k: number) => number } {
  const parts = rows.map((r, i) => (r === 'bad' ? c.bad(i) : c.record(r, i)));
  const lines = (s: string) => s.split('\n').length - 1;
  const starts: number[] = [];
  let at = 1 + lines(c.header);
  for (const part of parts) {
    starts.push(at);
    at += lines(part);
  }
  return { input: bytes(c.header + parts.join('') + c.footer), line: (k) => starts[k - 1]! };
}

const textCases: TextCase[] = [
  {
    name: 'heap text',
    format: 'gperftools-heap',
    header: 'heap profile:    4:   256 [     4:   256] @ heapprofile\n',
    record: (r, i) => `     1:   64 [     1:   64] @ ${stack(i, r)}\n`,
    bad: () => 'this is not a heap row\n',
    footer: 'MAPPED_LIBRARIES:\n00400000-00452000 r-xp 00000000 08:02 1 /bin/app\n',
  },
  {
    name: 'growth text (with comments and blank lines)',
    format: 'gperftools-heap',
    header: 'heap profile:    4:   256 [     0:     0] @ growthz\n',
    record: (r, i) => `1: 64 [0: 0] @ ${stack(i, r)}\n# after row ${i}\n\n`,
    bad: () => '1: 2 [3: 4] @ 0xfffffffffffffffffff\n',
    footer: '',
  },
  {
    name: 'contention text',
    format: 'gperftools-contention',
    header: '--- contention:\ncycles/second = 2000000000\nsampling period = 100\n',
    record: (r, i) => `3000 4 @ ${stack(i, r)}\n`,
    bad: () => 'x y @ 0x1\n',
    footer: '--- Memory map: ---\n',
  },
  {
    name: 'Go count (goroutine) text',
    format: 'gperftools-thread',
    header: 'goroutine profile: total 9\n',
    record: (r, i) => `1 @ ${stack(i, r)}\n`,
    bad: () => '1 @ zz\n',
    footer: '',
  },
  {
    name: 'threadz text (with "same as previous thread" sections, which are not samples)',
    format: 'gperftools-thread',
    header: '--- threadz 1 ---\n\n',
    record: (r, i) =>
      `--- Thread ${(0x7f00 + i).toString(16)} (name: main/${i}) stack: ---\n` +
      Array.from({ length: r }, (_, k) => `  ${addr(i, k)}\n`).join('') +
      `--- Thread ${(0x7e00 + i).toString(16)} (name: worker/${i}) stack: ---\n  same as previous thread\n`,
    bad: () => '--- Thread zz (name: broken) stack: ---\n  0x1\n',
    footer: '--- Memory map: ---\n',
  },
  {
    name: 'Java heapz text',
    format: 'gperftools-heap',
    header: '--- heapz 1 ---\nformat = java\nresolution = bytes\n',
    record: (r, i) => `64 1 @ ${stack(i, r)}\n`,
    bad: () => '64 1 @ 0xfffffffffffffffffff\n',
    footer: `${addr(0)} com.example.Main.run(Main.java:10)\n`,
  },
  {
    name: 'Java contentionz text',
    format: 'gperftools-contention',
    header: '--- contentionz 1 ---\nformat = java\nresolution = microseconds\nsampling period = 100\n',
    record: (r, i) => `7 1 @ ${stack(i, r)}\n`,
    bad: () => '7 1 @ 0xfffffffffffffffffff\n',
    footer: `${addr(0)} com.example.Main.run(Main.java:10)\n`,
  },
];

const MAX = 5;
const FRAMES = 8;
const rows = (n: number, frames = 2): number[] => Array.from({ length: n }, () => frames);

describe.each(textCases)('$name', (c) => {
  it('reads exactly maxSamples records', () => {
    expect(read(build(c, rows(MAX)).input, { maxSamples: MAX }, c.format)).toMatchObject({ ok: true, samples: MAX });
  });

  it('fails on record maxSamples + 1 with the maxSamples limit error, naming its line', () => {
    const b = build(c, rows(MAX + 1));
    const o = read(b.input, { maxSamples: MAX }, c.format);
    expect(o).toMatchObject({ ok: false, code: ErrorCodes.LIMIT, option: 'maxSamples', line: b.line(MAX + 1) });
    if (!o.ok) expect(o.message).toContain('limits.maxSamples');
  });

  it('stops reading there: a malformed record maxSamples + 2 is never parsed', () => {
    const b = build(c, [...rows(MAX + 1), 'bad']);
    // With room for every record the malformed one is reached and reported...
    expect(read(b.input, { maxSamples: MAX + 10 }, c.format)).toMatchObject({ ok: false, code: ErrorCodes.PARSE, line: b.line(MAX + 2) });
    // ...with maxSamples = MAX it is not: the reader stopped at record MAX + 1.
    expect(read(b.input, { maxSamples: MAX }, c.format)).toMatchObject({ ok: false, code: ErrorCodes.LIMIT, option: 'maxSamples', line: b.line(MAX + 1) });
  });

  it('reports a malformed record before the one over maxSamples as the parse error it is', () => {
    const b = build(c, [2, 2, 'bad', ...rows(7)]);
    expect(read(b.input, { maxSamples: MAX }, c.format)).toMatchObject({ ok: false, code: ErrorCodes.PARSE, line: b.line(3) });
    // Without the malformed record, the same input stops at record MAX + 1.
    const good = build(c, rows(10));
    expect(read(good.input, { maxSamples: MAX }, c.format)).toMatchObject({ ok: false, code: ErrorCodes.LIMIT, option: 'maxSamples', line: good.line(MAX + 1) });
  });

  it('reports a malformed record maxSamples + 1 as a parse error: only a sample about to be added counts', () => {
    const b = build(c, [...rows(MAX), 'bad', 2]);
    expect(read(b.input, { maxSamples: MAX }, c.format)).toMatchObject({ ok: false, code: ErrorCodes.PARSE, line: b.line(MAX + 1) });
  });

  it('reports a malformed record before the one over maxFramesPerStack as the parse error it is', () => {
    const b = build(c, [2, 'bad', FRAMES + 1, 2]);
    expect(read(b.input, { maxFramesPerStack: FRAMES }, c.format)).toMatchObject({ ok: false, code: ErrorCodes.PARSE, line: b.line(2) });
  });

  it('is not reported when another format is asked for: the input is not of that format', () => {
    const other = ['gperftools-heap', 'gperftools-contention', 'gperftools-thread'].find((f) => f !== c.format)!;
    const o = read(build(c, rows(MAX + 1)).input, { maxSamples: MAX }, other);
    expect(o).toMatchObject({ ok: false, code: ErrorCodes.PARSE });
    if (!o.ok) expect(o.message).toMatch(/unrecognized profile format/);
  });

  it('checks maxFramesPerStack on each record as it is read', () => {
    expect(read(build(c, [2, FRAMES, 2]).input, { maxFramesPerStack: FRAMES }, c.format)).toMatchObject({ ok: true, samples: 3, frames: FRAMES });
    const b = build(c, [2, FRAMES + 1, 2, 'bad']);
    expect(read(b.input, { maxFramesPerStack: FRAMES + 1 }, c.format)).toMatchObject({ ok: false, code: ErrorCodes.PARSE, line: b.line(4) });
    const o = read(b.input, { maxFramesPerStack: FRAMES }, c.format);
    expect(o).toMatchObject({ ok: false, code: ErrorCodes.LIMIT, option: 'maxFramesPerStack', line: b.line(2) });
    if (!o.ok) expect(o.message).toContain(`sample 2 with ${FRAMES + 1} frames`);
  });
});

describe.each(textCases)('$name: frames and addresses of all records', (c) => {
  it('checks maxTotalFrames as records are read, naming the record that passes it', () => {
    expect(read(build(c, rows(MAX, 2)).input, { maxTotalFrames: 2 * MAX }, c.format)).toMatchObject({ ok: true, samples: MAX });
    const b = build(c, rows(MAX + 1, 2));
    expect(read(b.input, { maxTotalFrames: 2 * MAX }, c.format)).toMatchObject({ ok: false, code: ErrorCodes.LIMIT, option: 'maxTotalFrames', line: b.line(MAX + 1) });
  });

  it('checks maxTableEntries on the distinct addresses (a Map holds at most 2^24), naming the record that passes it', () => {
    expect(read(build(c, rows(MAX, 2)).input, { maxTableEntries: 2 * MAX }, c.format)).toMatchObject({ ok: true, samples: MAX });
    const b = build(c, rows(MAX + 1, 2));
    expect(read(b.input, { maxTableEntries: 2 * MAX }, c.format)).toMatchObject({ ok: false, code: ErrorCodes.LIMIT, option: 'maxTableEntries', line: b.line(MAX + 1) });
  });
});

describe('threadz frame limit and the duplicated leaf', () => {
  it('counts frames after the duplicate leaf is dropped, as the parsed profile has them', () => {
    // The unwinder reported the leaf twice: google/pprof drops one, leaving FRAMES frames.
    const frames = [addr(0), ...Array.from({ length: FRAMES }, (_, k) => addr(0, k))];
    const text = '--- Thread 7f00 (name: main/1) stack: ---\n' + frames.map((a) => `  ${a}\n`).join('') + '--- Memory map: ---\n';
    expect(read(bytes(text), { maxFramesPerStack: FRAMES })).toMatchObject({ ok: true, samples: 1, frames: FRAMES });
    expect(read(bytes(text), { maxFramesPerStack: FRAMES - 1 })).toMatchObject({ ok: false, code: ErrorCodes.LIMIT, option: 'maxFramesPerStack', line: 1 });
  });
});

describe('line numbers after %warn lines', () => {
  it('counts the lines before the header', () => {
    const text = '%warn Sampling is off\nheap profile:    1:   64 [     1:   64] @ heap_v2/0\n' + '1: 64 [1: 64] @ 0x1\n'.repeat(3);
    expect(read(bytes(text), { maxSamples: 2 })).toMatchObject({ ok: false, code: ErrorCodes.LIMIT, option: 'maxSamples', line: 5 });
  });
});

describe('a format told apart by its attributes', () => {
  it('reads a Java contentionz profile over the limit as Java, not as C++ contention', () => {
    // `--- contentionz ` starts both; `format = java` makes the C++ parser pass it on.
    const b = build(textCases.find((t) => t.name === 'Java contentionz text')!, rows(MAX + 1));
    const o = read(b.input, { maxSamples: MAX });
    expect(o).toMatchObject({ ok: false, code: ErrorCodes.LIMIT, option: 'maxSamples', line: b.line(MAX + 1) });
    const r = readLegacy(build(textCases.find((t) => t.name === 'Java contentionz text')!, rows(MAX)).input, { limits: { maxSamples: MAX } });
    expect(r.variant).toBe('java-contentionz');
  });
});

/** A 32-bit little-endian binary CPU profile: header, one record per entry (or a cut-short one for 'bad'), end marker. */
function cpu(records: (number | 'bad')[]): Uint8Array {
  const words = [0, 3, 0, 10000, 0];
  records.forEach((r, i) => {
    if (r === 'bad') words.push(1, 1000);
    else words.push(1, r, ...Array.from({ length: r }, (_, k) => 0x401000 + i * 0x40 + k * 4));
  });
  if (!records.includes('bad')) words.push(0, 1, 0);
  return new Uint8Array(new Uint32Array(words).buffer);
}

describe('binary CPU profile', () => {
  const recordOffset = (k: number) => 5 * 4 + (k - 1) * 4 * 4; // records of 2 frames: 4 words each

  it('reads exactly maxSamples records', () => {
    expect(read(cpu(rows(MAX)), { maxSamples: MAX })).toMatchObject({ ok: true, samples: MAX });
  });

  it('fails on record maxSamples + 1 with the maxSamples limit error, naming its offset', () => {
    const o = read(cpu(rows(MAX + 1)), { maxSamples: MAX });
    expect(o).toMatchObject({ ok: false, code: ErrorCodes.LIMIT, option: 'maxSamples', offset: recordOffset(MAX + 1) });
    if (!o.ok) expect(o.message).toContain('limits.maxSamples');
  });

  it('stops reading there: a cut-short record maxSamples + 2 is never reached', () => {
    const bad = cpu([...rows(MAX + 1), 'bad']);
    expect(read(bad, { maxSamples: MAX + 10 })).toMatchObject({ ok: false, code: ErrorCodes.TRUNCATED, offset: recordOffset(MAX + 2) });
    expect(read(bad, { maxSamples: MAX })).toMatchObject({ ok: false, code: ErrorCodes.LIMIT, option: 'maxSamples', offset: recordOffset(MAX + 1) });
  });

  it('names maxRecords when that is the lower limit', () => {
    expect(read(cpu(rows(MAX + 1)), { maxSamples: MAX + 1, maxRecords: MAX })).toMatchObject({ ok: false, code: ErrorCodes.LIMIT, option: 'maxRecords' });
  });
});
