/**
 * Timeouts of 2^31 ms and more: Node's setTimeout fires such a timer after 1 ms (with a
 * TimeoutOverflowWarning), so a huge `timeoutMs` must be capped, not timed out at once.
 */

import { describe, expect, it } from 'vitest';
import { symbolizeRemoteAddresses } from '../src/index.js';
import { LineProcess, MAX_TIMER_DELAY_MS, runLines, timerDelayMs } from '../src/process.js';

/** Longer than any delay setTimeout honours. */
const HUGE_TIMEOUTS = [2 ** 31, 2 ** 40, Number.MAX_SAFE_INTEGER, Infinity];

describe('timeouts of 2^31 ms and more', () => {
  it('timerDelayMs caps at 2^31 - 1 and keeps smaller delays', () => {
    expect(MAX_TIMER_DELAY_MS).toBe(2 ** 31 - 1);
    for (const t of HUGE_TIMEOUTS) expect(timerDelayMs(t)).toBe(2 ** 31 - 1);
    expect(timerDelayMs(60_000)).toBe(60_000);
  });

  for (const timeoutMs of HUGE_TIMEOUTS) {
    it(`remote: a server answering after 30 ms is not timed out with timeoutMs ${timeoutMs}`, async () => {
      // The reply waits for a 30 ms timer; an overflowed deadline timer (1 ms) aborts it first.
      const slowFetch = (async (_url: string, init: RequestInit) => {
        await new Promise((ok) => setTimeout(ok, 30));
        if (init.signal?.aborted) throw init.signal.reason;
        return new Response('0x1000\tmain\n', { status: 200 });
      }) as typeof fetch;
      const names = await symbolizeRemoteAddresses('http://127.0.0.1:1/pprof/symbol', [0x1000n], { timeoutMs, fetch: slowFetch });
      expect(names.get(0x1000n)).toBe('main');
    });
  }

  it('runLines: a tool answering after 100 ms is not timed out with timeoutMs 2^31', async () => {
    const lines: string[] = [];
    await runLines('sh', ['-c', 'sleep 0.1; echo done'], undefined, (l) => lines.push(l), { timeoutMs: 2 ** 31 });
    expect(lines).toEqual(['done']);
  });

  it('LineProcess: a reply after 100 ms is read with timeoutMs Infinity', async () => {
    const tool = new LineProcess('sh', ['-c', 'sleep 0.1; echo reply; cat'], { timeoutMs: Infinity });
    try {
      expect(await tool.readLine()).toBe('reply');
    } finally {
      await tool.close();
    }
  });
});
