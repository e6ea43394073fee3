/**
 * The WebAssembly line index (src/line-index.ts, issue 16 item 4) against core's LineSplitter:
 * the reader must give the same profile, warnings and errors on either path, for every input and
 * every way of cutting it into chunks, and the index must stay within its bounds.
 */
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isProfkitError } from '@profkit/core/node';
import { RprofParser, readRprofBytes, readRprofChunks, type RprofReadOptions } from '../src/read.js';
import { IndexedLineSplitter, newIndexedLineSplitter, setLinePath, type LinePath } from '../src/line-index.js';
import type { TraceLine } from '../src/grammar.js';
import { GENERATED_PATH, WAT_PATH, assemble, generatedSource } from '../scripts/build-line-index.mjs';
import { chunked, fixturesDir, sharedDir } from './helpers.js';

const enc = (s: string) => new TextEncoder().encode(s);

function concat(parts: (string | Uint8Array)[]): Uint8Array {
  const arrays = parts.map((p) => (typeof p === 'string' ? enc(p) : p));
  const out = new Uint8Array(arrays.reduce((n, a) => n + a.length, 0));
  let o = 0;
  for (const a of arrays) {
    out.set(a, o);
    o += a.length;
  }
  return out;
}

/** A small seeded PRNG (mulberry32): generated inputs are the same on every run. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Chunking = 'whole' | 'bytes' | number | 'random';

function chunksOf(bytes: Uint8Array, how: Exclude<Chunking, 'whole'>, seed = 1): Uint8Array[] {
  if (how === 'bytes') return [...chunked(bytes, 1)];
  if (typeof how === 'number') return [...chunked(bytes, how)];
  const random = prng(seed);
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; ) {
    const n = 1 + Math.floor(random() * (random() < 0.5 ? 8 : 3000));
    out.push(bytes.subarray(i, i + n));
    i += n;
  }
  return out;
}

/** What reading gives on one path: the result, or the typed error's code, message and detail. */
async function outcome(path: LinePath, bytes: Uint8Array, how: Chunking, options: RprofReadOptions = {}): Promise<unknown> {
  const previous = setLinePath(path);
  try {
    const r = how === 'whole' ? readRprofBytes(bytes, options) : await readRprofChunks(chunksOf(bytes, how), options);
    return { profile: r.profile, warnings: r.warnings };
  } catch (e) {
    if (isProfkitError(e)) return { error: e.code, message: e.message, detail: e.detail };
    throw e;
  } finally {
    setLinePath(previous);
  }
}

async function expectSamePaths(bytes: Uint8Array, hows: Chunking[], options: RprofReadOptions = { fileName: 'x.out' }): Promise<unknown> {
  let first: unknown;
  for (const how of hows) {
    const viaText = await outcome('text', bytes, how, options);
    const viaIndex = await outcome('index', bytes, how, options);
    // isDeepStrictEqual is fast on large profiles; toEqual then shows what differs.
    if (!isDeepStrictEqual(viaIndex, viaText)) expect(viaIndex, `chunking ${how}`).toEqual(viaText);
    first ??= viaText;
  }
  return first;
}

afterEach(() => {
  setLinePath('auto');
});

describe('the committed module', () => {
  it('is what line-index.wat assembles to (regenerate with scripts/build-line-index.mjs)', async () => {
    const bytes = await assemble(readFileSync(WAT_PATH, 'utf8'));
    expect(readFileSync(GENERATED_PATH, 'utf8')).toBe(generatedSource(bytes));
    expect(bytes.length).toBeLessThan(4096); // compiled synchronously, also on a browser's main thread
  });
});

/**
 * Reads `bytes` through the line index into a parser; `parsed`: the numbers of the lines it was
 * given to parse (as text, or parsed by the module: `byModule`, a subset).
 */
function readIndexed(bytes: Uint8Array): { parser: RprofParser; parsed: number[]; byModule: number[] } {
  const parsed: number[] = [];
  const byModule: number[] = [];
  const parser = new RprofParser({});
  const line = parser.line.bind(parser);
  parser.line = (t: string, n: number) => {
    parsed.push(n);
    line(t, n);
  };
  const parsedTraceLine = parser.parsedTraceLine.bind(parser);
  parser.parsedTraceLine = (t: TraceLine, n: number) => {
    parsed.push(n);
    byModule.push(n);
    return parsedTraceLine(t, n);
  };
  const splitter = newIndexedLineSplitter(parser, {});
  expect(splitter).toBeInstanceOf(IndexedLineSplitter);
  splitter!.push(bytes);
  splitter!.end();
  return { parser, parsed, byModule };
}

