#!/usr/bin/env node
// The `profkit` executable. A launcher kept outside dist/ so that npm links the bin even before
// the workspace is built (npm skips bins whose file does not exist yet at install time); the
// real entry is src/bin.ts, compiled to dist/bin.js.
import('../dist/bin.js').catch((e) => {
  if (e && e.code === 'ERR_MODULE_NOT_FOUND' && String(e.message).includes('dist/bin.js')) {
    process.stderr.write('profkit: @profkit/cli is not built; run `npm run build` (or `npx tsc -b`) first [PROFKIT_E_USAGE]\n');
    process.exitCode = 2;
    return;
  }
  throw e;
});
