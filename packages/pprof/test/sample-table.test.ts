/**
 * The `aggregate` hash table's bounds: whatever the hashes (a crafted input could make them all
 * equal), one lookup compares a bounded number of rows, and rows keep being added.
 */
import { describe, expect, it } from 'vitest';
import { ABSENT, GAVE_UP, SampleTable } from '../src/sample-table.js';

describe('SampleTable', () => {
  it('finds equal rows and adds absent ones', () => {
    const t = new SampleTable();
    const keys = [5, 9, 5, 7, 9, 5];
    const rowsOf: number[] = [];
    const rowKey: number[] = [];
    for (const k of keys) {
      const found = t.lookup(Math.imul(k, 2654435761) >>> 0, (r) => rowKey[r] === k);
      if (found >= 0) rowsOf.push(found);
      else {
        expect(found).toBe(ABSENT);
        rowKey.push(k);
        rowsOf.push(t.add(Math.imul(k, 2654435761) >>> 0, true));
      }
    }
    expect(rowsOf).toEqual([0, 1, 0, 2, 1, 0]);
    expect(t.rows).toBe(3);
  });

  it('compares at most 8 rows per lookup when every sample has the same hash, and still adds them all', () => {
    const t = new SampleTable();
    let compares = 0;
    let maxPerLookup = 0;
    let gaveUp = 0;
    for (let i = 0; i < 20_000; i++) {
      let these = 0;
      const found = t.lookup(42, () => {
        these++;
        return false;
      });
      compares += these;
      maxPerLookup = Math.max(maxPerLookup, these);
      if (found === GAVE_UP) gaveUp++;
      t.add(42, found === ABSENT);
    }
    expect(maxPerLookup).toBe(8);
    expect(compares).toBeLessThanOrEqual(8 * 20_000);
    expect(gaveUp).toBe(20_000 - 8);
    expect(t.rows).toBe(20_000);
  });

  it('visits at most 64 slots per lookup when hashes differ but fall into one cluster', () => {
    const t = new SampleTable();
    let visits = 0;
    // Hashes 0, 1024, 2048, ...: the same slot of the first 1,024 slots.
    for (let i = 0; i < 5_000; i++) {
      const found = t.lookup(i * 1024, () => {
        visits++;
        return false;
      });
      t.add(i * 1024, found === ABSENT);
    }
    // Distinct hashes are never compared: the bound is on the slots, and lookups end.
    expect(visits).toBe(0);
    expect(t.rows).toBe(5_000);
  });
});
