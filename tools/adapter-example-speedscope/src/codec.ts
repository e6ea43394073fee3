/**
 * The heavy part of the adapter, loaded on first use by `load()` in index.ts, and the public
 * `profkit-adapter-speedscope/codec` entry for callers who want the functions directly.
 */

import type { AdapterCodec } from '@profkit/core';
import { readSpeedscope } from './read.js';
import { writeSpeedscope } from './write.js';

export const codec: AdapterCodec = {
  read: (input) => readSpeedscope(input),
  write: async (profile) => writeSpeedscope(profile),
};

export { readSpeedscope, speedscopeToProfile, parseSpeedscopeJson, MAX_JSON_BYTES, ADAPTER_NAME } from './read.js';
export { writeSpeedscope, EXPORTER } from './write.js';
