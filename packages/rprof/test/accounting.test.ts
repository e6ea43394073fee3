import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findSampleType, topReport } from '@profkit/core/node';
import { GC_FRAME, rAccounting, rAccountingTransform, readRprofBytes, summarizeRprof } from '../src/index.js';
import { fixturesDir } from './helpers.js';

/** `-top` entries of R's accounting as name -> [self, total] in samples. */
function topOf(p: ReturnType<typeof rAccounting>): Map<string, [number, number]> {
  const t = findSampleType(p, 'samples');
  const rep = topReport(p, { sampleTypeIndex: t, nodeFraction: 0 });
  return new Map(rep.table.entries.map((e) => [e.name, [Number(e.flat), Number(e.cum)]]));
}

describe('rAccounting: a profile whose -top is summaryRprof (grammar.out: GC, memory-only, srcrefs)', () => {
  const p = readRprofBytes(readFileSync(join(fixturesDir, 'grammar.out'))).profile;
  const s = summarizeRprof(p);

  it('per function: <GC> innermost, samples without functions left out; the same tables as summarizeRprof', () => {
    const q = rAccounting(p);
    const want = new Map([...s.byFunction].map(([k, e]) => [k, [Number(e.self), Number(e.total)]]));
    expect(topOf(q)).toEqual(want);
    expect(q.samples.value.length).toBe(Number(s.samples));
    expect(q.functions.name).toContain(GC_FRAME);
  });

  it('per line (lines = "show"): basename#line entries and <no location>', () => {
    const want = new Map([...s.byLine].map(([k, e]) => [k, [Number(e.self), Number(e.total)]]));
    expect(topOf(rAccounting(p, 'show'))).toEqual(want);
  });

  it('the transform bounds its entries by ctx.limits.maxTableEntries (PROFKIT_E_LIMIT naming the option)', async () => {
    const functions = [...s.byFunction].length;
    expect(functions).toBeGreaterThan(2);
    const base = { stderr: process.stderr, signal: new AbortController().signal, verbose: false };
    const e = await rAccountingTransform.apply(p, { ...base, values: {}, limits: { maxTableEntries: functions - 1 } }).catch((x: unknown) => x);
    expect(e).toMatchObject({ code: 'PROFKIT_E_LIMIT', detail: { option: 'maxTableEntries' } });
    // exactly enough entries passes, and gives the unbounded result
    const r = await rAccountingTransform.apply(p, { ...base, values: {}, limits: { maxTableEntries: functions } });
    expect(topOf(r.profile)).toEqual(topOf(rAccounting(p)));
  });

  it('the transform checks its lines option', async () => {
    const ctx = { values: { lines: 'both' }, stderr: process.stderr, signal: new AbortController().signal, verbose: false };
    await expect(rAccountingTransform.apply(p, ctx)).rejects.toMatchObject({ code: 'PROFKIT_E_USAGE' });
  });
});
