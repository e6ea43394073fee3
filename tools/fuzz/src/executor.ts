/**
 * Entry point of the forked executor process (see `child.ts`). Coverage, when asked for by the
 * parent (`PROFKIT_FUZZ_COVERAGE=1`), starts before any profkit code is loaded: V8 keeps block
 * counters only for functions compiled after precise coverage started.
 */
import { startCoverage } from './coverage.js';

if (process.env.PROFKIT_FUZZ_COVERAGE === '1') await startCoverage();
const { serveParent } = await import('./child.js');
serveParent();