describe('the index is used', () => {
  it('parses only the first occurrence of a line per file table; repeats are recorded from their id', () => {
    const text =
      'memory profiling: sample.interval=1000\n#File 1: a.R\n' +
      ':1:2:3:4:"f" 1#2 "g" \n:5:6:7:8:"f" 1#2 "g" \n:9:9:9:9:"f" 1#2 "g" \n' +
      '#File 1: b.R\n:10:10:10:10:"f" 1#2 "g" \n:11:10:10:10:"f" 1#2 "g" \n';
    const { parser, parsed } = readIndexed(enc(text));
    // Lines 4, 5 and 8 repeat a stack known in their file table; line 7 is known only for the old one.
    expect(parsed).toEqual([1, 2, 3, 6, 7]);
    const p = parser.finish();
    expect(p.samples.value.length).toBe(5);
    expect(Array.from(p['.extensions'].rprof!.samples!.small as Float64Array)).toEqual([1, 5, 9, 10, 11]);
  });
});

describe('runs of repeats', () => {
  it('are appended at once with the frames the module summed, not recorded line by line, within the limits', () => {
    const text = 'sample.interval=1000\n#File 1: a.R\n' + '"f" 1#2 "g" \n'.repeat(1000) + '"h" \n'.repeat(500) + '"f" 1#2 "g" \n'.repeat(10);
    const count = (limits?: RprofReadOptions['limits']) => {
      const parser = new RprofParser({ limits });
      const record = vi.spyOn(parser as unknown as { record(stack: number, memory: boolean): void }, 'record');
      const splitter = newIndexedLineSplitter(parser, {})!;
      splitter.push(enc(text));
      splitter.end();
      const p = parser.finish();
      return { records: record.mock.calls.length, samples: p.samples.value.length, frames: p.samples.locations.location_id.length };
    };
    // Two distinct lines, recorded when parsed; their 1,508 repeats in runs.
    expect(count()).toEqual({ records: 2, samples: 1510, frames: 2 * 1010 + 500 });
    // With maxTotalFrames reached in a run, that run's lines are recorded one by one (the error's line).
    expect(() => count({ maxTotalFrames: 2 * 1010 + 499 })).toThrow(expect.objectContaining({ code: 'PROFKIT_E_LIMIT', detail: expect.objectContaining({ line: 1512 }) }));
  });
});

