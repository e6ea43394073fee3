import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, createRegistry, isProfkitError } from '@profkit/core/node';
import adapter, { FuchsiaErrorCodes as C, callsToRecording, parseJsonlLine, profileToCalls, type SamplerCall } from '../src/node.js';

const dist = join(dirname(fileURLToPath(import.meta.url)), '../dist/index.js');

// Crashers found by tools/fuzz, and the maxFramesPerStack read limit of issue 10.

const registry = createRegistry([adapter]);
const enc = (s: string) => new TextEncoder().encode(s);

describe('fuchsia-sampler regressions', () => {
  it('a JSONL value nested a million levels deep is a typed JSONL error (was: RangeError from JSON.stringify in the message)', () => {
    const line = '{"method":"RecordAllocation","address":"0x10","size":1,"stack_trace":' + '['.repeat(1_000_000) + ']'.repeat(1_000_000) + '}';
    let err: unknown;
    try {
      parseJsonlLine(line, 1, 'deep.fsrec.jsonl');
    } catch (e) {
      err = e;
    }
    expect(isProfkitError(err) && err.code).toBe(C.JSONL);
    // The message describes the value without rendering it.
    expect((err as Error).message.length).toBeLessThan(300);
  });

  it('long offending values are clipped in messages', () => {
    let err: unknown;
    try {
      parseJsonlLine(`{"method":"${'x'.repeat(100_000)}"}`, 3, 'f.jsonl');
    } catch (e) {
      err = e;
    }
    expect(isProfkitError(err) && err.detail.line).toBe(3);
    expect((err as Error).message.length).toBeLessThan(300);
  });

  it('maxFramesPerStack bounds the frames of one call, naming the option', async () => {
    const frames = Array.from({ length: 40 }, (_, i) => `"0x${(0x1000 + i).toString(16)}"`).join(',');
    const text = `{"method":"SetProcessInfo","process_name":"p","module_map":[]}\n{"method":"RecordAllocation","address":"0x10","size":8,"stack_trace":[${frames}]}\n`;
    const e = await registry.read(enc(text), { format: 'fuchsia-sampler-jsonl', fileName: 'x.fsrec.jsonl', limits: { maxFramesPerStack: 39 } }).catch((x: unknown) => x);
    expect(isProfkitError(e) && e.code).toBe(ErrorCodes.LIMIT);
    expect(isProfkitError(e) && e.detail.option).toBe('maxFramesPerStack');
    expect(isProfkitError(e) && e.detail.line).toBe(2);
    const ok = await registry.read(enc(text), { format: 'fuchsia-sampler-jsonl', fileName: 'x.fsrec.jsonl', limits: { maxFramesPerStack: 40 } });
    expect(ok.profile.samples.value.length).toBeGreaterThan(0);
  });
});

describe('fuchsia-sampler writer regressions', () => {
  const calls: SamplerCall[] = [
    { method: 'SetProcessInfo', processName: 'huge', moduleMap: [] },
    { method: 'RecordAllocation', address: 0x10n, stackTrace: { stackFrames: BigUint64Array.of(0x1000n) }, size: 3242592831218384896n },
  ];

  // Were endless loops (binary searches over doubles whose midpoint rounded once lo + hi passed
  // 2^53): run in a child with a time limit so a regression fails instead of hanging the run.
  for (const size of [3242592831218384896n, 7599824371187776n, 4503599627370504n, 9007199254740993n]) {
    it.skipIf(!existsSync(dist))(`writing back a profile with a ${size}-byte allocation ends, with the same size`, () => {
      const script = `
        import { createRegistry } from '@profkit/core/node';
        import fuchsia, { callsToRecording } from ${JSON.stringify(pathToFileURL(dist).href)};
        const reg = createRegistry([fuchsia]);
        const rec = callsToRecording([
          { method: 'SetProcessInfo', processName: 'huge', moduleMap: [] },
          { method: 'RecordAllocation', address: 0x10n, stackTrace: { stackFrames: BigUint64Array.of(0x1000n) }, size: ${size}n },
        ]);
        const r = await reg.read(rec, { format: 'fuchsia-sampler', fileName: 'huge.fsrec' });
        const w = await reg.serialize(r.profile, { format: 'fuchsia-sampler', validate: false });
        const back = await reg.read(w.data, { format: 'fuchsia-sampler', fileName: 'back.fsrec' });
        process.stdout.write(String(back.profile.samples['.values'][1][0]) + ' ' + String(r.profile.samples['.values'][1][0]));
      `;
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000, cwd: dirname(dist) });
      expect(r.signal, 'the writer did not finish within 20 s').toBeNull();
      expect(r.stderr).toBe('');
      const [back, first] = r.stdout.split(' ');
      expect(back).toBe(first);
    });
  }

  it('a raw profile needing more allocations than maxAllocations is a LIMIT error naming the option', async () => {
    const r = await registry.read(callsToRecording(calls), { format: 'fuchsia-sampler', fileName: 'x.fsrec', options: { unsample: false } });
    const p = r.profile;
    p.samples['.values'][0]![0] = 1n << 40n; // 2^40 live objects on one stack
    p['.extensions']['fuchsia-sampler']!.facts!.unsampled = false;
    let err: unknown;
    try {
      profileToCalls(p);
    } catch (e) {
      err = e;
    }
    expect(isProfkitError(err) && err.code).toBe(ErrorCodes.LIMIT);
    expect(isProfkitError(err) && err.detail.option).toBe('maxAllocations');
    expect((err as Error).message).toContain('maxAllocations');
  });

  it('a process name of a million characters is cut to its first 32 bytes in one pass (was: one pass per dropped character, hours)', async () => {
    const r = await registry.read(callsToRecording(calls), { format: 'fuchsia-sampler', fileName: 'x.fsrec' });
    const p = r.profile;
    p['.extensions']['fuchsia-sampler']!.facts!.process_name = 'é' + 'x'.repeat(1_000_000);
    const first = profileToCalls(p).calls[0]!;
    expect(first.method === 'SetProcessInfo' && first.processName).toBe('é' + 'x'.repeat(30));
  });
});
