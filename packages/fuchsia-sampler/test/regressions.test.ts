import { describe, expect, it } from 'vitest';
import { ErrorCodes, createRegistry, isProfkitError } from '@profkit/core';
import adapter, { FuchsiaErrorCodes as C, parseJsonlLine } from '../src/index.js';

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
