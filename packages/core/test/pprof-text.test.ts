/**
 * The sample reports of pprof-text.ts (raw, traces, tags) on bad arguments: their outputs are
 * compared with `go tool pprof` in packages/cli/test/pprof-text-interop.test.ts.
 */

import { thrownBy } from '@profkit/test-utils';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, ProfileBuilder, ProfkitError, READ_LIMITS, dotReport, goPprofLoad, rawReport, tagsReport, tracesReport, tracesReportStream, type Profile } from '../src/index.js';

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

  /**
   * `go tool pprof -traces` prints every inline frame of a sample's locations: n samples over one
   * location of n inline lines are n² frames of text from a profile of O(n) bytes.
   */
  function inlineSquare(n: number): Profile {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const f = b.internFunction({ name: 'f' });
    const inlinedInto = Array.from({ length: n - 1 }, (_, i) => ({ functionId: f, line: i + 2 }));
    const loc = b.internLocation({ functionId: f, line: 1, inlinedInto });
    // Distinct labels, so that loading does not merge the samples into one.
    for (let i = 0; i < n; i++) b.addSample([loc], [1n], [{ key: 'k', num: i }]);
    return b.build();
  }

  it('traces: text over maxReportBytes is a PROFKIT_E_LIMIT error naming the option, made no further', () => {
    const p = inlineSquare(200); // 40,000 frames, about 1 MB of text
    const thrown = thrownBy(() => tracesReport(p, { limits: { maxReportBytes: 100_000 } }));
    expect(thrown).toBeInstanceOf(ProfkitError);
    expect((thrown as ProfkitError).code).toBe(ErrorCodes.LIMIT);
    expect((thrown as ProfkitError).detail).toMatchObject({ option: 'maxReportBytes', limit: 100_000 });
    // The streamed text stops at the limit too, after at most the limit's worth of pieces.
    let streamed = 0;
    const streamError = thrownBy(() => {
      for (const piece of tracesReportStream(p, { limits: { maxReportBytes: 100_000 } }).text()) streamed += piece.length;
    });
    expect((streamError as ProfkitError).detail?.option).toBe('maxReportBytes');
    expect(streamed).toBeLessThanOrEqual(100_000);
    // --json's samples are bounded by the same count.
    const samplesError = thrownBy(() => [...tracesReportStream(p, { limits: { maxReportBytes: 100_000 } }).samples()]);
    expect((samplesError as ProfkitError).detail?.option).toBe('maxReportBytes');
  });

  it('traces: under the limit, the streamed text and samples are those of the whole report', () => {
    const p = inlineSquare(60);
    const whole = tracesReport(p);
    const stream = tracesReportStream(p);
    expect([...stream.text()].join('')).toBe(whole.text);
    expect([...stream.samples()]).toEqual(whole.samples);
    expect(whole.samples.length).toBe(60);
    expect(whole.samples.every((s) => s.frames.length === 60)).toBe(true);
    expect(whole.text.split('\n').filter((l) => l.endsWith('   f (inline)')).length).toBe(60 * 59);
    expect(READ_LIMITS.maxReportBytes).toBeGreaterThan(whole.text.length);
  });

  /** One sample with 8,000 labels `k` naming one 100 KB value: a 148 KB pprof file. */
  function sharedLabelValue(): Profile {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const value = 'v'.repeat(100_000);
    b.addSample([b.internLocation({ functionId: b.internFunction({ name: 'f' }), line: 1 })], [1n], Array.from({ length: 8000 }, () => ({ key: 'k', str: value })));
    return b.build();
  }

  it('loading a sample whose labels share one long value keys them short (was an 800 MB key: RangeError)', async () => {
    const loaded = (await goPprofLoad(sharedLabelValue())).profile;
    expect(loaded.samples.value.length).toBe(1);
    expect(tagsReport(loaded).keys.map((k) => [k.key, k.values.length, k.total])).toEqual([['k', 1, 8000n]]);
  });

  it('traces and raw: a label line longer than the limit is a PROFKIT_E_LIMIT error before it is made', async () => {
    const loaded = (await goPprofLoad(sharedLabelValue())).profile;
    for (const report of [() => tracesReport(loaded), () => rawReport(loaded), () => rawReport(loaded, { limits: { maxReportBytes: 2 ** 31 } })]) {
      const thrown = thrownBy(report);
      expect(thrown).toBeInstanceOf(ProfkitError);
      expect((thrown as ProfkitError).code).toBe(ErrorCodes.LIMIT);
      expect((thrown as ProfkitError).detail.option).toBe('maxReportBytes');
    }
  });

  it('graph: labels too long for one tag are a PROFKIT_E_LIMIT error (was a RangeError at 880 MB); shared labels share their tag', () => {
    const thrown = thrownBy(() => dotReport(sharedLabelValue()));
    expect(thrown).toBeInstanceOf(ProfkitError);
    expect((thrown as ProfkitError).code).toBe(ErrorCodes.LIMIT);
    // 300 samples (distinct stacks) with one label naming one 20 KB value: drawn with the tag.
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const value = 'w'.repeat(20_000);
    const main = b.internLocation({ functionId: b.internFunction({ name: 'main' }), line: 1 });
    for (let i = 0; i < 300; i++) b.addSample([b.internLocation({ functionId: b.internFunction({ name: `f${i}` }), line: 1 }), main], [1n], [{ key: 'k', str: value }]);
    const dot = dotReport(b.build()).text;
    expect(dot).toContain(`k:${value}`);
  });
});

