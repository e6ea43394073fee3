/** @profkit/v8/node: the main entry plus what reads files (source maps from disk). */

export * from './index.js';
export { default } from './index.js';
export { nodeSourceMapLoader, decodeDataUrl, MAX_SOURCE_MAP_FILE_BYTES } from './source-map-files.js';
