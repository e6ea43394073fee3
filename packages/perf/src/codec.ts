/** What `load()` returns: the reader (perf script text is read only; write with `perf` itself). */

import type { AdapterCodec } from '@profkit/core';
import { readPerfScriptChunks } from './read.js';

export const codec: AdapterCodec = {
  async read(input, options) {
    return readPerfScriptChunks(input.chunks(), {
      fileName: input.fileName,
      limits: options.limits,
      onProgress: options.onProgress,
      signal: options.signal,
    });
  },
};
