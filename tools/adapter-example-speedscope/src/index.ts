/**
 * profkit-adapter-speedscope: an example third-party adapter for the speedscope JSON format
 * (https://www.speedscope.app/file-format-schema.json). It uses only @profkit/core's public API.
 *
 * The default export is the adapter. The descriptor (name, formats, sniff) is tiny; the codec is
 * imported lazily by `load()`, so listing formats or detecting other formats never loads it.
 * The codec's functions are public too, from the `profkit-adapter-speedscope/codec` subpath.
 */

import { defineAdapter } from '@profkit/core';
import { sniffSpeedscope } from './sniff.js';
import { PACKAGE_VERSION } from './version.js';

// Only the light modules are re-exported here: importing the package must not load the codec
// (the read/write functions are available from `profkit-adapter-speedscope/codec`).
export { sniffSpeedscope } from './sniff.js';
export * from './file-format.js';

export const speedscopeAdapter = defineAdapter({
  // Its own name and format id: @profkit/speedscope is the registered `speedscope` format.
  name: 'speedscope-example',
  packageName: 'profkit-adapter-speedscope',
  version: PACKAGE_VERSION,
  description: 'speedscope JSON (sampled and evented profiles); example third-party adapter',
  formats: [
    {
      id: 'speedscope-example',
      title: 'speedscope JSON',
      extensions: ['.speedscope.json'],
      mediaTypes: ['application/json'],
      binary: false,
      read: true,
      // The codec is lazy (`load`), so say explicitly that this format can be written.
      write: true,
    },
  ],
  sniff: sniffSpeedscope,
  load: async () => (await import('./codec.js')).codec,
});

export default speedscopeAdapter;
