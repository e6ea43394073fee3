/**
 * Generated hostile inputs, run before the mutation loop of every target: length-prefix bombs
 * (lengths and counts far beyond the input), gzip bombs (tiny input, huge output), stacks that
 * claim or carry a huge number of frames, huge strings, huge sample counts, and deeply nested
 * messages. Each must end in a typed error (or a profile) within the time and memory bounds.
 */

import { constants as zc, deflateRawSync, gzipSync } from 'node:zlib';
import { concat as concatParts, varint } from './mutate.js';
import type { TargetName } from './targets.js';

const concat = (parts: ArrayLike<number>[]): Uint8Array => concatParts(...parts);

export interface SpecialInput {
  name: string;
  bytes: Uint8Array;
}

const enc = (s: string) => new TextEncoder().encode(s);


/**
 * A gzip member whose payload is `prefix` followed by `total` bytes of `fill`, built by
 * compressing one block and repeating the compressed block (stored as a raw deflate stream with
 * a full flush after each block), so building a 1 GiB bomb costs a few kilobytes of work.
 */
export function gzipBomb(prefix: Uint8Array, fill: number, total: number): Uint8Array {
  return repeatedBlockGzip(prefix, new Uint8Array(1 << 20).fill(fill), total);
}

/** The gzip member of `prefix` then `block` repeated until about `total` bytes (see `gzipBomb`). */
function repeatedBlockGzip(prefix: Uint8Array, block: Uint8Array, total: number): Uint8Array {
  const head = deflateRawSync(prefix, { finishFlush: zc.Z_FULL_FLUSH });
  const body = deflateRawSync(block, { finishFlush: zc.Z_FULL_FLUSH });
  const end = deflateRawSync(new Uint8Array(0)); // final empty block
  const n = Math.ceil(total / block.length);
  const parts: Uint8Array[] = [Uint8Array.of(0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff), head];
  for (let i = 0; i < n; i++) parts.push(body);
  parts.push(end);
  // CRC32 and size trailer: a wrong CRC is fine, readers must stop at the size limit first.
  parts.push(new Uint8Array(8));
  return concat(parts);
}

/**
 * Like `gzipBomb`, but the payload after `prefix` repeats the text `unit` (whole units, about
 * `total` bytes): a bomb of records (Rprof sample lines, heap rows) rather than of one byte.
 */
export function gzipBombOf(prefix: string, unit: string, total: number): Uint8Array {
  return repeatedBlockGzip(enc(prefix), enc(unit.repeat(Math.max(1, Math.floor((1 << 20) / unit.length)))), total);
}

/** `tag` of protobuf field `field` with wire type `wt`. */
const tag = (field: number, wt: number) => varint(BigInt((field << 3) | wt));

/** `n` copies of `entry`, one after the other. */
function repeated(entry: ArrayLike<number>, n: number): Uint8Array {
  const out = new Uint8Array(entry.length * n);
  for (let i = 0; i < n; i++) out.set(entry, i * entry.length);
  return out;
}

/** Length-delimited field `field` holding `payload`. */
const message = (field: number, payload: Uint8Array) => concat([tag(field, 2), varint(BigInt(payload.length)), payload]);

/**
 * A profile.proto (uncompressed) of two samples `leaf <- main` with `values`, and `drop_frames`
 * (issue 15 items 10-11: the views evaluate the profile's own drop_frames, and sum the values).
 */
function pprofTwoSamples(leaf: string, values: bigint[], dropFrames: string): Uint8Array {
  const strings = ['', 'space', 'bytes', leaf, 'main', dropFrames];
  const packed = (field: number, vs: bigint[]) => message(field, concat(vs.map((v) => varint(BigInt.asUintN(64, v)))));
  const sample = (v: bigint) => message(2, concat([packed(1, [1n, 2n]), packed(2, [v])]));
  const fn = (id: number, name: number) => message(5, concat([tag(1, 0), varint(BigInt(id)), tag(2, 0), varint(BigInt(name))]));
  const loc = (id: number, fnId: number) => message(4, concat([tag(1, 0), varint(BigInt(id)), message(4, concat([tag(1, 0), varint(BigInt(fnId))]))]));
  return concat([
    message(1, concat([tag(1, 0), [1], tag(2, 0), [2]])),
    ...values.map(sample),
    loc(1, 1),
    loc(2, 2),
    fn(1, 3),
    fn(2, 4),
    ...strings.map((str) => message(6, enc(str))),
    tag(7, 0),
    [5],
  ]);
}

