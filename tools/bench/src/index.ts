#!/usr/bin/env node
/**
 * profkit benchmark harness. `npm run bench -- <suite> [options]`:
 *
 *   pprof  [--sizes 10000,200000] [--reps 5] [--json FILE] [--no-go]   pprof codecs (pprof.ts)
 *   rprof  read|stream [...]                                            Rprof reader (rprof.ts)
 *   startup [--runs 5] [--lines 166000] [--json FILE]                  CLI start-up vs node -e 0 and R (startup.ts)
 *   views  [--sizes 20000,200000] [--1m] [--runs 1] [--json FILE] [--markdown FILE] [--no-go] [--no-browser] [--only ...]
 *                                                                       whole-process views vs go tool pprof (views.ts)
 *   repeated [--samples 2000000] [--stacks 5000] [--locations 100] [--labels 4] [--runs 3] [--keep FILE]
 *                                                                       views of a profile whose stacks repeat, with and without aggregate (repeated.ts)
 *   symbolize [--functions N --addresses M --tools ...]                 symbolizer (symbolize.ts)
 *   dm-export [SAMPLES] [--json]                                        SQLite/Parquet/CSV/SQL export (scripts/dm-export.mjs)
 *   model [FILE...]                                                     model size vs raw pprof (scripts/model-size.mjs)
 *   fuchsia [EVENTS] [CLIENTS] [channel1|channel2|socket] [tcp|unix] [pprof]
 *                                                                       Fuchsia collector load test (scripts/fuchsia-loadtest.mjs)
 *
 * Never run by `npm test`; performance is measured here, not in unit tests.
 */

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const [suite, ...rest] = process.argv.slice(2);

/** Runs a benchmark that is its own program (it parses its own arguments) in a child process. */
function runScript(relativePath: string): number {
  const script = fileURLToPath(new URL(relativePath, import.meta.url));
  const r = spawnSync(process.execPath, [script, ...rest], { stdio: 'inherit' });
  return r.status ?? 1;
}

async function main(): Promise<number> {
  switch (suite) {
    case 'pprof': {
      const { runPprofBench } = await import('./pprof.js');
      return runPprofBench(rest);
    }
    case 'rprof': {
      const { runRprofBench } = await import('./rprof.js');
      await runRprofBench(rest);
      return 0;
    }
    case 'startup': {
      const { runStartupBench } = await import('./startup.js');
      await runStartupBench(rest);
      return 0;
    }
    case 'views': {
      const { runViewsBench } = await import('./views.js');
      return runViewsBench(rest);
    }
    case 'repeated': {
      const { runRepeatedBench } = await import('./repeated.js');
      return runRepeatedBench(rest);
    }
    case 'symbolize':
      return runScript('./symbolize.js');
    case 'dm-export':
      return runScript('../scripts/dm-export.mjs');
    case 'fuchsia':
      return runScript('../scripts/fuchsia-loadtest.mjs');
    case 'model':
      return runScript('../scripts/model-size.mjs');
    default:
      process.stderr.write(
        'usage: npm run bench -- pprof [--sizes N,N] [--reps N] [--json FILE] [--no-go]\n' +
          '       npm run bench -- rprof read|stream [...]\n' +
          '       npm run bench -- startup [--runs N] [--lines N] [--json FILE]\n' +
          '       npm run bench -- views [--sizes N,N] [--1m] [--runs N] [--json FILE] [--markdown FILE] [--no-go] [--no-browser] [--only convert,top,...]\n' +
          '       npm run bench -- repeated [--samples N] [--stacks N] [--locations N] [--labels N] [--runs N] [--keep FILE]\n' +
          '       npm run bench -- symbolize [--functions N] [--addresses M] [--tools ...]\n' +
          '       npm run bench -- dm-export [SAMPLES] [--json]\n' +
          '       npm run bench -- model [FILE...]\n' +
          '       npm run bench -- fuchsia [EVENTS] [CLIENTS] [channel1|channel2|socket] [tcp|unix] [pprof]\n',
      );
      return 2;
  }
}

main().then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
