/**
 * @profkit/speedscope: speedscope JSON files (schema 0.7: evented and sampled profiles), read
 * and write, lossless where the profile model can hold it. Platform-neutral.
 */

import { defineAdapter } from '@profkit/core';
import { codec } from './codec.js';
import { sniffSpeedscope } from './sniff.js';
import { PACKAGE_VERSION } from './version.js';

export { ADAPTER_NAME, FORMAT_ID, SCHEMA_URL, UNITS, NANOS_IN } from './format.js';
export type { SpeedscopeFile, SpeedscopeFrame, SpeedscopeEvent, SampledProfile, EventedProfile, SpeedscopeUnit, ProfileFacts } from './format.js';
export { sniffSpeedscope } from './sniff.js';
export { readSpeedscopeBytes, type SpeedscopeReadOptions } from './read.js';
export { readSpeedscopeChunks, type SpeedscopeStreamOptions } from './read-stream.js';
export { writeSpeedscope, type SpeedscopeWriteOptions } from './write.js';

export const speedscopeAdapter = defineAdapter({
  name: 'speedscope',
  packageName: '@profkit/speedscope',
  version: PACKAGE_VERSION,
  description: 'speedscope JSON (schema 0.7, evented and sampled profiles), read and write',
  formats: [{ id: 'speedscope', title: 'speedscope JSON', extensions: ['.speedscope.json'], binary: false, read: true, write: true }],
  sniff: sniffSpeedscope,
  // Wins detection over the example adapter (tools/adapter-example-speedscope), which sniffs the same files.
  priority: 1,
  // The codec is imported statically, as @profkit/pprof's is: this module re-exports the reader
  // anyway, and a dynamic import() makes a bundler (esbuild) wrap every module it reaches in a
  // lazy initializer, keeping core's unused top-level code in a browser bundle (tools/browser-check).
  load: async () => codec,
});

export default speedscopeAdapter;
