/** Outside Node.js (browsers, workers): source maps cannot be read from disk. */

import { nodeOnlyError } from '@profkit/core';
import type { SourceMapLoader } from './source-maps.js';

export const MAX_SOURCE_MAP_FILE_BYTES = 256 * 1024 * 1024;

export const nodeSourceMapLoader: SourceMapLoader = () => Promise.reject(nodeOnlyError('reading source maps from files (the source-maps transform)'));

export function decodeDataUrl(): string {
  throw nodeOnlyError('decoding inline source maps from files');
}
