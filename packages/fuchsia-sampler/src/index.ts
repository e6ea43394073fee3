/**
 * @profkit/fuchsia-sampler: Fuchsia's `fuchsia.memory.sampler` protocol from FIDL wire bytes to
 * heap profiles, recordings (binary `.fsrec` and JSON Lines), and a live collector.
 *
 * The default (and named) export `fuchsiaSampler` is the adapter object. The library API
 * (codec, state machine, server, client) is exported as well.
 */

import { defineAdapter, type AdapterCodec } from '@profkit/core';
import { read, write } from './codec.js';
import { sniff } from './sniff.js';
import { commands } from './command-defs.js';
import { PACKAGE_VERSION } from './version.js';

export const fuchsiaSampler = defineAdapter({
  name: 'fuchsia-sampler',
  packageName: '@profkit/fuchsia-sampler',
  version: PACKAGE_VERSION,
  description: "Fuchsia memory sampler (fuchsia.memory.sampler) recordings: six heap sample types, mappings with build ids",
  formats: [
    { id: 'fuchsia-sampler', title: 'Fuchsia memory sampler recording (framed FIDL messages)', extensions: ['.fsrec'], binary: true, read: true, write: true },
    { id: 'fuchsia-sampler-jsonl', title: 'Fuchsia memory sampler recording (JSON Lines)', extensions: ['.fsrec.jsonl'], binary: false, read: true, write: true },
  ],
  sniff,
  // The codec is imported statically, as @profkit/pprof's is: this module re-exports codec.js's
  // functions anyway, and a dynamic import() makes a bundler (esbuild) wrap every module it
  // reaches in a lazy initializer, keeping core's unused top-level code in a browser bundle
  // (tools/browser-check).
  async load(): Promise<AdapterCodec> {
    return { read, write };
  },
  commands,
});

export default fuchsiaSampler;

export * from './errors.js';
export * from './fidl/wire.js';
export * from './fidl/protocol.js';
export * from './sampler.js';
export * from './profile.js';
export * from './recording.js';
export * from './session.js';
export { replayRecording, replayRecordingChunks, sampledSize, profileToCalls, callsToRecording, callsToJsonl, FORMAT_BINARY, FORMAT_JSONL } from './codec.js';
export type { ReplayOptions, ReplayResult, FuchsiaReadOptions, FuchsiaWriteOptions } from './codec.js';
// The collector load test (src/loadtest.ts) is a workspace tool, not part of the package: see
// tools/bench/scripts/fuchsia-loadtest.mjs.
