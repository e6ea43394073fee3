/** The heavy part of the adapter, loaded on first use by `load()` in index.ts. */

import type { AdapterCodec } from '@profkit/core';
import { readSpeedscope } from './read.js';
import { writeSpeedscope } from './write.js';

export const codec: AdapterCodec = {
  read: (input) => readSpeedscope(input),
  write: async (profile) => writeSpeedscope(profile),
};