describe('trace lines parsed by the module', () => {
  it('ordinary first occurrences are parsed by the module; anything the text parser reports or refuses goes as text', async () => {
    // Each line once; `true`: the module parses it (the text parser would parse it without error,
    // limit or cut-off part), `false`: it is decoded and parsed as text (cut off: a warning).
    const lines: [string, boolean][] = [
      ['"f" ', true],
      ['1#2 "f" "g" 1#30 "h" ', true],
      ['"<GC>" "f" ', true],
      ['"<GC>" ', true],
      ['"x[["a"]]" "f" ', true], // a name with quotes in it
      ['"a" b" 1#3 "f" ', true], // the name a" b: it ends at the first `" ` that a srcref follows
      ['"café ☕ \u{1F600}" ', true],
      ['001#0007 "f" ', true], // leading zeros
      ['1#123456789012345 "f" ', true],
      ['1#1234567890123456 "f" ', false], // more than 15 digits
      ['"f" 1#2 ', false], // a srcref without its function
      ['1# "f" ', false], // a srcref without its line: the rest of the line is dropped
      ['"f" 1#', false],
      ['"f" 1', false],
      ['"f"', false], // no trailing space
      ['"f', false],
      ['"<GC>"', false],
    ];
    const text = 'sample.interval=1000\n#File 1: a.R\n' + lines.map(([l]) => l).join('\n') + '\n';
    const { parsed, byModule } = readIndexed(enc(text));
    expect(byModule).toEqual(lines.flatMap(([, module], i) => (module ? [i + 3] : [])));
    expect(parsed).toEqual([1, 2, ...lines.map((_, i) => i + 3)]);
    const r = await expectSamePaths(enc(text), ['whole', 'bytes', 'random']);
    expect(r).toHaveProperty('warnings.0.detail.lines', 7);
    // Invalid UTF-8 in a name: decoded alike on its own and in its line (U+FFFD).
    const invalid = concat(['sample.interval=1000\n"a', new Uint8Array([0xe2, 0x82]), '" "b', new Uint8Array([0xff]), '" \n"a', new Uint8Array([0xe2, 0x82]), '" \n']);
    expect(readIndexed(invalid).byModule).toEqual([2, 3]);
    await expectSamePaths(invalid, ['whole', 'bytes']);
    // Lines the text parser refuses: the same error, at the same line, on both paths (4294967297:
    // a file number whose low 32 bits are a declared one).
    for (const bad of ['"a" 1#2 b" 1#3 "f" ', '00#7 "f" ', '9#1 "f" ', '1234567890#1 "f" ', '4294967297#1 "f" ', '1#2 1#3 "f" ', '"" ', 'x"f" ', ':1:2:3:4:"f" ']) {
      const e = await expectSamePaths(enc(`sample.interval=1000\n#File 1: a.R\n"f" \n${bad}\n`), ['whole', 'bytes']);
      expect(e, bad).toMatchObject({ error: 'PROFKIT_E_PARSE', detail: { line: 4 } });
    }
  });

  it('lines of up to 4,096 frames are parsed by the module, longer ones as text (the same stacks)', async () => {
    const text = 'sample.interval=1000\n' + '"f" '.repeat(4096) + '\n' + '"g" '.repeat(4097) + '\n' + '"h" '.repeat(5000) + '\n';
    expect(readIndexed(enc(text)).byModule).toEqual([2]);
    await expectSamePaths(enc(text), ['whole']);
  });

  it('a line whose names grow the module memory is still remembered (its repeat is not parsed again)', () => {
    // The line's key (70 KB) and then its name (70 KB more) each grow the key store.
    const line = `"${'n'.repeat(70_000)}" `;
    const { parsed, byModule } = readIndexed(enc(`sample.interval=1000\n${line}\n${line}\n${line}\n`));
    expect(byModule).toEqual([2]);
    expect(parsed).toEqual([1, 2]);
  });

  it('in memory runs, lines with their memory prefix; limits are checked at the same line as on the text path', async () => {
    const text = 'memory profiling: sample.interval=1000\n#File 1: a.R\n:1:2:3:4:"f" 1#2 "g" \n:5:6:7:8:"<GC>" "h" \n:9:9:9:9:\n"f" \n';
    const { byModule } = readIndexed(enc(text.slice(0, text.lastIndexOf('"f"'))));
    expect(byModule).toEqual([3, 4, 5]);
    // The last line has no memory prefix: an error, from the text parser.
    const r = await expectSamePaths(enc(text), ['whole', 'bytes']);
    expect(r).toMatchObject({ error: 'PROFKIT_E_PARSE', detail: { line: 6 } });
    const deep = 'sample.interval=1000\n' + '"fg" '.repeat(5) + '\n' + '"fg" "g" \n';
    for (const limits of [{ maxFramesPerStack: 4 }, { maxStringLength: 1 }, { maxTotalFrames: 6 }, { maxSamples: 1 }]) {
      const e = await expectSamePaths(enc(deep), ['whole'], { limits });
      expect(e, JSON.stringify(limits)).toMatchObject({ error: 'PROFKIT_E_LIMIT', detail: { option: Object.keys(limits)[0] } });
    }
  });
});

/** The Rprof files of the shared fixtures, the examples and this package's fixtures. */
function rprofFiles(): string[] {
  const files = [join(fixturesDir, 'append.out'), join(fixturesDir, 'grammar.out'), join(fixturesDir, '../../../../examples/r/fib.Rprof.out')];
  const shared = sharedDir();
  if (!existsSync(shared)) {
    console.warn(`skipping the shared fixtures: ${shared} is absent (set PROFKIT_SHARED or place ../shared/fixtures beside the repository)`);
    return files;
  }
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (statSync(p).size < 50_000_000 && /^(?:\uFEFF)?(?:memory profiling: |GC profiling: |line profiling: )*sample\.interval=/.test(readFileSync(p).subarray(0, 200).toString('utf8'))) files.push(p);
    }
  };
  walk(shared);
  return files;
}

