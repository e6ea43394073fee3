/**
 * @profkit/pprof: the pprof (profile.proto) adapter. The default export (and `pprofAdapter`) is
 * the adapter object; the codec functions are exported for direct use.
 */

import { defineAdapter } from '@profkit/core';
import { codec } from './codec.js';
import { sniff } from './sniff.js';
import { PACKAGE_VERSION } from './version.js';

export const pprofAdapter = defineAdapter({
  name: 'pprof',
  packageName: '@profkit/pprof',
  version: PACKAGE_VERSION,
  description: 'pprof profile.proto (gzip or raw): lossless reader, google/pprof byte-compatible writer',
  formats: [
    {
      id: 'pprof',
      title: 'pprof profile.proto',
      // `.prof` is shared with gperftools CPU profiles: detection decides, not the extension.
      extensions: ['.pb.gz', '.pprof', '.pb', '.prof'],
      binary: true,
      read: true,
      write: true,
      mediaTypes: ['application/vnd.google.protobuf', 'application/octet-stream'],
    },
  ],
  // Also named by package.json's "profkit" metadata, which discovery loads without this module.
  sniff,
  // The codec is imported statically: this module re-exports its functions, so a dynamic
  // import() would load nothing later, yet it makes a bundler (esbuild) wrap every module it
  // reaches in a lazy initializer, which keeps all of core's top-level constants in a browser
  // bundle (12 KB of core + pprof's 120 KB budget: tools/browser-check).
  load: async () => codec,
});

export default pprofAdapter;
export { sniffPprof } from './sniff.js';
export { parsePprof, serializePprof, gzipLikeGo, lossWarnings, kernelRelocationSymbol, decodeProfile, decodeProfileStream, ProfileDecoder, encodeProfile, encodeProfileChunks, GoErrors, EMPTY_NAME, gunzipExact, gzipAnnouncedSize } from './codec.js';
export type { ParseOptions, SerializeOptions, DecodeOptions, DecodeResult, EncodeOptions } from './codec.js';
