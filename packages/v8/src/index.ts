/**
 * @profkit/v8: V8/Node.js profiles. `.cpuprofile` (`node --cpu-prof`, Chrome DevTools, VS Code)
 * and `.heapprofile` (`node --heap-prof`, DevTools allocation sampling), read and write, and the
 * `source-maps` transform (`profkit convert IN OUT --source-maps`) that maps generated JavaScript
 * positions to the original sources.
 *
 * This entry is platform-neutral; reading `.map` files from disk is done by the transform on
 * Node only (through the `#node-source-maps` import), and `@profkit/v8/node` exports it.
 */

import { defineAdapter } from '@profkit/core';
import { codec } from './codec.js';
import { sniffV8 } from './sniff.js';
import { sourceMapsTransform } from './source-maps-transform.js';
import { PACKAGE_VERSION } from './version.js';

export { sniffV8 } from './sniff.js';
export { ADAPTER_NAME, CPU_FORMAT, HEAP_FORMAT, ANONYMOUS_NAME, ROOT_NAME, PROGRAM_NAME, IDLE_NAME, GC_NAME } from './format.js';
export type { V8CallFrame, V8CpuProfile, V8CpuProfileNode, V8PositionTick, V8HeapProfile, V8HeapProfileNode, V8HeapSample } from './format.js';
export { readCpuProfileChunks } from './read-stream.js';
export { readCpuProfileBytes, cpuProfileToProfile, CPU_SAMPLE_TYPES, type CpuProfileReadOptions, type CpuProfileReadResult } from './read.js';
export { writeCpuProfile, type CpuProfileWriteOptions } from './write.js';
export { readHeapProfileChunks } from './heap-stream.js';
export { readHeapProfileBytes, heapProfileToProfile, writeHeapProfile, HEAP_SAMPLE_TYPES, type HeapProfileReadOptions, type HeapProfileWriteOptions } from './heap.js';
export { applySourceMaps, parseSourceMappingUrl, type SourceMapLoader, type LoadedSourceMap, type SourceMapsResult } from './source-maps.js';
export { sourceMapsTransform } from './source-maps-transform.js';

export const v8Adapter = defineAdapter({
  name: 'v8',
  packageName: '@profkit/v8',
  version: PACKAGE_VERSION,
  description: 'V8/Node.js profiles: .cpuprofile (node --cpu-prof, Chrome DevTools) and .heapprofile (node --heap-prof); contributes the source-maps transform (`convert --source-maps`)',
  formats: [
    { id: 'v8-cpuprofile', title: 'V8 CPU profile (.cpuprofile JSON)', extensions: ['.cpuprofile'], binary: false, read: true, write: true },
    { id: 'v8-heapprofile', title: 'V8 sampling heap profile (.heapprofile JSON)', extensions: ['.heapprofile'], binary: false, read: true, write: true },
  ],
  sniff: sniffV8,
  // The codec is imported statically, as @profkit/pprof's is: this module re-exports the reader
  // anyway, and a dynamic import() makes a bundler (esbuild) wrap every module it reaches in a
  // lazy initializer, keeping core's unused top-level code in a browser bundle (tools/browser-check).
  load: async () => codec,
  transforms: [sourceMapsTransform],
});

export default v8Adapter;
