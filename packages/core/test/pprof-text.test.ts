/**
 * The sample reports of pprof-text.ts (raw, traces, tags) on bad arguments: their outputs are
 * compared with `go tool pprof` in packages/cli/test/pprof-text-interop.test.ts.
 */

import { thrownBy } from '@profkit/test-utils';
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
      const thrown = thrownBy(() => report(p, { sampleTypeIndex }));
      expect(thrown).toBeInstanceOf(ProfkitError);
      expect((thrown as ProfkitError).code).toBe(ErrorCodes.USAGE);
    }
  });

  it('traces: a location with 300,000 inline lines (more than a call takes arguments) is listed, not a RangeError', () => {
    const deep = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const g = deep.internFunction({ name: 'g' });
    const inlinedInto = Array.from({ length: 300_000 }, (_, i) => ({ functionId: g, line: i + 2 }));
    deep.addSample([deep.internLocation({ functionId: deep.internFunction({ name: 'f' }), line: 1, inlinedInto })], [1n]);
    const frames = tracesReport(deep.build()).samples[0]!.frames;
    expect(frames.length).toBe(300_001);
    expect(frames[0]).toEqual({ name: 'f', inline: true });
    expect(frames.at(-1)).toEqual({ name: 'g', inline: false });
  });
});