describe('same profile, warnings and errors on both paths', () => {
  it.each(rprofFiles())('%s', async (file) => {
    const bytes = readFileSync(file);
    const first = await expectSamePaths(bytes, ['whole', 'bytes', 'random', 4096], { fileName: file });
    expect(first).toHaveProperty('profile');
  });

  it('R’s CRLF, lone CR and mixed line ends, also split between CR and LF', async () => {
    const body = '"f" "g" |1#2 "h" |"<GC>" "f" |"f" "g" |';
    for (const eol of ['\r\n', '\r', '\n\r', '\r\r\n']) {
      const text = 'line profiling: sample.interval=1000' + eol + '#File 1: a.R' + eol + body.split('|').join(eol);
      const r = await expectSamePaths(enc(text), ['whole', 'bytes', 2, 3, 'random']);
      expect(r).toHaveProperty('profile');
    }
  });

  it('a BOM (dropped from the first line only), invalid UTF-8 and characters outside the BMP', async () => {
    const text = concat(['\uFEFFsample.interval=1000\n"f" "g" \n', new Uint8Array([0x22, 0xff, 0xc3, 0x22, 0x20, 0x0a]), '"\uFEFFf" \n"𝔣é" \n', new Uint8Array([0x22, 0xfe, 0xc3, 0x22, 0x20, 0x0a]), '"𝔣é" \n"g', new Uint8Array([0xe2, 0x82]), '" ']);
    const r = await expectSamePaths(text, ['whole', 'bytes', 1, 2, 5, 'random']);
    expect(r).toHaveProperty('profile');
    // A BOM elsewhere is content, as with LineSplitter.
    await expectSamePaths(enc('sample.interval=1000\n\uFEFF"f" \n'), ['whole', 'bytes']);
  });

  it('#File redefinitions and Rprof(append = TRUE) runs with and without memory profiling', async () => {
    const text =
      'sample.interval=1000\n#File 1: a.R\n1#2 "f" \n1#2 "f" \n#File 1: b.R\n1#2 "f" \n1#2 "f" \n' +
      'memory profiling: GC profiling: sample.interval=2000\n#File 1: c.R\n:1:2:3:4:1#2 "f" \n:2:2:3:4:1#2 "f" \n:3:2:3:4:"<GC>" 1#2 "f" \n:3:2:3:4:"<GC>" 1#2 "f" \n:9:9:9:9:\n:9:9:9:9:\n' +
      // More than 15 digits: not the prefix the fast path takes, but numbers the parser accepts.
      ':1:2:3:1234567890123456:1#2 "f" \n:1:2:3:1234567890123456:1#2 "f" \n' +
      'sample.interval=1000\n"f" \n"f" \n"f" \n';
    for (const aggregate of [false, true]) {
      const r = await expectSamePaths(enc(text), ['whole', 'bytes', 'random'], { fileName: 'a.out', aggregate });
      expect(r).toHaveProperty('profile');
    }
  });

  it('errors: a memory prefix outside memory runs, a missing or malformed one, an undeclared file', async () => {
    const cases = [
      'sample.interval=1000\n"f" \n"f" \n:1:2:3:4:"f" \n',
      'memory profiling: sample.interval=1000\n:1:2:3:4:"f" \n:1:2:3:4:"f" \n"f" \n',
      'memory profiling: sample.interval=1000\n:1:2:3:4:"f" \n:1:2:3:12345678901234567890:"f" \n',
      // 16 digits, above 2^53: not the prefix the index takes (the parser refuses the number).
      'memory profiling: sample.interval=1000\n:1:2:3:4:"f" \n:1:2:3:9007199254740993:"f" \n',
      'memory profiling: sample.interval=1000\n:1:2:3:4:"f" \n:1:2:3:4"f" \n',
      'memory profiling: sample.interval=1000\n:1:2:3:4:"f" \n:1::3:4:"f" \n',
      'sample.interval=1000\n#File 1: a.R\n1#2 "f" \n#File 2: b.R\n1#2 "f" \nsample.interval=1000\n1#2 "f" \n',
      'not a header\n',
      'sample.interval=0\n',
    ];
    for (const text of cases) {
      const r = await expectSamePaths(enc(text), ['whole', 'bytes', 'random']);
      expect(r).toHaveProperty('error');
    }
  });

  it('maxSamples and maxTotalFrames reached within a run of repeated lines: the same error at the same line', async () => {
    const text = 'sample.interval=1000\n' + '"f" "g" \n'.repeat(50) + '"h" \n' + '"f" "g" \n'.repeat(50);
    for (const limits of [{ maxSamples: 70 }, { maxTotalFrames: 150 }, { maxSamples: 100 }, { maxTotalFrames: 200 }]) {
      const r = await expectSamePaths(enc(text), ['whole', 'bytes', 'random'], { limits });
      expect(r).toHaveProperty('error', 'PROFKIT_E_LIMIT');
    }
    const r = await expectSamePaths(enc(text), ['whole'], { limits: { maxSamples: 101, maxTotalFrames: 201 } });
    expect(r).toHaveProperty('profile');
  });

  it('truncated lines, also the last one without terminator', async () => {
    const text = 'memory profiling: sample.interval=1000\n:1:2:3:4:"f" "g\n:1:2:3:4:"f" "g\n:1:2:3:4:"f" 1#\n:1:2:3\n:1:2:3:4:"f" "g';
    const r = await expectSamePaths(enc(text), ['whole', 'bytes', 'random']);
    expect(r).toHaveProperty('warnings.0.code', 'PROFKIT_W_RPROF_TRUNCATED');
  });

  it('lines longer than maxLineLength, in the window, carried between chunks and beyond the window', async () => {
    const long = '"' + 'x'.repeat(300) + '" \n';
    const text = 'sample.interval=1000\n"f" \n"f" \n' + long;
    for (const maxLineLength of [40, 299, 302, 303, 1000]) {
      await expectSamePaths(enc(text), ['whole', 'bytes', 7, 'random'], { maxLineLength });
    }
    // A repeated key whose memory prefix makes its line longer than the first occurrence and the
    // limit: not taken as a repeat but decoded and refused, at its line.
    const header = 'memory profiling: sample.interval=1000\n';
    const first = ':1:1:1:1:"' + 'y'.repeat(20) + '" \n';
    const longer = ':123456789012345:1:1:1:"' + 'y'.repeat(20) + '" \n';
    for (const maxLineLength of [header.length, longer.length - 2, longer.length - 1]) {
      const r = await expectSamePaths(enc(header + first + longer), ['whole', 'bytes'], { maxLineLength });
      if (maxLineLength < longer.length - 1) expect(r).toHaveProperty('detail', expect.objectContaining({ option: 'maxLineLength', line: 3 }));
      else expect(r).toHaveProperty('profile');
    }
    // Multi-byte characters: a line of 100 characters in 300 bytes.
    await expectSamePaths(enc('sample.interval=1000\n"' + '€'.repeat(98) + '\n'), ['whole', 'bytes'], { maxLineLength: 100 });
    await expectSamePaths(enc('sample.interval=1000\n"' + '€'.repeat(99) + '\n'), ['whole', 'bytes'], { maxLineLength: 100 });
  });

  it('a line end at the edge of the 1 MiB window: a CR as its last byte and the LF after it are one line end', async () => {
    const WINDOW = 1 << 20;
    for (const eol of ['\r\n', '\r', '\n']) {
      const head = 'sample.interval=1000' + eol;
      const line = '"f" "g" ' + eol;
      const body = line.repeat(Math.floor((WINDOW - 4096) / line.length));
      for (let delta = -2; delta <= 2; delta++) {
        // The filler line `"x…x" ` puts the first byte of its terminator at WINDOW - 1 + delta.
        const filler = '"' + 'x'.repeat(WINDOW - 1 + delta - head.length - body.length - 3) + '" ';
        // The second run's header records its line number: an extra empty line would shift it.
        const text = head + body + filler + eol + line.repeat(3) + 'sample.interval=2000' + eol + line;
        expect(enc(text).indexOf(eol.charCodeAt(0), WINDOW - 8)).toBe(WINDOW - 1 + delta);
        const r = await expectSamePaths(enc(text), ['whole']);
        const runs = (r as { profile: { '.extensions': { rprof: { facts: { runs: { line: number }[] } } } } }).profile['.extensions'].rprof.facts.runs;
        expect(runs.map((run) => run.line)).toEqual([1, body.length / line.length + 6]);
      }
    }
  });

  /** Reads `chunks` on the text path and the index path: the same profile, of 4 samples. */
  async function expectFourSamplesOnBothPaths(chunks: Uint8Array[]): Promise<void> {
    const read = async (path: LinePath) => {
      setLinePath(path);
      return (await readRprofChunks(chunks, {})).profile;
    };
    const viaText = await read('text');
    expect(viaText.samples.value.length).toBe(4);
    expect(await read('index')).toEqual(viaText);
  }

  it('a CR that ends a chunk is not paired with a LF that earlier bytes left in the window after it', async () => {
    // The second chunk is written where the first was, one byte shorter: the first's LF follows its CR.
    const first = 'sample.interval=1000\r\n';
    const second = '"' + 'f'.repeat(first.length - 5) + '" \r';
    const chunks = [first, second, '"g" \r', '"f" \nsample.interval=2000\n"f" \n'].map(enc);
    await expectFourSamplesOnBothPaths(chunks);
  });

  it('a line equal to the previous one up to the end of the bytes is carried, not ended by a LF earlier bytes left after it', async () => {
    // The third chunk is written where the second was, one byte shorter: the second's last LF
    // follows its cut-off "f" (the previous-line shortcut must look no further than the bytes).
    const chunks = ['sample.interval=1000\n', '"f" \n"f" \n', '"f" \n"f" ', '"g" \n'].map(enc);
    await expectFourSamplesOnBothPaths(chunks);
  });

  it('runs of repeats longer than one scan takes (16,384), with and without memory prefixes, across the window', async () => {
    for (const memory of [false, true]) {
      let text = (memory ? 'memory profiling: ' : '') + 'sample.interval=1000\n';
      for (let i = 0; i < 60_000; i++) text += (memory ? `:${i}:${i % 7}:${i % 13}:1:` : '') + (i % 25_000 === 24_999 ? '"h" ' : '"f" "g" "pkg::h" ') + '\n';
      expect(text.length).toBeGreaterThan(1 << 20);
      for (const aggregate of [false, true]) {
        const r = await expectSamePaths(enc(text), ['whole', 'random'], { aggregate });
        expect(r).toHaveProperty('profile.samples.value.length', aggregate ? 2 : 60_000);
      }
    }
  });

  it('generated files: random stacks, memory prefixes, GC, empty, cut-off and invalid lines, any line ends', async () => {
    for (let seed = 1; seed <= 40; seed++) {
      const bytes = generatedRprof(seed);
      await expectSamePaths(bytes, seed % 4 === 0 ? ['whole', 'bytes', 'random'] : ['whole', 'random', 64]);
    }
  });
});

