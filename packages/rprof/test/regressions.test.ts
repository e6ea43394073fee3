import { describe, expect, it } from 'vitest';
import { ErrorCodes, createRegistry, isProfkitError, type ReadLimits } from '@profkit/core';
import adapter from '../src/index.js';

// Read limits of issue 10 for Rprof and folded input (inputs of tools/fuzz's special set):
// exceeding a limit is PROFKIT_E_LIMIT naming its option, with the line; raising it reads.

const registry = createRegistry([adapter]);
const enc = (s: string) => new TextEncoder().encode(s);

async function outcome(format: string, text: string, limits: ReadLimits) {
  try {
    const r = await registry.read(enc(text), { format, fileName: `x.${format}`, limits });
    return r;
  } catch (e) {
    return e;
  }
}

const HEAD = 'sample.interval=20000\n';
const cases: [string, keyof ReadLimits, string, number][] = [
  ['rprof', 'maxFramesPerStack', HEAD + '"f" '.repeat(40) + '\n', 39],
  ['rprof', 'maxStringLength', HEAD + `"${'a'.repeat(200)}" "main" \n`, 199],
  ['rprof', 'maxSamples', HEAD + '"f" "main" \n'.repeat(30), 29],
  ['folded', 'maxFramesPerStack', 'f;'.repeat(40) + 'g 1\n', 40],
  ['folded', 'maxStringLength', 'main;' + 'a'.repeat(200) + ' 3\n', 199],
  ['folded', 'maxSamples', 'main;f 1\n'.repeat(30), 29],
];

describe('rprof and folded read limits', () => {
  for (const [format, option, text, limit] of cases) {
    it(`${format} ${option}`, async () => {
      const e = await outcome(format, text, { [option]: limit });
      expect(isProfkitError(e) && e.code).toBe(ErrorCodes.LIMIT);
      if (!isProfkitError(e)) return;
      expect(e.detail.option).toBe(option);
      expect(e.message).toContain(option);
      expect(e.detail.line).toBeGreaterThan(0);
      const ok = await outcome(format, text, { [option]: limit + 1 });
      expect(isProfkitError(ok)).toBe(false);
    });
  }

  it('aggregated reads count distinct stacks against maxSamples', async () => {
    const text = HEAD + '"f" "main" \n'.repeat(30) + '"g" "main" \n';
    const r = await registry.read(enc(text), { format: 'rprof', fileName: 'x.out', limits: { maxSamples: 2 }, options: { aggregate: true } });
    expect(r.profile.samples.value.length).toBe(2);
    const e = await registry.read(enc(text + '"h" "main" \n'), { format: 'rprof', fileName: 'x.out', limits: { maxSamples: 2 }, options: { aggregate: true } }).catch((x: unknown) => x);
    expect(isProfkitError(e) && e.detail.option).toBe('maxSamples');
  });
});