/**
 * pprof inputs of millions of empty (2-byte) entries of one repeated field each, gzipped: every
 * entry costs columns however small it is, so each must stop at its count limit
 * (`maxTableEntries`, `maxSampleTypes`, `maxLabelsPerSample`, `maxFramesPerStack` for the lines
 * of one location) in the indexing pass (issue 15: these took 1.6-4.2 GB and aborted V8).
 */
function pprofTableFloods(n: number): SpecialInput[] {
  const emptyString = concat([tag(6, 2), [0]]);
  const flood = (name: string, body: Uint8Array) => ({ name: `pprof: ${name}`, bytes: gzipSync(concat([emptyString, body]), { level: 1 }) });
  const empty = (field: number) => concat([tag(field, 2), [0]]);
  const labelsOfOneSample = message(2, repeated(empty(3), n));
  const linesOfOneLocation = message(4, repeated(empty(4), n));
  const oneValue = concat([tag(2, 0), [0]]);
  return [
    flood(`${n} empty string-table entries`, repeated(emptyString, n)),
    // Raw too, for the differential check of the buffer and streamed decoders (just over 1M: the
    // streamed decode in 1-64 byte pieces is the slowest part of an execution).
    { name: 'pprof: 1.1M empty string-table entries (raw)', bytes: repeated(emptyString, 1_100_000) },
    flood(`${n} empty locations`, repeated(empty(4), n)),
    flood(`${n} empty functions`, repeated(empty(5), n)),
    flood(`${n} empty mappings`, repeated(empty(3), n)),
    flood(`${n} comments`, repeated(concat([tag(13, 0), [0]]), n)),
    flood(`${n} packed comments`, message(13, new Uint8Array(n))),
    flood(`${n} labels of one sample`, labelsOfOneSample),
    flood(`${n} lines of one location`, linesOfOneLocation),
    flood(`${n} labels over ${n / 1000} samples`, repeated(message(2, concat([oneValue, repeated(empty(3), 1000)])), n / 1000)),
    flood(`${n} lines over ${n / 1000} locations`, repeated(message(4, repeated(empty(4), 1000)), n / 1000)),
    flood(`${n} empty sample types`, repeated(empty(1), n)),
    // One location of 20 MiB (over the fuzzer's maxMessageBytes): refused from its length.
    flood('20 MiB location of empty lines', message(4, repeated(empty(4), 10 * 1024 * 1024))),
    // Just under the fuzzer's maxTableEntries and maxSamples: a valid-looking shape that fails
    // only after the columns are allocated (memory must stay what the limits allow).
    flood('1M-1 empty mappings (just under maxTableEntries)', repeated(empty(3), 1_000_000 - 2)),
    flood('9999 sample types x 999999 empty samples', concat([repeated(empty(1), 9_999), repeated(empty(2), 999_999)])),
  ];
}

/** Length-prefix bombs derived from a binary seed: every aligned 32-bit word of the head set to huge values. */
export function lengthBombs(seed: Uint8Array, name: string, maxWords = 24): SpecialInput[] {
  const out: SpecialInput[] = [];
  for (let off = 0; off + 4 <= seed.length && off / 4 < maxWords; off += 4) {
    for (const v of [0xffffffff, 0x7fffffff]) {
      const b = seed.slice();
      new DataView(b.buffer).setUint32(off, v, true);
      out.push({ name: `${name}: u32 @${off} = ${v.toString(16)}`, bytes: b });
    }
  }
  return out;
}