describe('trace lines of random tokens', () => {
  it('the module and the text parser give the same stack, warning or error for each line (one file a line)', async () => {
    // Tokens of the grammar and near misses: quotes next to spaces, srcref-like digits inside and
    // after names, cut-off srcrefs, "<GC>", long and zero numbers, non-ASCII and invalid UTF-8.
    const tokens: (string | Uint8Array)[] = ['"', '" ', ' ', '"f', 'g', '1#2 ', '2#', '#', '3', '0', '00#1 ', '1#0 ', '"<GC>" ', '"<GC>"', '1234567890', '1#1234567890123456 ', '"é', new Uint8Array([0xe2, 0x82]), new Uint8Array([0xff]), ':'];
    // and whole frames (picked more often), so that many lines are well-formed
    const frames = ['"f" ', '"a b" ', '2#7 "g" ', '"h" 1#3 ', '"x"" ', '"1#2 " ', '"<GC>" '];
    const random = prng(4242);
    let byModule = 0;
    for (let i = 0; i < 600; i++) {
      const parts: (string | Uint8Array)[] = [];
      for (let n = 1 + Math.floor(random() * 7); n > 0; n--) parts.push(random() < 0.7 ? frames[Math.floor(random() * frames.length)]! : tokens[Math.floor(random() * tokens.length)]!);
      const line = concat(parts);
      const bytes = concat(['sample.interval=1000\n#File 1: a.R\n#File 2: b.R\n', line, '\n', line, '\n']);
      const viaIndex = await outcome('index', bytes, 'whole');
      const viaText = await outcome('text', bytes, 'whole');
      if (!isDeepStrictEqual(viaIndex, viaText)) expect(viaIndex, new TextDecoder().decode(line)).toEqual(viaText);
      if (!('error' in (viaIndex as object)) && readIndexed(bytes).byModule.length > 0) byModule++;
    }
    // Enough of them well-formed for the module's parse to be what was compared.
    expect(byModule).toBeGreaterThan(100);
  });
});

