/** What the adapter's `load()` returns: the readers and writers of both formats. */

import { ErrorCodes, ProfkitError, concatBytes, limitValue, type AdapterCodec } from '@profkit/core';
import { CPU_FORMAT, HEAP_FORMAT } from './format.js';
import { readCpuProfileChunks } from './read-stream.js';
import { writeCpuProfile } from './write.js';
import { writeHeapProfile } from './heap.js';
import { readHeapProfileChunks } from './heap-stream.js';
import { sniffV8 } from './sniff.js';

function bool(v: unknown, name: string): boolean | undefined {
  if (v === undefined) return undefined;
  if (v === true || v === 'true' || v === '1') return true;
  if (v === false || v === 'false' || v === '0') return false;
  throw new ProfkitError(ErrorCodes.USAGE, `the read option ${name} takes true or false, got ${JSON.stringify(v)}`, { option: name, rule: 'v8 read options' });
}

/** The format of bytes when the caller did not say: by content, a `.cpuprofile` by default. */
function formatOf(bytes: Uint8Array, fileName: string): string {
  const s = sniffV8(bytes.subarray(0, 4096), { fileName });
  return typeof s === 'object' && s.format === HEAP_FORMAT ? HEAP_FORMAT : CPU_FORMAT;
}

/** The first chunks (at least `SNIFF_BYTES` of them unless the input is shorter), and an iterable of all the chunks. */
async function peekChunks(chunks: AsyncIterable<Uint8Array>): Promise<{ head: Uint8Array; all: AsyncIterable<Uint8Array> }> {
  const iterator = chunks[Symbol.asyncIterator]();
  const first: Uint8Array[] = [];
  let length = 0;
  let ended = false;
  while (length < SNIFF_BYTES) {
    const r = await iterator.next();
    if (r.done) {
      ended = true;
      break;
    }
    first.push(r.value);
    length += r.value.length;
  }
  async function* all(): AsyncGenerator<Uint8Array> {
    yield* first;
    first.length = 0;
    if (ended) return;
    for (let r = await iterator.next(); !r.done; r = await iterator.next()) yield r.value;
  }
  return { head: concatBytes(first), all: all() };
}

const SNIFF_BYTES = 4096;

export const codec: AdapterCodec = {
  async read(input, options) {
    // Gzipped input is bounded by maxDecompressedBytes once inflated, not by maxInputBytes.
    const limits = input.gzipped ? { ...options.limits, maxInputBytes: limitValue(options.limits, 'maxDecompressedBytes') } : options.limits;
    const common = { fileName: input.fileName, limits, signal: options.signal };
    // Both formats are read as they stream in (samples can be hundreds of MB); the format is
    // sniffed from the first chunks when the caller did not say.
    let chunks = input.chunks();
    let format = options.format;
    if (format === undefined) {
      const peeked = await peekChunks(chunks);
      format = formatOf(peeked.head, input.fileName);
      chunks = peeked.all;
    }
    if (format === HEAP_FORMAT) {
      return { ...(await readHeapProfileChunks(chunks, { ...common, selfSize: bool(options.options?.selfSize, 'selfSize') })), format };
    }
    return { ...(await readCpuProfileChunks(chunks, { ...common, onProgress: options.onProgress })), format: CPU_FORMAT };
  },
  async write(profile, options) {
    const common = { streaming: options.streaming, signal: options.signal };
    return options.format === HEAP_FORMAT ? writeHeapProfile(profile, common) : writeCpuProfile(profile, common);
  },
};
