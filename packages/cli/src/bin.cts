#!/usr/bin/env node
// The CLI's entry, a CommonJS module (as fast-start.cts): a bundled start then never sets up Node's
// ES module loader (~4 ms of every start's CPU; docs/performance.md "Twelfth session: CommonJS
// entry"). The unbundled start imports dist/cli.js, an ES module, as before. dist/bin.js forwards
// here for whoever runs that path.
import { discoveryCacheFiles, startBundle, whenStdoutCreated } from './fast-start.cjs';

async function run(): Promise<void> {
  // Writes to stdout go through CommandStdout (stdout.ts), which reports a failed write (a full
  // disk, a closed pipe) as the command's error; the stream's own 'error' event must not crash
  // the process with a stack trace on top of that. Attached when the stream is first used: a
  // command that never uses it does not pay for making it.
  whenStdoutCreated((stdout) => stdout.on('error', () => undefined));

  // The start-up bundle when it is built and matches the installed files (fast-start.cts), else
  // the modules as tsc wrote them.
  const bundle = startBundle(process.argv.slice(2));
  const { main } = bundle ?? (await import('./cli.js'));
  // Discovery remembers what it found in each node_modules folder (checked before use; fast-start.cts).
  process.exitCode = await main(process.argv.slice(2), { handleSignals: true, discoveryCache: discoveryCacheFiles() });
  bundle?.saveCodeCache();
  // Once nothing is left to do ('beforeExit': pending writes, to a slow pipe too, keep the event
  // loop alive until they are done), exit at once instead of through Node's teardown of the
  // environment, which frees the heap piece by piece: 17–28 ms after the last output of a
  // 200,000-sample convert (strace, its success line to exit_group), against 4 ms.
  process.once('beforeExit', () => process.exit());
}

// A failure here is a bug (main reports every error itself): an unhandled rejection, which
// prints it and exits 1, as the ES module entry's top-level await did.
void run();