describe('same results on mutated files', () => {
  it('random byte edits of the hand-written fixtures (line ends, prefixes, quotes, invalid UTF-8)', async () => {
    const sources = ['grammar.out', 'append.out'].map((f) => new Uint8Array(readFileSync(join(fixturesDir, f))));
    const alphabet = [10, 13, 58, 34, 32, 35, 48, 49, 57, 0xff, 0xc3, 0xef, 0xbb, 0xbf];
    for (let seed = 1; seed <= 120; seed++) {
      const random = prng(seed * 7919);
      const bytes = Array.from(sources[seed % 2]!);
      for (let edits = 1 + Math.floor(random() * 6); edits > 0; edits--) {
        const at = Math.floor(random() * bytes.length);
        const r = random();
        if (r < 0.4) bytes.splice(at, 1);
        else if (r < 0.8) bytes.splice(at, 0, alphabet[Math.floor(random() * alphabet.length)]!);
        else bytes.splice(at, 0, ...bytes.slice(at, at + Math.floor(random() * 80))); // a repeated stretch
      }
      await expectSamePaths(Uint8Array.from(bytes), ['whole', 'random']);
    }
  });
});

/** A random Rprof file (mostly valid: a parse goes on for a while before an invalid line, if any). */
function generatedRprof(seed: number): Uint8Array {
  const random = prng(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)]!;
  const eols = [['\n'], ['\r\n'], ['\r'], ['\n', '\r\n', '\r']][seed % 4]!;
  const names = ['"f"', '"g"', '"pkg::h"', '"<Anonymous>"', '"x[[\\"a\\"]]"', '"𝔣é"', '"a b"'];
  const stacks: string[] = [];
  for (let i = 0; i < 12; i++) {
    let s = random() < 0.2 ? '"<GC>" ' : '';
    for (let k = 0, n = 1 + Math.floor(random() * 5); k < n; k++) s += (random() < 0.4 ? `${1 + Math.floor(random() * 2)}#${Math.floor(random() * 50)} ` : '') + pick(names) + ' ';
    stacks.push(s);
  }
  const parts: (string | Uint8Array)[] = [];
  if (random() < 0.2) parts.push('\uFEFF');
  let memory = false;
  const header = () => {
    memory = random() < 0.5;
    parts.push((memory ? 'memory profiling: ' : '') + (random() < 0.5 ? 'GC profiling: ' : '') + 'line profiling: sample.interval=' + (1 + Math.floor(random() * 20000)), pick(eols));
    parts.push('#File 1: a.R', pick(eols), '#File 2: b.R', pick(eols));
  };
  header();
  const lines = 200 + Math.floor(random() * 400);
  for (let i = 0; i < lines; i++) {
    const r = random();
    let line: string | Uint8Array;
    if (r < 0.01) {
      header();
      continue;
    } else if (r < 0.03) line = `#File ${1 + Math.floor(random() * 2)}: ${pick(['a.R', 'b.R', 'c.R'])}`;
    else if (r < 0.04) line = '';
    else if (r < 0.045) line = pick(stacks).slice(0, Math.floor(random() * 10)); // cut off
    else if (r < 0.05) line = concat([pick(stacks), new Uint8Array([0x22, 0xff, 0xe2, 0x82, 0x22, 0x20])]);
    else if (r < 0.052) line = ':1:2:x:4:"f" '; // an error in any run
    else line = pick(stacks);
    const prefix = memory ? `:${Math.floor(random() * 1e6)}:${Math.floor(random() * 1e6)}:${Math.floor(random() * 1e3)}:${Math.floor(random() * 10)}:` : '';
    parts.push(prefix, line, pick(eols));
  }
  if (random() < 0.3) parts.pop(); // no terminator on the last line
  return concat(parts);
}

