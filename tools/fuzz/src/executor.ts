/**
 * Entry point of the forked executor process (see `child.ts`). Coverage, when asked for by the
 * parent (`PROFKIT_FUZZ_COVERAGE=1`), starts before any profkit code is loaded: V8 keeps block
 * counters only for functions compiled after precise coverage started.
 *
 * The executor dies with its parent. When the parent exits, the IPC channel closes and
 * `child.ts`'s 'disconnect' handler ends an idle executor cleanly; but an executor busy in a long
 * synchronous read, or in a hang, never gets to run that handler. So a worker thread, which has
 * its own event loop, watches the parent pid (`process.ppid` changes to the reaper's when the
 * parent dies, even by SIGKILL) and SIGKILLs the process, whatever its main thread is doing.
 */
import { Worker } from 'node:worker_threads';
import { startCoverage } from './coverage.js';

/** How often the watchdog thread looks at the parent pid (ms; `PROFKIT_FUZZ_PARENT_POLL_MS`, default 200). */
const PARENT_POLL_MS = Math.max(10, Number(process.env.PROFKIT_FUZZ_PARENT_POLL_MS) || 200);

function dieWithParent(): void {
  // The parent's pid as the parent said it (set by engine.ts); without it, the parent at startup.
  const said = Number(process.env.PROFKIT_FUZZ_PARENT_PID);
  const parent = Number.isSafeInteger(said) && said > 0 ? said : process.ppid;
  if (process.ppid !== parent) process.kill(process.pid, 'SIGKILL'); // orphaned before we started
  const source = `
    const parent = ${parent};
    const self = ${process.pid};
    setInterval(() => {
      if (process.ppid !== parent) process.kill(self, 'SIGKILL');
    }, ${PARENT_POLL_MS});
  `;
  const watchdog = new Worker(source, { eval: true, resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 2 }, stdout: true, stderr: true });
  // Never what keeps the executor alive: it exits as before when its work is done.
  watchdog.unref();
  watchdog.on('error', (e) => process.stderr.write(`fuzz executor: parent watchdog failed: ${String(e)}\n`));
}

dieWithParent();
if (process.env.PROFKIT_FUZZ_COVERAGE === '1') await startCoverage();
const { serveParent } = await import('./child.js');
serveParent();
