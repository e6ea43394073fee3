/**
 * What `#node-source-maps` resolves to on Node (package.json `imports`;
 * `source-map-files-unavailable.ts` elsewhere): the loader, which loads `source-map-files.ts`
 * (files) on its first call, so reading a profile loads no file-reading code.
 * source-maps-transform.ts imports this module statically: a dynamic import() there would make a
 * browser bundler (esbuild) wrap every module it reaches, core included, in a lazy initializer
 * that keeps their unused code (tools/browser-check).
 */

import type { SourceMapLoader } from './source-maps.js';

export const nodeSourceMapLoader: SourceMapLoader = async (scriptUrl) => (await import('./source-map-files.js')).nodeSourceMapLoader(scriptUrl);
