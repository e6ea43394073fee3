import { describe, expect, it } from 'vitest';
import { runLoadTest } from '../src/loadtest.js';

// A bounded version of the load test (the 1M-event run is `npm run bench -- fuchsia`): checks that every
// event of every client is accounted for and that each client gets its final profile. No timing
// assertions (performance is measured in the benchmark, not in unit tests).
describe('loopback load (bounded)', () => {
  for (const transport of [2, 'socket'] as const) {
    it(`4 clients, 20k events, transport ${transport}`, async () => {
      const r = await runLoadTest({ clients: 4, events: 20_000, liveSet: 300, stacks: 50, transport, partialThreshold: 40, unix: transport === 'socket' });
      expect(r.summary.errors).toEqual([]);
      expect(r.events).toBe(20_000);
      expect(r.summary.connections).toBe(4);
      // 4 finals plus the partials (each client frees allocations of 50 stacks → partials fire).
      expect(r.profiles).toBeGreaterThan(4);
    });
  }
});
