/** What the adapter's `load()` returns: the readers and writers of both formats. */

import { ErrorCodes, ProfkitError, limitValue, type AdapterCodec } from '@profkit/core';
import { CPU_FORMAT, HEAP_FORMAT } from './format.js';
import { readCpuProfileBytes } from './read.js';
import { writeCpuProfile } from './write.js';
import { readHeapProfileBytes, writeHeapProfile } from './heap.js';
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

export const codec: AdapterCodec = {
  async read(input, options) {
    const bytes = await input.bytes();
    const format = options.format ?? formatOf(bytes, input.fileName);
    // Gzipped input is bounded by maxDecompressedBytes once inflated, not by maxInputBytes.
    const limits = input.gzipped ? { ...options.limits, maxInputBytes: limitValue(options.limits, 'maxDecompressedBytes') } : options.limits;
    const common = { fileName: input.fileName, limits, signal: options.signal };
    if (format === HEAP_FORMAT) return { ...readHeapProfileBytes(bytes, { ...common, selfSize: bool(options.options?.selfSize, 'selfSize') }), format };
    return { ...readCpuProfileBytes(bytes, { ...common, onProgress: options.onProgress }), format: CPU_FORMAT };
  },
  async write(profile, options) {
    const common = { streaming: options.streaming, signal: options.signal };
    return options.format === HEAP_FORMAT ? writeHeapProfile(profile, common) : writeCpuProfile(profile, common);
  },
};
