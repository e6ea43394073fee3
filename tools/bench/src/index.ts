#!/usr/bin/env node
/**
 * profkit benchmark harness. `npm run bench -- <suite> [options]`:
 *
 *   pprof  [--sizes 10000,200000] [--reps 5] [--json FILE] [--no-go]   pprof codecs (pprof.ts)
 *   rprof  read|stream [...]                                            Rprof reader (rprof.ts)
 *
 * Never run by `npm test`; performance is measured here, not in unit tests.
 */

const [suite, ...rest] = process.argv.slice(2);

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
    default:
      process.stderr.write(`usage: npm run bench -- pprof [--sizes N,N] [--reps N] [--json FILE] [--no-go]\n       npm run bench -- rprof read|stream [...]\n`);
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
