import { describe, expect, it, vi } from 'vitest';
import { compileInlineWasm, instantiateWasm } from '../src/wasm.js';

// (module (func (export "answer") (result i32) (i32.const 42))), assembled.
const ANSWER = Buffer.from([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 127, 3, 2, 1, 0, 7, 10, 1, 6, 97, 110, 115, 119, 101, 114, 0, 0, 10, 6, 1, 4, 0, 65, 42, 11]).toString('base64');

describe('inline WebAssembly modules (core wasm.ts)', () => {
  it('compiles a module once per process and makes instances of it', () => {
    const module = compileInlineWasm(ANSWER);
    expect(module).not.toBeNull();
    expect(compileInlineWasm(ANSWER)).toBe(module);
    const exports = instantiateWasm(module!) as { answer(): number };
    expect(exports.answer()).toBe(42);
  });

  it('is null for bytes that are not a module, and where WebAssembly is absent (the callers then take their JS path)', () => {
    expect(compileInlineWasm(Buffer.from('not a module').toString('base64'))).toBeNull();
    vi.stubGlobal('WebAssembly', undefined);
    try {
      expect(compileInlineWasm(ANSWER)).not.toBeNull(); // compiled before: kept
      // A valid (empty) module, new to the cache: nothing to compile it with.
      expect(compileInlineWasm(Buffer.from([0, 97, 115, 109, 1, 0, 0, 0]).toString('base64'))).toBeNull();
    } finally {
      vi.unstubAllGlobals();
    }
  });
});
