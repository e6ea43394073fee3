#!/usr/bin/env node
// The `profkit` executable. A launcher kept outside dist/ so that npm links the bin even before
// the workspace is built (npm skips bins whose file does not exist yet at install time); the
// real entry is src/bin.cts, compiled to dist/bin.cjs. CommonJS, as that entry: a bundled start
// never sets up Node's ES module loader (docs/performance.md "Twelfth session: CommonJS entry").
'use strict';
try {
  require('../dist/bin.cjs');
} catch (e) {
  // Only dist/bin.cjs itself missing; a module it requires that is missing is a broken build.
  if (e && e.code === 'MODULE_NOT_FOUND' && /dist[\\/]bin\.cjs/.test(String(e.message).split('\n')[0])) {
    process.stderr.write('profkit: @profkit/cli is not built; run `npm run build` (or `npx tsc -b`) first [PROFKIT_E_USAGE]\n');
    process.exitCode = 2;
  } else {
    throw e;
  }
}
