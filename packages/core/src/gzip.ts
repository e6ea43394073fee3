/**
 * The gzip seam: every inflate and deflate of the package goes through these functions.
 * `#gzip` is resolved by the package's `imports` map: `gzip-node.ts` (node:zlib) under the `node`
 * condition, `gzip-browser.ts` (pako) everywhere else. Both have the same limits and errors.
 */

export { GZIP_IMPLEMENTATION, gunzipBounded, gunzipHead, inflateHead, gunzipChunks, gzipBytes, gzipChunks, gzipStream, prepareDeflateAhead, startDeflateAhead, startDeflateAheadOfArriving } from '#gzip';
export { DEFAULT_LIMITS, MAX_ANNOUNCED_INFLATE_RATIO, concatBytes, gzipAnnouncedSize, gzipBound, inflateBufferSize, type ArrivingDeflateAhead, type DeflateAhead, type Limits } from './gzip-shared.js';
