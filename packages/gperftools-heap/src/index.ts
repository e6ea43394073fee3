/**
 * @profkit/gperftools-heap: gperftools' legacy profiles (heap/growth text, binary CPU,
 * contention), plus the Go and Java legacy variants google/pprof reads (Go heap and count
 * profiles, threadz, Java heapz/contentionz/CPU). Readers follow google/pprof's
 * `profile/legacy_profile.go`; writers produce the bytes gperftools writes.
 *
 * The parsers and writers are exported for reuse (the remote-protocol client and server use them).
 */

import { defineAdapter } from '@profkit/core';
import { codec } from './codec.js';
import { sniff } from './sniff.js';
import { remoteCommands } from './remote/command-defs.js';
import { PACKAGE_VERSION } from './version.js';

export { sniff as sniffGperftools } from './sniff.js';
export { ADAPTER_NAME, FORMAT_HEAP, FORMAT_CPU, FORMAT_CONTENTION, FORMAT_THREAD, LEGACY_FORMATS, readLegacy } from './read.js';
export type { LegacyFormat, LegacyReadOptions, LegacyReadResult } from './read.js';
export { writeHeapText, writeCpuProfile, lossWarnings, formatMappedLibraries, formatMapsLine, formatCountsAndSizes, locationAddresses } from './write.js';
export type { HeapKind, HeapWriteOptions, CpuWriteOptions } from './write.js';
export { detectCpuHeader, WORD_FORMATS } from './cpu-header.js';
export type { CpuHeader, WordFormat } from './cpu-header.js';
export { parseMappingEntry, parseProcMaps, isMemoryMapSentinel, removeLoggingInfo } from './mappings.js';
export { scaleHeapSample } from './heap.js';
export { writeContentionText, contentionValues } from './contention.js';
export { writeThreadText, MAX_THREADZ_SECTIONS } from './thread.js';
export type { ThreadWriteKind, ThreadWriteOptions } from './thread.js';
export { ALLOC_DROP_FRAMES, ALLOC_KEEP_FRAMES, CPU_DROP_FRAMES, LOCK_DROP_FRAMES } from './frameinfo.js';
export { symbolUrlFor, formatSymbolRequest, parseSymbolRequest, parseSymbolReply, parseNumSymbols, isUnsymbolizableMapping, locationsToSymbolize, applySymbolReply, SymbolTable } from './remote/symbolz.js';
export type { SymbolReplyEntry } from './remote/symbolz.js';
export { planFetch, programFromCmdline, withRemoteFacts, DEFAULT_SECONDS, DEFAULT_TIMEOUT_SECONDS } from './remote/client.js';
export type { FetchPlan, FetchOptions, FetchResult } from './remote/client.js';
export { isLoopbackHost } from '@profkit/core';
export type { ProfileKind, ProfileRequest, ProfileCallback, ProfileServerOptions } from './remote/server-types.js';
export { fetchCommand, serveCommand, remoteCommands, profileKindOf } from './remote/command-defs.js';

export const gperftoolsHeapAdapter = defineAdapter({
  name: 'gperftools-heap',
  packageName: '@profkit/gperftools-heap',
  version: PACKAGE_VERSION,
  description: 'gperftools legacy profiles: heap/growth text, binary CPU, contention (and Go/Java legacy variants)',
  formats: [
    { id: 'gperftools-heap', title: 'gperftools heap profile (heapprofile, heap_v2, growth; Go legacy heap; Java heapz)', extensions: ['.heap', '.growth'], binary: false, read: true, write: true, mediaTypes: ['text/plain'] },
    { id: 'gperftools-cpu', title: 'gperftools legacy binary CPU profile', extensions: ['.cpu', '.prof'], binary: true, read: true, write: true, mediaTypes: ['application/octet-stream'] },
    { id: 'gperftools-contention', title: 'gperftools/Go legacy contention profile', extensions: ['.contention'], binary: false, read: true, write: true, mediaTypes: ['text/plain'] },
    { id: 'gperftools-thread', title: 'threadz and Go legacy count profiles (goroutine, threadcreate)', extensions: ['.thread', '.threadz'], binary: false, read: true, write: true, mediaTypes: ['text/plain'] },
  ],
  sniff,
  commands: remoteCommands,
  // The codec is imported statically, as @profkit/pprof's is: this module re-exports the readers
  // and writers anyway, and a dynamic import() makes a bundler (esbuild) wrap every module it
  // reaches in a lazy initializer, keeping core's unused top-level code in a browser bundle
  // (tools/browser-check).
  load: async () => codec,
});

export default gperftoolsHeapAdapter;