describe('bounds', () => {
  it('more than 65,536 distinct lines: the ones without an id take the text path, with the same result', async () => {
    let text = 'sample.interval=1000\n';
    for (let i = 0; i < 70_000; i++) text += `"f${i}" \n"f${i}" \n`;
    text += '"f1" \n"f69999" \n';
    const bytes = enc(text);
    const r = await expectSamePaths(bytes, ['whole', 65536]);
    expect(r).toHaveProperty('profile.samples.value.length', 140_002);
    // At most 65,536 ids (one is the header's), of which the names the module parses (f0, f1, …)
    // take at most 16,384: from 49,151 to 65,535 of the 70,000 second lines (3 + 2i) are repeats,
    // the others are parsed (a key may also get no id after 64 probes, rarely).
    const parsed = new Set(readIndexed(bytes).parsed);
    let repeats = 0;
    for (let n = 3; n <= 140_001; n += 2) if (!parsed.has(n)) repeats++;
    expect(repeats).toBeLessThanOrEqual(65_535 - 16_384);
    expect(repeats).toBeGreaterThan(49_000);
    // "f1" once more after the table is full: still known (line 140,002 is a repeat).
    expect(parsed.has(140_002)).toBe(false);
  });

  it('long lines: beyond the longest key, beyond the window, and more than 16 MiB of distinct keys', async () => {
    const parts = ['sample.interval=1000\n'];
    // 70 distinct lines of 250 KB (17.5 MB of keys), each twice; then 300 KB and 1.5 MB lines twice.
    for (let i = 0; i < 70; i++) parts.push(`"${String(i).padStart(3, '0')}${'x'.repeat(250_000)}" \n`.repeat(2));
    parts.push(`"${'y'.repeat(300_000)}" \n`.repeat(2), `"${'z'.repeat(1_500_000)}" \r`.repeat(2), '"f" \n"f" \n');
    const bytes = enc(parts.join(''));
    const r = await expectSamePaths(bytes, ['whole', 1 << 20, 'random']);
    expect(r).toHaveProperty('profile.samples.value.length', 146);

    const parser = new RprofParser({});
    const splitter = newIndexedLineSplitter(parser, {})!;
    for (const chunk of chunked(bytes, 1 << 16)) splitter.push(chunk);
    splitter.end();
    expect(parser.finish().samples.value.length).toBe(146);
    // Tables, repeats, parsed frames and the 1 MiB window (3.9 MiB) and at most 16 MiB of keys (here all of it).
    expect(splitter.memoryBytes).toBeLessThanOrEqual(0x3f0000 + 16 * 1024 * 1024);
    expect(splitter.memoryBytes).toBeGreaterThan(16 * 1024 * 1024);
  });
});

