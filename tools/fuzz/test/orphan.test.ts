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
// slowed down to a minute there, so only the CLI's handler can have done it), and still dies by
// that signal.

const here = dirname(fileURLToPath(import.meta.url));
const cli = resolve(here, '../dist/cli.js');
const haveProc = existsSync('/proc/self/stat');
const haveCli = existsSync(cli) && existsSync(resolve(here, '../dist/executor.js'));
if (!haveProc) console.warn('fuzz orphan test skipped: needs Linux /proc to find the executor and its CPU time');
if (!haveCli) console.warn(`fuzz orphan test skipped: ${cli} is missing; build tools/fuzz (npx tsc -b tools/fuzz)`);

const tmp = mkdtempSync(join(tmpdir(), 'profkit-fuzz-orphan-'));
const started: ChildProcess[] = [];
afterAll(() => {
  for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
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

/** The CLI's child (the executor), once it exists. */
async function executorOf(parent: number, withinMs: number): Promise<number> {
  const end = Date.now() + withinMs;
  while (Date.now() < end) {
    for (const d of readdirSync('/proc')) {
      if (!/^\d+$/.test(d)) continue;
      if (stat(Number(d))?.[1] === String(parent)) return Number(d);
    }
    await sleep(50);
  }
  throw new Error(`the fuzz CLI (pid ${parent}) started no executor within ${withinMs} ms`);
}

/** Waits until the executor burns CPU without a break (the endless loop), after its start-up. */
async function waitForHang(pid: number, withinMs: number): Promise<void> {
  const t0 = Date.now();
  let busy = 0;
  let last = cpuTicks(pid);
  while (Date.now() - t0 < withinMs) {
    await sleep(250);
    const now = cpuTicks(pid);
    busy = now - last >= 5 ? busy + 1 : 0; // >= 20% of a core in each window
    last = now;
    if (busy >= 3 && Date.now() - t0 >= 1500) return;
  }
  throw new Error(`executor ${pid} did not settle in its endless loop within ${withinMs} ms`);
}

async function goneWithin(pid: number, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (!alive(pid)) return true;
    await sleep(25);
  }
  return !alive(pid);
}

function startCli(env: NodeJS.ProcessEnv): { child: ChildProcess; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> } {
  const child = spawn(process.execPath, [cli, '--target', 'harness-check', '--execs', '0', '--no-special', '--no-coverage', '--timeout', '120000', '--json', '--crashes', tmp], {
    stdio: 'ignore',
    env: { ...process.env, ...env },
  });
  started.push(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((ok) => child.on('exit', (code, signal) => ok({ code, signal })));
  return { child, exited };
}

describe.skipIf(!haveProc || !haveCli)('fuzz CLI killed while its executor hangs', () => {
  it('SIGKILL: the executor kills itself within about a second', { timeout: 20_000 }, async () => {
    const { child, exited } = startCli({});
    const executor = await executorOf(child.pid!, 8000);
    await waitForHang(executor, 8000);
    child.kill('SIGKILL');
    expect(await exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(await goneWithin(executor, 3000)).toBe(true);
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal}: the CLI kills the executor, then dies by ${signal}`, { timeout: 20_000 }, async () => {
      const { child, exited } = startCli({ PROFKIT_FUZZ_PARENT_POLL_MS: '60000' });
      const executor = await executorOf(child.pid!, 8000);
      await waitForHang(executor, 8000);
      child.kill(signal);
      expect(await exited).toEqual({ code: null, signal });
      expect(await goneWithin(executor, 3000)).toBe(true);
    });
  }
});
