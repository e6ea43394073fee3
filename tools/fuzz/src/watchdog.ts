/**
 * The per-input watchdog's clock. A hang is an input the executor cannot finish although it
 * could run: on a shared machine (a niced fuzzer next to a benchmark at `nice -n -10`) the
 * executor may wait seconds for a CPU, and a wall-clock deadline then reports healthy inputs as
 * hangs (a 118 ms Parquet input was saved as a 10 s "timeout" that way). So the deadline counts
 * wall time minus the time the executor's threads spent runnable but waiting for a CPU, which
 * Linux reports per thread in `/proc/<pid>/task/<tid>/schedstat` (second field, ns). Time spent
 * sleeping (a deadlock, an await that never resolves) still counts: only starvation is
 * forgiven, and never beyond `MAX_WALL_FACTOR` times the timeout.
 */

import { readdirSync, readFileSync } from 'node:fs';

/** However starved, an input is a hang after this many timeouts of wall time. */
export const MAX_WALL_FACTOR = 6;

/** CPU time and run-queue wait (ns) of each thread of a process, by thread id. */
export type ThreadTimes = Map<string, { cpu: number; wait: number }>;

/** `ThreadTimes` of `pid`, or `undefined` where /proc has no schedstat (not Linux). */
export function threadTimes(pid: number): ThreadTimes | undefined {
  try {
    const times: ThreadTimes = new Map();
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const [cpu, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').trim().split(/\s+/).map(Number);
        if (Number.isFinite(cpu) && Number.isFinite(wait)) times.set(tid, { cpu: cpu!, wait: wait! });
      } catch {
        // The thread ended between the listing and the read.
      }
    }
    return times.size > 0 ? times : undefined;
  } catch {
    return undefined;
  }
}

/** What happened in the executor between two `threadTimes` readings, in ms. */
export interface Slice {
  /** CPU time of the main (JS) thread: an endless loop shows here, starved or not. */
  mainCpuMs: number;
  /**
   * The longest run-queue wait of one thread. For one input the threads mostly take turns (JS
   * waits on DuckDB's or zlib's thread), so this is a lower bound of the time lost to starvation.
   */
  starvedMs: number;
}

export function sliceOf(pid: number, before: ThreadTimes | undefined, after: ThreadTimes | undefined): Slice {
  if (!before || !after) return { mainCpuMs: 0, starvedMs: 0 };
  let most = 0;
  for (const [tid, t] of after) {
    const delta = t.wait - (before.get(tid)?.wait ?? 0);
    if (delta > most) most = delta;
  }
  const main = String(pid);
  const mainCpu = (after.get(main)?.cpu ?? 0) - (before.get(main)?.cpu ?? 0);
  return { mainCpuMs: mainCpu / 1e6, starvedMs: most / 1e6 };
}

/**
 * What the watchdog does when its timer fires after `elapsedMs` of wall time: `0` = the input
 * hangs (its JS thread computed for a whole timeout, or it had a timeout's worth of time to run,
 * or the wall-time cap is reached); otherwise the ms to wait before looking again.
 */
export function remainingMs(timeoutMs: number, elapsedMs: number, slice: Slice): number {
  const cap = timeoutMs * MAX_WALL_FACTOR;
  if (elapsedMs >= cap || slice.mainCpuMs >= timeoutMs) return 0;
  const couldRun = elapsedMs - slice.starvedMs;
  if (couldRun >= timeoutMs) return 0;
  return Math.max(1, Math.min(timeoutMs - couldRun, cap - elapsedMs));
}
