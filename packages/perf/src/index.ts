/**
 * @profkit/perf: Linux `perf script` text (from `perf record -g` / `--call-graph dwarf|fp|lbr`),
 * read into the profile model streaming: user and kernel frames, DSOs as mappings, `[unknown]`
 * frames, inlined frames and `-F +srcline` lines, comm/pid/tid labels, timestamps, one sample
 * type per event. Platform-neutral.
 */

import { defineAdapter } from '@profkit/core';
import { codec } from './codec.js';
import { sniffPerfScript } from './sniff.js';
import { PACKAGE_VERSION } from './version.js';

export { ADAPTER_NAME, FORMAT_ID } from './format.js';
export { sniffPerfScript } from './sniff.js';
export { parseEventLine, parseFrame, parseSrcLine, type EventLine, type FrameLine, type SrcLine } from './grammar.js';
export { PerfScriptParser, readPerfScriptChunks, readPerfScriptBytes, MAX_HEADER_COMMENTS, type PerfReadOptions, type PerfReadResult } from './read.js';

export const perfAdapter = defineAdapter({
  name: 'perf',
  packageName: '@profkit/perf',
  version: PACKAGE_VERSION,
  description: 'Linux `perf script` text (perf record -g / --call-graph): user and kernel frames, DSOs as mappings, inlined frames, one sample type per event; streaming',
  formats: [{ id: 'perf-script', title: 'Linux perf script text', extensions: ['.perf', '.perf-script', '.perf.txt'], binary: false, read: true, write: false }],
  sniff: sniffPerfScript,
  // The codec is imported statically, as @profkit/pprof's is: this module re-exports the reader
  // anyway, and a dynamic import() makes a bundler (esbuild) wrap every module it reaches in a
  // lazy initializer, keeping core's unused top-level code in a browser bundle (tools/browser-check).
  load: async () => codec,
});

export default perfAdapter;
