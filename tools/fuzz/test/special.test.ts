import { describe, expect, it } from 'vitest';
import { isProfkitError } from '@profkit/core/node';
import { makeTarget, specialInputs, type TargetName } from '../src/index.js';

// The hostile inputs that must hit a specific limit under the fuzzer's limits (FUZZ_LIMITS):
// the error is PROFKIT_E_LIMIT and names the option that raises it.
const expected: [TargetName, string, string][] = [
  ['pprof', 'pprof: 150k-frame sample', 'maxFramesPerStack'],
  ['pprof', 'pprof: 2 MiB string', 'maxStringLength'],
  ['pprof', 'pprof: 1.1M samples', 'maxSamples'],
  ['pprof', 'pprof: gzip bomb', 'maxDecompressedBytes'],
  // issue 15: gzips of millions of empty entries of each repeated field
  ...(['string-table entries', 'locations', 'functions', 'mappings'] as const).map((t): [TargetName, string, string] => ['pprof', `pprof: 3000000 empty ${t}`, 'maxTableEntries']),
  ...(['comments', 'packed comments', 'labels of one sample', 'labels over 3000 samples', 'lines over 3000 locations'] as const).map((t): [TargetName, string, string] => ['pprof', `pprof: 3000000 ${t}`, 'maxTableEntries']),
  ['pprof', 'pprof: 1.1M empty string-table entries (raw)', 'maxTableEntries'],
  ['pprof', 'pprof: 3000000 lines of one location', 'maxFramesPerStack'],
  ['pprof', 'pprof: 3000000 empty sample types', 'maxSampleTypes'],
  ['pprof', 'pprof: 20 MiB location of empty lines', 'maxMessageBytes'],
  ['rprof', 'rprof: 150k-frame stack', 'maxFramesPerStack'],
  ['rprof', 'rprof: 2 MiB function name', 'maxStringLength'],
  ['rprof', 'rprof: 1.1M samples', 'maxSamples'],
  ['rprof', 'rprof: gzip bomb of samples', 'maxDecompressedBytes'],
  ['folded', 'folded: 150k-frame stack', 'maxFramesPerStack'],
  ['gperftools-heap', 'heap: 150k-frame stack', 'maxFramesPerStack'],
  ['gperftools-heap', 'heap: 1.1M records', 'maxSamples'],
  ['gperftools-heap', 'heap: gzip bomb', 'maxDecompressedBytes'],
  ['gperftools-cpu', 'cpu: 150k-frame record', 'maxFramesPerStack'],
  ['gperftools-contention', 'contention: 150k frames', 'maxFramesPerStack'],
  ['fuchsia-jsonl', 'jsonl: 150k frames', 'maxFramesPerStack'],
  ['perf-script', 'perf: 150k-frame stack', 'maxFramesPerStack'],
  ['perf-script', 'perf: 1.1M samples', 'maxSamples'],
  ['perf-script', 'perf: 2 MiB symbol', 'maxStringLength'],
  ['speedscope', 'speedscope: 150k frames open', 'maxFramesPerStack'],
  ['speedscope', 'speedscope: 1.1M samples', 'maxSamples'],
  ['speedscope', 'speedscope: 2 MiB frame name', 'maxStringLength'],
  ['v8-cpuprofile', 'cpuprofile: 150k-deep node chain', 'maxFramesPerStack'],
  ['v8-cpuprofile', 'cpuprofile: 1.1M samples', 'maxSamples'],
  ['v8-cpuprofile', 'cpuprofile: 2 MiB function name', 'maxStringLength'],
  ['v8-cpuprofile', 'cpuprofile: 40M frames of 40k samples', 'maxTotalFrames'],
  ['v8-heapprofile', 'heapprofile: 150k-deep nesting', 'maxFramesPerStack'],
  ['v8-heapprofile', 'heapprofile: 1.1M samples', 'maxSamples'],
];

describe('special inputs hit the limit meant for them', () => {
  for (const [target, name, option] of expected) {
    it(`${name} → ${option}`, async () => {
      const input = specialInputs(target).find((s) => s.name === name);
      expect(input, `special input ${name}`).toBeDefined();
      const e = await makeTarget(target).exec(input!.bytes).then(
        (ok) => new Error(`read succeeded: ${ok}`),
        (x: unknown) => x,
      );
      expect(isProfkitError(e) ? `${e.code} ${e.detail.option}` : String(e)).toBe(`PROFKIT_E_LIMIT ${option}`);
      expect((e as Error).message).toContain(option);
    });
  }
});

// Distinct keys longer than V8 hashes (16,383 units), of one length: read as profiles, in the
// fuzzer's time (minutes before the readers' indexes were StringKeyedMaps).
describe('special inputs of long distinct names read as profiles', () => {
  for (const [target, name] of [
    ['folded', 'folded: 1,500 distinct 20 KB names of one length (gzip)'],
    ['gperftools-heap', 'heap: 1,500 distinct rows of 2,501 addresses (gzip)'],
  ] as [TargetName, string][]) {
    it(name, async () => {
      const input = specialInputs(target).find((s) => s.name === name);
      expect(input, `special input ${name}`).toBeDefined();
      expect(await makeTarget(target).exec(input!.bytes)).toMatch(/^ok:samples~2\^11:/);
    }, 30_000);
  }
});

// Inputs the views must read and report (issue 15 items 10-11): the pprof target applies the
// profile's drop_frames (linear-time RE2, so (a+)+ cannot hang it; an invalid one is ignored
// like pprof) and computes `top` of sums beyond int64.
describe('special inputs the pprof target reads and reports', () => {
  for (const name of ['pprof: drop_frames (a+)+ against a 64-char name', 'pprof: invalid drop_frames', 'pprof: values near int64 max', 'pprof: values near int64 min']) {
    it(name, async () => {
      const input = specialInputs('pprof').find((s) => s.name === name);
      expect(input, `special input ${name}`).toBeDefined();
      expect(await makeTarget('pprof').exec(input!.bytes)).toMatch(/^ok:samples~2\^2:types=1:/);
    });
  }
});
