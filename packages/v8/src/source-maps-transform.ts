/**
 * The `source-maps` transform (`profkit convert IN OUT --source-maps`): `applySourceMaps` with
 * the maps found beside the profile's scripts on disk (Node only: the files are read through the
 * `#node-source-maps` import, which loads them on first use; a stand-in elsewhere). Scripts with
 * a map are reported on stderr; broken maps become `PROFKIT_W_V8_SOURCE_MAP` warnings.
 */

import type { AdapterTransform } from '@profkit/core';
import { nodeSourceMapLoader } from '#node-source-maps';
import { applySourceMaps } from './source-maps.js';

export const sourceMapsTransform: AdapterTransform = {
  name: 'source-maps',
  summary: 'map generated JavaScript positions to original sources through source maps (inline or .map files beside the scripts)',
  async apply(profile, ctx) {
    const r = await applySourceMaps(profile, nodeSourceMapLoader, { signal: ctx.signal });
    if (!ctx.quiet) {
      for (const s of r.scripts) {
        if (s.status === 'mapped') ctx.stderr.write(`source-maps: ${s.script}: ${s.mapped} location(s) mapped through ${s.origin}${s.unmapped ? `, ${s.unmapped} not covered by the map` : ''}\n`);
        else if (s.status === 'no-map' && ctx.verbose) ctx.stderr.write(`source-maps: ${s.script}: no source map\n`);
      }
    }
    return { profile: r.profile, warnings: r.warnings };
  },
};