describe('crafted hash collisions', () => {
  it('a key with another key’s hash and length gets no id: decoded each time (one byte comparison a line), same profile', async () => {
    // Whatever the seed, flipping a word's top bit passes the hash's multiply unchanged: these two
    // 18-byte keys hash alike (their first words differ in bit 63, their second in bits 63 and 34).
    const k0 = enc('"aaaaaaaaaaaaaaa" ');
    const k1 = k0.slice();
    k1[7]! ^= 0x80;
    k1[15]! ^= 0x80;
    k1[12]! ^= 0x04;
    const bytes = concat(['sample.interval=1000\n', k0, '\n', k1, '\n', k1, '\n', k0, '\n']);
    const { parser, parsed } = readIndexed(bytes);
    // k1's lines (3 and 4) are parsed as text each time; line 5 repeats k0.
    expect(parsed).toEqual([1, 2, 3, 4]);
    expect(parser.finish().samples.value.length).toBe(4);
    await expectSamePaths(bytes, ['whole', 'bytes']);
  });
});

describe('work', () => {
  it('a long line arriving in small chunks is scanned once its end has come, not again with every chunk', () => {
    const parser = new RprofParser({});
    const splitter = newIndexedLineSplitter(parser, {})!;
    // Count the bytes the module is asked to scan.
    const inner = (splitter as unknown as { exports: { scan(start: number, end: number): number } }).exports;
    let scanned = 0;
    (splitter as unknown as { exports: unknown }).exports = {
      ...inner,
      scan: (start: number, end: number) => {
        scanned += end - start;
        return inner.scan(start, end);
      },
    };
    const line = '"' + 'x'.repeat(200_000) + '" \n';
    const text = enc('sample.interval=1000\n' + line + line);
    for (const chunk of chunked(text, 100)) splitter.push(chunk);
    splitter.end();
    expect(parser.finish().samples.value.length).toBe(2);
    expect(scanned).toBeLessThan(3 * text.length); // once per chunk: 2,000 × 100 KB on average
  });
});

describe('without WebAssembly', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.resetModules();
  });

  for (const [what, stub] of [
    ['absent', undefined],
    ['refusing to compile (a CSP without wasm-unsafe-eval)', { Module: class { constructor() { throw new Error('CompileError: refused'); } } }],
    ['out of memory for an instance', { Module: class {}, Instance: class { constructor() { throw new RangeError('WebAssembly.Instance(): Out of memory'); } } }],
  ] as const) {
    it(`reads the same through LineSplitter when WebAssembly is ${what}`, async () => {
      const text = enc('sample.interval=1000\n"f" \n"f" \n"g" "f" \n');
      const expected = await outcome('text', text, 'whole');
      vi.stubGlobal('WebAssembly', stub);
      vi.resetModules();
      const lineIndex = await import('../src/line-index.js');
      const read = await import('../src/read.js');
      expect(lineIndex.newIndexedLineSplitter(new read.RprofParser({}), {})).toBeUndefined();
      const r = read.readRprofBytes(text);
      expect({ profile: r.profile, warnings: r.warnings }).toEqual(expected);
    });
  }
});
