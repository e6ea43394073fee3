/**
 * An id field read twice in one message: Go's decoder keeps the last value, also when the first
 * was above 2^32-1 (which profkit renumbers). `go tool pprof -raw` (Go 1.19) reads each of these
 * profiles: the sample's location 3 (its id read last), line function 4, mapping 2.
 * Strings: 0 '', 1 samples, 2 count, 3 f.
 */

import { describe, expect, it } from 'vitest';
import { decodeProfile } from '../src/codec.js';
import { pb, str, type Field } from './helpers.js';

const STRINGS: Field[] = ['', 'samples', 'count', 'f'].map((s) => [6, str(s)] as Field);
const BIG = 0x100000005n;

describe('an id read twice in one message: the last one counts, as in Go', () => {
  it('location id: above 2^32-1, then 3', () => {
    const { profile } = decodeProfile(
      pb([[1, [[1, 1], [2, 2]]], [2, [[1, { packed: [3] }], [2, 3]]], [4, [[1, BIG], [1, 3], [4, [[1, 1], [2, 7]]]]], [5, [[1, 1], [2, 3]]], ...STRINGS]),
    );
    expect([...profile.locations.location_id]).toEqual([3]);
    expect([...profile.samples.locations.location_id]).toEqual([3]);
  });

  it('function id: above 2^32-1, then 4', () => {
    const { profile } = decodeProfile(
      pb([[1, [[1, 1], [2, 2]]], [2, [[1, { packed: [1] }], [2, 3]]], [4, [[1, 1], [4, [[1, 4], [2, 7]]]]], [5, [[1, BIG], [1, 4], [2, 3]]], ...STRINGS]),
    );
    expect([...profile.functions.function_id]).toEqual([4]);
    expect([...profile.locations.function_id]).toEqual([4]);
  });

  it('mapping id: above 2^32-1, then 2; and a location\'s mapping id: above 2^32-1, then 2', () => {
    const mapping = (ids: (number | bigint)[]): Field => [3, [...ids.map((id) => [1, id] as Field), [2, 0x1000], [3, 0x2000], [5, 3]]];
    const location = (mappingIds: (number | bigint)[]): Field => [4, [[1, 1], ...mappingIds.map((id) => [2, id] as Field), [3, 0x1800], [4, [[1, 4], [2, 7]]]]];
    for (const [m, l] of [
      [mapping([BIG, 2]), location([2])],
      [mapping([2]), location([BIG, 2])],
    ]) {
      const { profile, warnings } = decodeProfile(pb([[1, [[1, 1], [2, 2]]], [2, [[1, { packed: [1] }], [2, 3]]], m, l, [5, [[1, 4], [2, 3]]], ...STRINGS]));
      expect([...profile['.mappings'].mapping_id]).toEqual([2]);
      expect([...profile.locations['.mapping_id']]).toEqual([2]);
      expect(warnings).toEqual([]);
    }
  });
});
