import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MAX_WALL_FACTOR, remainingMs, sliceOf, threadTimes, type ThreadTimes } from '../src/watchdog.js';

const hasSchedstat = existsSync(`/proc/${process.pid}/task/${process.pid}/schedstat`);

/** Length of a clock tick of /proc's utime and stime: USER_HZ, 100 on every Linux port Node runs on. */
const TICK_MS = 10;

/** utime + stime (ticks) of this process' main thread, from /proc/<pid>/task/<pid>/stat (fields 14, 15). */
function mainThreadTicks(): number {
  const s = readFileSync(`/proc/${process.pid}/task/${process.pid}/stat`, 'utf8');
  const fields = s.slice(s.lastIndexOf(')') + 2).split(' '); // fields from the 3rd (state) on
  return Number(fields[11]) + Number(fields[12]);
}

describe('watchdog clock', () => {
  it('an input whose JS thread computed for a whole timeout hangs, however starved the rest was', () => {
    expect(remainingMs(1000, 1000, { mainCpuMs: 1000, starvedMs: 900 })).toBe(0);
    expect(remainingMs(1000, 3000, { mainCpuMs: 1200, starvedMs: 2500 })).toBe(0);
  });

  it('an input that slept (deadlock, lost await) through the timeout hangs', () => {
    expect(remainingMs(1000, 1000, { mainCpuMs: 5, starvedMs: 0 })).toBe(0);
  });

  it('an input that waited for a CPU gets the time it could not use', () => {
    expect(remainingMs(1000, 1000, { mainCpuMs: 100, starvedMs: 800 })).toBe(800);
    // Looking again later: it had 1000 - 0 ms to run by now, so it hangs.
    expect(remainingMs(1000, 1800, { mainCpuMs: 300, starvedMs: 800 })).toBe(0);
  });

  it('never waits past MAX_WALL_FACTOR timeouts of wall time', () => {
    expect(remainingMs(1000, 1000 * MAX_WALL_FACTOR, { mainCpuMs: 0, starvedMs: 1000 * MAX_WALL_FACTOR })).toBe(0);
    expect(remainingMs(1000, 1000 * MAX_WALL_FACTOR - 100, { mainCpuMs: 0, starvedMs: 1000 * MAX_WALL_FACTOR - 100 })).toBe(100);
  });

  it('takes the longest wait of one thread and the CPU of the main thread', () => {
    const before: ThreadTimes = new Map([
      ['100', { cpu: 1e9, wait: 1e9 }],
      ['101', { cpu: 0, wait: 5e9 }],
    ]);
    const after: ThreadTimes = new Map([
      ['100', { cpu: 1.5e9, wait: 3e9 }],
      ['101', { cpu: 1e8, wait: 8e9 }],
      ['102', { cpu: 1e8, wait: 0.5e9 }],
    ]);
    expect(sliceOf(100, before, after)).toEqual({ mainCpuMs: 500, starvedMs: 3000 });
    // Without /proc readings nothing is forgiven.
    expect(sliceOf(100, undefined, after)).toEqual({ mainCpuMs: 0, starvedMs: 0 });
    expect(remainingMs(1000, 1000, sliceOf(100, undefined, after))).toBe(0);
  });

  it.skipIf(!hasSchedstat)("reads the CPU time of this process' main thread from /proc (skipped: no /proc schedstat, not Linux)", () => {
    // Spins until the kernel's other account of this thread's CPU time (utime + stime of
    // /proc/<pid>/task/<pid>/stat, in ticks) has advanced by SPIN_TICKS, not for a wall-clock time:
    // on a loaded machine 50 ms of wall time gave the thread as little as 11 ms of CPU.
    const SPIN_TICKS = 10;
    const wall0 = performance.now();
    const before = threadTimes(process.pid);
    const ticks0 = mainThreadTicks();
    let x = 0;
    // A synchronous loop: the test's timeout cannot end it, this bound against hangs does.
    const giveUpAt = Date.now() + 60_000;
    while (mainThreadTicks() < ticks0 + SPIN_TICKS) {
      if (++x % 1000 === 0 && Date.now() > giveUpAt) throw new Error(`the main thread's utime + stime did not advance by ${SPIN_TICKS} ticks within 60 s`);
    }
    const after = threadTimes(process.pid);
    const wallMs = performance.now() - wall0;
    expect(x).toBeGreaterThan(0);
    expect(before?.has(String(process.pid))).toBe(true);
    const slice = sliceOf(process.pid, before, after);
    // A tick reading is never ahead of the thread's exact CPU time, and at most 3 ticks behind it
    // (utime and stime are each truncated to ticks, and the kernel adds the running thread's time
    // at its scheduler tick, 1/HZ <= 10 ms): the spin took at least SPIN_TICKS - 3 ticks of CPU.
    expect(slice.mainCpuMs).toBeGreaterThanOrEqual((SPIN_TICKS - 3) * TICK_MS);
    // One thread cannot compute for longer than the wall time around the two readings.
    expect(slice.mainCpuMs).toBeLessThanOrEqual(wallMs);
    expect(slice.starvedMs).toBeGreaterThanOrEqual(0);
    expect(threadTimes(2 ** 22 + 12345)).toBeUndefined();
  });
});
