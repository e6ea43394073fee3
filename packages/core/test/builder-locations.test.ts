/**
 * The builder's location interning by hash and columns (no key string per location): equal
 * locations, however given, are one row; any differing field or inline line makes another; a
 * refused location leaves nothing behind.
 */

import { describe, expect, it } from 'vitest';
import { ErrorCodes, ProfileBuilder, locationRow, type LocationInput } from '../src/index.js';
import { errorCodeOf } from '@profkit/test-utils';

function builder() {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
  const fns = ['a', 'b', 'c'].map((name) => b.internFunction({ name }));
  return { b, fns };
}

describe('ProfileBuilder locations', () => {
  it('one row per distinct location: every field and every inline line tells two apart', () => {
    const { b, fns } = builder();
    const [a, bb, c] = fns as [number, number, number];
    const base: LocationInput = { functionId: a, line: 1, column: 2, address: 0x1000n, mappingId: 0, inlinedInto: [{ functionId: bb, line: 3 }, { functionId: c, line: 4, column: 5 }] };
    const variants: LocationInput[] = [
      { ...base, functionId: bb },
      { ...base, line: 2 },
      { ...base, column: 3 },
      { ...base, address: 0x1000n + (1n << 32n) },
      { ...base, isFolded: true },
      { ...base, inlinedInto: [{ functionId: bb, line: 3 }] },
      { ...base, inlinedInto: [{ functionId: bb, line: 3 }, { functionId: c, line: 4, column: 6 }] },
      { ...base, inlinedInto: [{ functionId: c, line: 4, column: 5 }, { functionId: bb, line: 3 }] },
      { ...base, inlinedInto: [] },
    ];
    const id = b.internLocation(base);
    const ids = variants.map((v) => b.internLocation(v));
    expect(new Set([id, ...ids]).size).toBe(1 + variants.length);
    // Asked again, each gets its id back, whether its inline lines come as objects or as columns.
    expect(b.internLocation({ ...base, line: 1n, address: 0x1000 })).toBe(id);
    variants.forEach((v, k) => {
      const { inlinedInto = [], ...own } = v;
      const columns = { length: inlinedInto.length, functionId: inlinedInto.map((l) => l.functionId), line: inlinedInto.map((l) => Number(l.line ?? 0)), column: inlinedInto.map((l) => Number(l.column ?? 0)) };
      expect(b.internLocationColumns(own, columns)).toBe(ids[k]);
    });
    const p = b.build();
    expect(p.locations.location_id.length).toBe(1 + variants.length);
    expect(locationRow(p, 0).lines).toEqual([
      { functionId: a, line: 1, column: 2 },
      { functionId: bb, line: 3, column: 0 },
      { functionId: c, line: 4, column: 5 },
    ]);
  });

  it('a location refused for an inline line keeps none of its lines', () => {
    const { b, fns } = builder();
    expect(errorCodeOf(() => b.internLocation({ functionId: fns[0], inlinedInto: [{ functionId: fns[1]! }, { functionId: 0 }] }))).toBe(ErrorCodes.RANGE);
    expect(errorCodeOf(() => b.internLocationColumns({ functionId: fns[0] }, { length: 2, functionId: [fns[1]!, 1.5], line: [0, 0], column: [0, 0] }))).toBe(ErrorCodes.RANGE);
    const id = b.internLocation({ functionId: fns[0], inlinedInto: [{ functionId: fns[2]! }] });
    const p = b.build();
    expect(id).toBe(1);
    expect(Array.from(p['.inline_lines'].function_id)).toEqual([fns[2]]);
    expect(Array.from(p.locations['.inline_offsets'])).toEqual([0, 1]);
  });

  it('locations whose inline lines differ by 2^31 in an even number of lines hash apart (no one hash for them whatever the seed)', () => {
    // 4,096 locations of 13 inline lines, line 10 + k or 10 + k + 2^31, an even number of the
    // latter: before each word was mixed with the seed, the bit-31 differences cancelled in the
    // hash and all were one entry, each new location compared with every earlier one.
    const { b, fns } = builder();
    const count = 4096;
    const ids = new Set<number>();
    for (let i = 0; i < count; i++) {
      let parity = 0;
      const inlinedInto = Array.from({ length: 13 }, (_, k) => {
        const high = k < 12 ? (i >> k) & 1 : parity;
        parity ^= high;
        return { functionId: fns[1]!, line: 10 + k + high * 2 ** 31 };
      });
      ids.add(b.internLocation({ functionId: fns[0], line: 1, inlinedInto }));
    }
    expect(ids.size).toBe(count);
    // Entries of the builder's location table (one per distinct hash): 4,096 random 32-bit hashes hardly ever share one.
    const byHash = (b as unknown as { locationsByHash: Map<number, unknown> }).locationsByHash;
    expect(byHash.size).toBeGreaterThan(count - 8);
  });
});
