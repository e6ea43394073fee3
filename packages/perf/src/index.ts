/**
 * @profkit/perf: Linux `perf script` text (from `perf record -g` / `--call-graph dwarf|fp|lbr`),
 * read into the profile model streaming: user and kernel frames, DSOs as mappings, `[unknown]`
 * frames, inlined frames and `-F +srcline` lines, comm/pid/tid labels, timestamps, one sample
 * type per event. Platform-neutral.
 */

import { defineAdapter } from '@profkit/core';
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
  load: async () => (await import('./codec.js')).codec,
});

export default perfAdapter;
