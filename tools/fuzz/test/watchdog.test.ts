import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MAX_WALL_FACTOR, remainingMs, sliceOf, threadTimes, type ThreadTimes } from '../src/watchdog.js';

const hasSchedstat = existsSync(`/proc/${process.pid}/task/${process.pid}/schedstat`);

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
    const before = threadTimes(process.pid);
    const until = Date.now() + 50;
    let x = 0;
    while (Date.now() < until) x++;
    const after = threadTimes(process.pid);
    expect(x).toBeGreaterThan(0);
    expect(before?.has(String(process.pid))).toBe(true);
    const slice = sliceOf(process.pid, before, after);
    expect(slice.mainCpuMs).toBeGreaterThanOrEqual(20);
    expect(slice.starvedMs).toBeGreaterThanOrEqual(0);
    expect(threadTimes(2 ** 22 + 12345)).toBeUndefined();
  });
});
