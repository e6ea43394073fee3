import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// The fuzz CLI killed while its executor hangs (the harness-check target's input 3 is an endless
// synchronous loop, so the executor's main thread never sees the IPC channel close): the
// executor must not outlive it. SIGKILL of the CLI: the executor's watchdog thread notices the
// parent pid change and kills it. SIGTERM/SIGINT: the CLI kills it before dying (the watchdog is
// slowed down to 20 minutes there, so only the CLI's handler can have done it), and still dies by
// that signal.

const here = dirname(fileURLToPath(import.meta.url));
const cli = resolve(here, '../dist/cli.js');
const haveProc = existsSync('/proc/self/stat');
const haveCli = existsSync(cli) && existsSync(resolve(here, '../dist/executor.js'));
if (!haveProc) console.warn('fuzz orphan test skipped: needs Linux /proc to find the executor and its CPU time');
if (!haveCli) console.warn(`fuzz orphan test skipped: ${cli} is missing; build tools/fuzz (npx tsc -b tools/fuzz)`);

const tmp = mkdtempSync(join(tmpdir(), 'profkit-fuzz-orphan-'));
const started: ChildProcess[] = [];
/**
 * Executors found: a failed run must not leave one looping (its watchdog may be slowed down to 20
 * minutes). With their start time (/proc stat field 22): once gone, a pid may be another process'.
 */
const executors: { pid: number; startTime: string }[] = [];
afterAll(() => {
  for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const { pid, startTime } of executors) if (alive(pid) && stat(pid)?.[19] === startTime) process.kill(pid, 'SIGKILL');
  rmSync(tmp, { recursive: true, force: true });
});

/** `/proc/<pid>/stat` fields after the command name: [state, ppid, …]; undefined when gone. */
function stat(pid: number): string[] | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return s.slice(s.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** Whether `pid` runs: signal 0 reaches it and it is not a zombie (dead, not yet reaped by an init that may never reap it). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const s = stat(pid);
  return s !== undefined && s[0] !== 'Z' && s[0] !== 'X';
}

const cpuTicks = (pid: number) => {
  const s = stat(pid);
  return s ? Number(s[11]) + Number(s[12]) : NaN;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Generous bound of every wait below. It only keeps a broken build from hanging the suite: what
 * the tests check never depends on how fast a loaded machine runs the processes. (30 s was not
 * enough for the CLI and its executor to start and run inputs 0-2 beside 5 CPU burners and the
 * harness test's executor on 2 cores.)
 */
const HANG_GUARD_MS = 120_000;

/** Polls `done` until it holds; fails after HANG_GUARD_MS naming `what`. */
async function until(done: () => boolean, what: string): Promise<void> {
  const end = Date.now() + HANG_GUARD_MS;
  while (!done()) {
    if (Date.now() > end) throw new Error(`${what} (waited ${HANG_GUARD_MS} ms)`);
    await sleep(25);
  }
}

/** The CLI's child (the executor), once it exists. */
async function executorOf(parent: number): Promise<number> {
  let executor: number | undefined;
  await until(() => {
    executor = readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number).find((pid) => stat(pid)?.[1] === String(parent));
    return executor !== undefined;
  }, `the fuzz CLI (pid ${parent}) started no executor`);
  executors.push({ pid: executor!, startTime: stat(executor!)?.[19] ?? '' });
  return executor!;
}

/** CPU time (ticks) the executor must burn after input 2 to be in input 3's loop: nothing else is left to compute. */
const LOOP_EVIDENCE_TICKS = 20;

/**
 * Waits until the executor runs input 3, the endless loop. Inputs run in order and the CLI saves
 * input 2 (an untyped exception) as a crasher before it sends input 3; after input 2's result the
 * executor only waits for its next message, so from then on CPU time it burns is the loop's.
 * Counted in CPU time, not wall time: a starved executor just takes longer to show it.
 */
async function waitForHang(executor: number, crashes: string): Promise<void> {
  const saved = join(crashes, 'harness-check');
  await until(() => existsSync(saved) && readdirSync(saved).some((f) => /^exception-.*\.json$/.test(f)), `the fuzz CLI saved no crasher for input 2 in ${saved}`);
  const after2 = cpuTicks(executor);
  await until(() => cpuTicks(executor) - after2 >= LOOP_EVIDENCE_TICKS, `executor ${executor} did not burn ${LOOP_EVIDENCE_TICKS} ticks of CPU in input 3's endless loop`);
}

/** Waits until `pid` is gone; fails naming it after HANG_GUARD_MS (an orphaned executor loops forever). */
async function gone(pid: number, what: string): Promise<void> {
  await until(() => !alive(pid), what);
}

function startCli(env: NodeJS.ProcessEnv): { child: ChildProcess; crashes: string; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> } {
  // A crasher folder per run: waitForHang looks for the crasher this run saved.
  const crashes = mkdtempSync(join(tmp, 'crashes-'));
  const child = spawn(process.execPath, [cli, '--target', 'harness-check', '--execs', '0', '--no-special', '--no-coverage', '--timeout', '120000', '--json', '--crashes', crashes], {
    stdio: 'ignore',
    env: { ...process.env, ...env },
  });
  started.push(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((ok) => child.on('exit', (code, signal) => ok({ code, signal })));
  return { child, crashes, exited };
}

describe.skipIf(!haveProc || !haveCli)('fuzz CLI killed while its executor hangs', () => {
  // Not "within about a second" (the watchdog polls every 200 ms) but within HANG_GUARD_MS: how
  // soon a starved watchdog thread runs is the machine's business; without it the loop never ends.
  // (The SIGTERM/SIGINT runs slow the watchdog to 10 x HANG_GUARD_MS, beyond all their waits.)
  it('SIGKILL: the executor kills itself', { timeout: 4 * HANG_GUARD_MS }, async () => {
    const { child, crashes, exited } = startCli({});
    const executor = await executorOf(child.pid!);
    await waitForHang(executor, crashes);
    child.kill('SIGKILL');
    expect(await exited).toEqual({ code: null, signal: 'SIGKILL' });
    await gone(executor, `executor ${executor} outlived its SIGKILLed parent`);
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal}: the CLI kills the executor, then dies by ${signal}`, { timeout: 4 * HANG_GUARD_MS }, async () => {
      // The parent watchdog polls every 10 x HANG_GUARD_MS, after the test's last wait ended: only the CLI can kill it in time.
      const { child, crashes, exited } = startCli({ PROFKIT_FUZZ_PARENT_POLL_MS: String(10 * HANG_GUARD_MS) });
      const executor = await executorOf(child.pid!);
      await waitForHang(executor, crashes);
      child.kill(signal);
      expect(await exited).toEqual({ code: null, signal });
      await gone(executor, `executor ${executor} outlived the CLI killed by ${signal}`);
    });
  }
});
