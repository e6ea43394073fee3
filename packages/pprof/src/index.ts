/**
 * @profkit/pprof: the pprof (profile.proto) adapter. The default export (and `pprofAdapter`) is
 * the adapter object; the codec functions are exported for direct use.
 */

import { defineAdapter } from '@profkit/core';
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
  load: async () => (await import('./codec.js')).codec,
});

export default pprofAdapter;
export { sniffPprof } from './sniff.js';
export { parsePprof, serializePprof, gzipLikeGo, lossWarnings, kernelRelocationSymbol, decodeProfile, decodeProfileStream, ProfileDecoder, encodeProfile, encodeProfileChunks, GoErrors, EMPTY_NAME, gunzipExact, gzipAnnouncedSize } from './codec.js';
export type { ParseOptions, SerializeOptions, DecodeOptions, DecodeResult, EncodeOptions } from './codec.js';
