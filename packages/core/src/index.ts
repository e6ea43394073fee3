/**
 * @profkit/core: the profile data model, builder, views, validator, operations, the adapter
 * contract and registry, and shared I/O (bytes, Blobs and streams; gzip through the seam in
 * `gzip.ts`). Platform-neutral: nothing here imports Node. Files, stdin, atomic writes and adapter
 * discovery are in `@profkit/core/node` (`node/index.ts`).
 */
export * from './model.js';
export * from './errors.js';
export * from './columns.js';
export * from './create.js';
export * from './builder.js';
export * from './views.js';
export * from './io.js';
/** Byte helpers that are native on Node (`Buffer`, node:zlib) and portable elsewhere: the `#native` seam. */
export { utf8Decoder, utf8Length, crc32, allocUninitialized, latin1String } from '#native';
export { GZIP_IMPLEMENTATION, MAX_ANNOUNCED_INFLATE_RATIO, concatBytes, gunzipChunks, gzipBytes, gzipChunks, gzipStream, gzipBound, inflateBufferSize, prepareDeflateAhead, startDeflateAhead, startDeflateAheadOfArriving, type ArrivingDeflateAhead, type DeflateAhead } from './gzip.js';
export * from './limits.js';
export * from './lines.js';
export * from './json-fields.js';
export * from './json-stream.js';
export * from './adapter.js';
export * from './ops/index.js';
export { MAX_SOURCE_FILE_LINES, listReportText } from './ops/source.js';
export * from './ops/report.js';
export * from './flame/index.js';
export * from './dump.js';
export * from './pprof-text.js';
export * from './report-text.js';
export { StringKeyedMap, StringKeys } from './string-keys.js';
export * from './dot.js';
export * from './schema.js';
export type { Shape, ShapeIssue, ShapeResult } from './shape.js';
export type { AbortSignalLike, BlobLike, PlatformAbortSignal, PlatformURLSearchParams, ReadableStreamLike, URLSearchParamsLike } from './web-types.js';
export * from './validate.js';
export * from './registry.js';
export * from './sniff-util.js';
export * from './known-formats.js';
export * from './symbolz.js';
export * from './redirects.js';
export * from './net.js';
export * from './transform.js';
export * from './wasm.js';