export function specialInputs(target: TargetName, seeds: readonly Uint8Array[] = []): SpecialInput[] {
  const out: SpecialInput[] = [];
  const FRAMES = 150_000; // above the fuzzer's maxFramesPerStack (100k)
  const BIG_STRING = 2 * 1024 * 1024; // above the fuzzer's maxStringLength (1 MiB)
  const SAMPLES = 1_100_000; // above the fuzzer's maxSamples (1M)
  const GZIP_OUT = 1024 * 1024 * 1024; // 1 GiB of output from ~1 MiB of input
  const ENTRIES = 3_000_000; // above the fuzzer's maxTableEntries (1M)
  switch (target) {
    case 'rprof': {
      const head = 'sample.interval=20000\n';
      out.push({ name: 'rprof: 150k-frame stack', bytes: enc(head + '"f" '.repeat(FRAMES) + '\n') });
      out.push({ name: 'rprof: 2 MiB function name', bytes: enc(head + `"${'a'.repeat(BIG_STRING)}" \n`) });
      out.push({ name: 'rprof: 1.1M samples', bytes: enc(head + '"f" \n'.repeat(SAMPLES)) });
      out.push({ name: 'rprof: gzip bomb of samples', bytes: gzipBomb(enc(head), 0x0a, GZIP_OUT) });
      out.push({ name: 'rprof: 1M #File lines', bytes: enc(head + Array.from({ length: 200_000 }, (_, i) => `#File ${i + 1}: f${i}.R\n`).join('')) });
      out.push({ name: 'rprof: srcref to file 4294967296', bytes: enc('line profiling: sample.interval=20000\n"f" 4294967296#1 \n') });
      // Issue 15: bombs of records, not bytes; each must stop at a structural limit while streaming.
      out.push({ name: 'rprof: gzip bomb of sample lines', bytes: gzipBombOf(head, '"f" "g" \n', GZIP_OUT) });
      out.push({ name: 'rprof: gzip bomb of memory sample lines', bytes: gzipBombOf('memory profiling: GC profiling: ' + head, ':1:2:3:4:"<GC>" "f" \n', GZIP_OUT) });
      out.push({ name: 'rprof: gzip bomb of deep stacks (total frames)', bytes: gzipBombOf(head, '"f" '.repeat(1000) + '\n', GZIP_OUT) });
      out.push({ name: 'rprof: gzip bomb of header lines', bytes: gzipBombOf(head, head, GZIP_OUT) });
      out.push({ name: 'rprof: gzip bomb of #File lines', bytes: gzipBombOf('line profiling: ' + head, '#File 1: a.R\n', GZIP_OUT) });
      out.push({ name: 'rprof: gzip bomb of one endless line', bytes: gzipBombOf(head, '"f" ', GZIP_OUT) });
      out.push({ name: 'rprof: 8 MiB single line', bytes: enc(head + '"f" '.repeat(2 * 1024 * 1024) + '\n') });
      break;
    }
    case 'folded':
      out.push({ name: 'folded: 150k-frame stack', bytes: enc('f;'.repeat(FRAMES) + 'g 1\n') });
      out.push({ name: 'folded: 2 MiB frame', bytes: enc('a'.repeat(BIG_STRING) + ' 1\n') });
      out.push({ name: 'folded: 1.1M samples', bytes: enc(Array.from({ length: SAMPLES }, (_, i) => `f${i % 1000} 1\n`).join('')) });
      out.push({ name: 'folded: count 2^70', bytes: enc('f 1180591620717411303424\n') });
      // Distinct names longer than V8 hashes (16,383 units), of one length: one Map hash chain
      // (2,000 of them: 67 s before StringKeyedMap; a 50 KB gzip).
      out.push({ name: 'folded: 1,500 distinct 20 KB names of one length (gzip)', bytes: gzipSync(enc(Array.from({ length: 1500 }, (_, i) => `${'x'.repeat(20_000)}${String(i).padStart(6, '0')} 1\n`).join(''))) });
      break;
    case 'pprof': {
      // sample { location_id: [1 x 150k] } (packed), location { id: 1 }
      const packed = new Uint8Array(FRAMES).fill(1);
      const sample = concat([tag(1, 2), varint(BigInt(packed.length)), packed]);
      const loc = concat([tag(4, 2), [2], tag(1, 0), [1]]);
      out.push({ name: 'pprof: 150k-frame sample', bytes: concat([tag(2, 2), varint(BigInt(sample.length)), sample, loc]) });
      // location_id claiming 2^62 bytes
      out.push({ name: 'pprof: length prefix 2^62', bytes: concat([tag(2, 2), varint(1n << 62n), [1, 2, 3]]) });
      out.push({ name: 'pprof: length prefix 2^64-1', bytes: concat([tag(6, 2), varint((1n << 64n) - 1n), [0x61]]) });
      // string_table entry of 2 MiB
      out.push({ name: 'pprof: 2 MiB string', bytes: concat([tag(6, 2), [0], tag(6, 2), varint(BigInt(BIG_STRING)), new Uint8Array(BIG_STRING).fill(0x61)]) });
      // 1.1M empty samples
      const empty = concat([tag(2, 2), [0]]);
      const many = new Uint8Array(empty.length * SAMPLES);
      for (let i = 0; i < SAMPLES; i++) many.set(empty, i * empty.length);
      out.push({ name: 'pprof: 1.1M samples', bytes: many });
      // deeply nested groups of an unknown field (start-group tags 500k deep)
      const start = tag(100, 3);
      const deep = new Uint8Array(start.length * 500_000);
      for (let i = 0; i < 500_000; i++) deep.set(start, i * start.length);
      out.push({ name: 'pprof: 500k nested groups', bytes: deep });
      // unknown length-delimited field nested 100k deep
      let nested: Uint8Array = new Uint8Array(0);
      for (let i = 0; i < 2000; i++) nested = concat([tag(100, 2), varint(BigInt(nested.length)), nested]);
      out.push({ name: 'pprof: nested unknown messages', bytes: nested });
      out.push({ name: 'pprof: gzip bomb', bytes: gzipBomb(new Uint8Array(0), 0, GZIP_OUT) });
      out.push({ name: 'pprof: gzip of gzip', bytes: gzipSync(gzipSync(many)) });
      out.push(...pprofTableFloods(ENTRIES));
      // (a+)+ backtracks exponentially in a JavaScript RegExp: views must match drop_frames in linear time
      out.push({ name: 'pprof: drop_frames (a+)+ against a 64-char name', bytes: pprofTwoSamples('a'.repeat(64) + '!', [1n, 1n], '(a+)+') });
      out.push({ name: 'pprof: invalid drop_frames', bytes: pprofTwoSamples('malloc', [1n, 1n], 'malloc|(') });
      // two heap samples near int64 max: their total leaves int64 (pprof prints -8192PB)
      out.push({ name: 'pprof: values near int64 max', bytes: pprofTwoSamples('alloc', [(1n << 63n) - 4097n, (1n << 63n) - 4097n], '') });
      out.push({ name: 'pprof: values near int64 min', bytes: pprofTwoSamples('alloc', [-(1n << 63n), -(1n << 63n)], '') });
      break;
    }
    case 'gperftools-heap': {
      const head = 'heap profile:    1:   262144 [     1:   262144] @ heapprofile\n';
      out.push({ name: 'heap: 150k-frame stack', bytes: enc(head + '     1:   262144 [     1:   262144] @' + ' 0x1'.repeat(FRAMES) + '\n') });
      out.push({ name: 'heap: 1.1M records', bytes: enc(head + '     1:   64 [     1:   64] @ 0x1\n'.repeat(SAMPLES)) });
      out.push({ name: 'heap: huge counts', bytes: enc(head + '99999999999999999999999: 18446744073709551616 [ 1: 1] @ 0x1\n') });
      out.push({ name: 'heap: 2 MiB maps line', bytes: enc(head + '1: 1 [1: 1] @ 0x1\nMAPPED_LIBRARIES:\n00400000-00452000 r-xp 00000000 08:02 1 /' + 'a'.repeat(BIG_STRING) + '\n') });
      out.push({ name: 'heap: gzip bomb', bytes: gzipBomb(enc(head), 0x20, GZIP_OUT) });
      // Distinct address lists longer than V8 hashes, of one length (30.7 s before StringKeyedMap).
      const longRows = Array.from({ length: 1500 }, (_, i) => `1: 2 [3: 4] @${' 0x1000'.repeat(2500)} 0x${(0x10000000 + i).toString(16)}\n`);
      out.push({ name: 'heap: 1,500 distinct rows of 2,501 addresses (gzip)', bytes: gzipSync(enc(head + longRows.join(''))) });
      // Issue 15: endless-ish repetitive records (shared stacks and values) and deep rows (total frames).
      out.push({ name: 'heap: gzip bomb of records', bytes: gzipBombOf(head, '     1:   64 [     1:   64] @ 0x4000 0x5000\n', GZIP_OUT) });
      out.push({ name: 'heap: 1.1M records of deep stacks', bytes: gzipBombOf(head, '1: 64 [1: 64] @' + ' 0x1'.repeat(50) + '\n', SAMPLES * 160) });
      break;
    }
    case 'gperftools-cpu': {
      // header: 0, 3, 0, period 10000, 0; record: count 1, depth 0x7fffffff (a "billion-frame" stack)
      const w = (...v: number[]) => {
        const b = new Uint8Array(v.length * 8);
        const dv = new DataView(b.buffer);
        v.forEach((x, i) => dv.setBigUint64(i * 8, BigInt(x), true));
        return b;
      };
      out.push({ name: 'cpu: depth 2^31-1', bytes: concat([w(0, 3, 0, 10000, 0), w(1, 0x7fffffff, 0x1000)]) });
      out.push({ name: 'cpu: depth 2^32-1 (32-bit words)', bytes: Uint8Array.from([...new Uint8Array(new Uint32Array([0, 3, 0, 10000, 0, 1, 0xffffffff, 0x1000]).buffer)]) });
      const frames = new Uint32Array(2 + FRAMES + 3);
      frames.set([1, FRAMES], 0);
      frames.fill(0x1000, 2, 2 + FRAMES);
      frames.set([0, 1, 0], 2 + FRAMES); // end marker
      out.push({ name: 'cpu: 150k-frame record', bytes: concat([new Uint8Array(new Uint32Array([0, 3, 0, 10000, 0]).buffer), new Uint8Array(frames.buffer)]) });
      out.push({ name: 'cpu: gzip bomb', bytes: gzipBomb(new Uint8Array(new Uint32Array([0, 3, 0, 10000, 0]).buffer), 0, GZIP_OUT) });
      break;
    }
    case 'gperftools-contention':
      out.push({ name: 'contention: 150k frames', bytes: enc('--- contention:\nsampling period = 10\n3000 4 @' + ' 0x1'.repeat(FRAMES) + '\n') });
      out.push({ name: 'contention: 1.1M records', bytes: enc('--- contention:\nsampling period = 10\n' + '3000 4 @ 0x1\n'.repeat(SAMPLES)) });
      out.push({ name: 'contention: gzip bomb of records', bytes: gzipBombOf('--- contention:\nsampling period = 10\n', '3000 4 @ 0x1 0x2\n', GZIP_OUT) });
      break;
    case 'gperftools-thread':
      out.push({ name: 'thread: 150k frames', bytes: enc('--- threadz 1 ---\n\n--- Thread 7f794ab90940 (name: main/14748) stack: ---\n' + '  0x0040be31: main\n'.repeat(FRAMES)) });
      out.push({ name: 'goroutine: 150k frames', bytes: enc('goroutine profile: total 1\n1 @' + ' 0x44cb3'.repeat(FRAMES) + '\n') });
      out.push({ name: 'threadcreate: 1.1M records', bytes: enc('threadcreate profile: total 1100000\n' + '1 @ 0x44cb3 0x45045\n'.repeat(SAMPLES)) });
      break;
    case 'gperftools-maps':
      out.push({ name: 'maps: 2 MiB path', bytes: enc('00400000-00452000 r-xp 00000000 08:02 1 /' + 'a'.repeat(BIG_STRING) + '\n') });
      out.push({ name: 'maps: 64-bit overflow', bytes: enc('ffffffffffffffffff-1 r-xp fffffffffffffffffffff 08:02 1 /x\n') });
      break;
    case 'fuchsia-jsonl':
      out.push({ name: 'jsonl: 1M-deep nesting', bytes: enc('{"method":"RecordAllocation","stack_trace":' + '['.repeat(1_000_000) + ']'.repeat(1_000_000) + '}\n') });
      out.push({ name: 'jsonl: 150k frames', bytes: enc(`{"method":"SetProcessInfo","process_name":"x","module_map":[]}\n{"method":"RecordAllocation","address":"0x10","size":1,"stack_trace":[${Array(FRAMES).fill('"0x1"').join(',')}]}\n`) });
      out.push({ name: 'jsonl: 2 MiB process name', bytes: enc(`{"method":"SetProcessInfo","process_name":"${'a'.repeat(BIG_STRING)}","module_map":[]}\n`) });
      break;
    case 'v8-cpuprofile': {
      const root = '{"id":1,"callFrame":{"functionName":"(root)"},"children":[2]}';
      const chain = (n: number) => Array.from({ length: n }, (_, i) => `{"id":${i + 2},"callFrame":{"functionName":"f"}${i + 1 < n ? `,"children":[${i + 3}]` : ''}}`).join(',');
      out.push({ name: 'cpuprofile: 150k-deep node chain', bytes: enc(`{"nodes":[${root},${chain(FRAMES)}],"samples":[],"timeDeltas":[]}`) });
      out.push({ name: 'cpuprofile: 1.1M samples', bytes: enc(`{"nodes":[${root},${chain(1)}],"samples":[${Array(SAMPLES).fill(2).join(',')}],"timeDeltas":[${Array(SAMPLES).fill(1).join(',')}]}`) });
      out.push({ name: 'cpuprofile: 2 MiB function name', bytes: enc(`{"nodes":[{"id":1,"callFrame":{"functionName":"${'a'.repeat(BIG_STRING)}"}}],"samples":[],"timeDeltas":[]}`) });
      // 1000 frames x 40k samples = 40M frames, over the default maxTotalFrames (32M), from 200 KB.
      out.push({ name: 'cpuprofile: 40M frames of 40k samples', bytes: enc(`{"nodes":[${root},${chain(1000)}],"samples":[${Array(40_000).fill(1001).join(',')}],"timeDeltas":[${Array(40_000).fill(1).join(',')}]}`) });
      out.push({ name: 'cpuprofile: cycle of children', bytes: enc(`{"nodes":[${root},{"id":2,"callFrame":{},"children":[3]},{"id":3,"callFrame":{},"children":[2]}],"samples":[3],"timeDeltas":[1]}`) });
      break;
    }
    case 'v8-heapprofile': {
      const node = (id: number, children: string) => `{"callFrame":{"functionName":"f"},"selfSize":0,"id":${id},"children":[${children}]}`;
      let deep = '';
      for (let i = FRAMES; i >= 1; i--) deep = node(i, deep);
      out.push({ name: 'heapprofile: 150k-deep nesting', bytes: enc(`{"head":${deep},"samples":[]}`) });
      out.push({ name: 'heapprofile: 1.1M samples', bytes: enc(`{"head":${node(1, '')},"samples":[${Array(SAMPLES).fill('{"size":8,"nodeId":1,"ordinal":1}').join(',')}]}`) });
      break;
    }
    case 'perf-script': {
      const event = 'a 1 1.000001: 1 cycles:\n';
      out.push({ name: 'perf: 150k-frame stack', bytes: enc(event + '\t1 f (/x)\n'.repeat(FRAMES)) });
      out.push({ name: 'perf: 1.1M samples', bytes: enc('a 1 1.0: c:\n\n'.repeat(SAMPLES)) });
      out.push({ name: 'perf: 2 MiB symbol', bytes: enc(`${event}\t1 ${'a'.repeat(BIG_STRING)} (/x)\n`) });
      // No maxTotalFrames input: perf text spends 10+ bytes per frame, so 32M frames take 320 MB of it.
      break;
    }
    case 'speedscope': {
      const file = (frames: string, profile: string) => enc(`{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[${frames}]},"profiles":[${profile}]}`);
      const evented = (events: string) => `{"type":"evented","name":"e","unit":"none","startValue":0,"endValue":1,"events":[${events}]}`;
      out.push({ name: 'speedscope: 150k frames open', bytes: file('{"name":"f"}', evented(Array(FRAMES).fill('{"type":"O","frame":0,"at":0}').join(','))) });
      out.push({ name: 'speedscope: 1.1M samples', bytes: file('{"name":"f"}', `{"type":"sampled","name":"s","unit":"none","startValue":0,"endValue":1,"samples":[${Array(SAMPLES).fill('[0]').join(',')}],"weights":[${Array(SAMPLES).fill(1).join(',')}]}`) });
      out.push({ name: 'speedscope: 2 MiB frame name', bytes: file(`{"name":"${'a'.repeat(BIG_STRING)}"}`, evented('')) });
      break;
    }
    case 'sqlite':
    case 'parquet':
    case 'fuchsia-fidl':
    case 'fuchsia-recording':
      break;
  }
  // Binary targets: every seed with its leading words turned into huge lengths or counts.
  if (['pprof', 'gperftools-cpu', 'fuchsia-fidl', 'fuchsia-recording', 'sqlite', 'parquet'].includes(target)) {
    // Parquet inputs start with a table byte, and each read costs a DuckDB connection: fewer there.
    const n = target === 'parquet' ? 2 : 6;
    seeds.slice(0, n).forEach((s, i) => out.push(...lengthBombs(target === 'parquet' ? s.subarray(1) : s, `${target} seed ${i}`, target === 'sqlite' ? 32 : target === 'parquet' ? 8 : 16).map((x) => (target === 'parquet' ? { ...x, bytes: Uint8Array.from([s[0]!, ...x.bytes]) } : x))));
  }
  return out;
}
