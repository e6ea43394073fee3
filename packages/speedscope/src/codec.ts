/** What `load()` returns: read and write (format options documented in docs/formats/speedscope.md). */

import { ErrorCodes, ProfkitError, limitValue, type AdapterCodec } from '@profkit/core';
import { readSpeedscopeChunks } from './read-stream.js';
import { writeSpeedscope } from './write.js';

function optionalString(options: Record<string, unknown> | undefined, key: string): string | undefined {
  const v = options?.[key];
  if (v === undefined) return undefined;
  if (typeof v === 'string' || typeof v === 'number') return String(v);
  throw new ProfkitError(ErrorCodes.USAGE, `the speedscope option ${key} takes a string or number, got ${JSON.stringify(v)}`, { option: key });
}

export const codec: AdapterCodec = {
  async read(input, options) {
    // Gzipped input is bounded by maxDecompressedBytes once inflated, not by maxInputBytes (as in the v8 codec).
    const limits = input.gzipped ? { ...options.limits, maxInputBytes: limitValue(options.limits, 'maxDecompressedBytes') } : options.limits;
    // Read as it streams in: a large file is held as columns of its samples and events, never as its text.
    return readSpeedscopeChunks(input.chunks(), { fileName: input.fileName, limits, profile: optionalString(options.options, 'profile'), signal: options.signal });
  },
  async write(profile, options) {
    return writeSpeedscope(profile, {
      sampleType: optionalString(options.options, 'sampleType'),
      name: optionalString(options.options, 'name'),
      exporter: optionalString(options.options, 'exporter'),
    });
  },
};
