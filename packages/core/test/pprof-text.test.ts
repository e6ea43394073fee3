/**
 * The sample reports of pprof-text.ts (raw, traces, tags) on bad arguments: their outputs are
 * compared with `go tool pprof` in packages/cli/test/pprof-text-interop.test.ts.
 */

import { describe, expect, it } from 'vitest';
import { ErrorCodes, ProfileBuilder, ProfkitError, tagsReport, tracesReport } from '../src/index.js';

describe('traces and tags reports', () => {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
  b.addSample([b.internLocation({ functionId: b.internFunction({ name: 'f' }), line: 1 })], [1n], [{ key: 'k', str: 'v' }]);
  const p = b.build();

  it.each([
    ['tags', tagsReport],
    ['traces', tracesReport],
  ] as const)('%s: a sample type index out of range is a PROFKIT_E_USAGE error, not a TypeError', (_name, report) => {
    expect(tagsReport(p).keys.map((k) => [k.key, k.total])).toEqual([['k', 1n]]);
    for (const sampleTypeIndex of [1, -1]) {
      let thrown: unknown;
      try {
        report(p, { sampleTypeIndex });
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(ProfkitError);
      expect((thrown as ProfkitError).code).toBe(ErrorCodes.USAGE);
    }
  });
});
