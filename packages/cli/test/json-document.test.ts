/**
 * `--json` documents are written piece by piece (`writeJson`), never as one string: a document
 * near the longest string JavaScript makes (~512 MiB) failed with a bare RangeError. Pieces are
 * counted against `maxReportBytes` (PROFKIT_E_LIMIT naming the option) before they are written.
 * The text is exactly `JSON.stringify`'s (with toJson's bigint and typed-array replacer).
 */

import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { isProfkitError } from '@profkit/core';
import { createOutput, toJson, writeJson } from '../src/output.js';

const values: Record<string, unknown> = {
  scalars: { a: 1, b: -0, c: NaN, d: Infinity, e: true, f: null, g: 'x', h: 12345678901234567890n, i: 1e21, j: 1.5e-7 },
  leftOut: { u: undefined, fn: () => 1, sym: Symbol('s'), kept: 1, last: undefined },
  arrays: [1, undefined, () => 1, [], {}, [[]], [{ a: [] }], new Int32Array([1, -2]), new BigInt64Array([-1n, 2n ** 62n]), new Float64Array([0.5])],
  wrappers: [new Number(3), new String('s'), new Boolean(false)],
  toJSON: { date: new Date(0), custom: { toJSON: (key: string) => `key ${key}` }, nested: [{ toJSON: () => undefined }] },
  maps: { m: new Map([[1, 2]]), s: new Set([1]) },
  strings: ['', 'quote " backslash \\ newline \n tab \t nul \u0000 \u001f', 'größe€ 😀', '\ud800 lone \udc00', '\u2028\u2029', '\ud800\ud800\ude00 \udbff\udbff\udfff\udfff \ud83d'],
  keys: { '': 1, 'a"b': 2, '😀': 3, '10': 4, '2': 5 },
  onlyUndefined: { u: undefined },
  long: 'ab😀'.repeat(5000),
};

function pieces(value: unknown, options: Parameters<typeof writeJson>[2]): string[] {
  const out: string[] = [];
  writeJson(value, (p) => out.push(p), options);
  return out;
}

describe('writeJson', () => {
  it.each([2, 0, 4])('writes what JSON.stringify writes (indent %i), in pieces of any size', (indent) => {
    for (const pieceUnits of [1, 7, 100, 64 * 1024]) {
      for (const [name, v] of Object.entries(values)) expect(pieces(v, { indent, pieceUnits }).join(''), `${name}, pieces of ${pieceUnits}`).toBe(toJson(v, indent));
      expect(pieces(values, { indent, pieceUnits }).join('')).toBe(toJson(values, indent));
    }
    // Nothing for a value without a JSON form, as JSON.stringify returns undefined.
    expect(pieces(undefined, { indent })).toEqual([]);
    // A BigInt object is unwrapped to a bigint, which JSON.stringify refuses, as toJson does.
    expect(() => toJson({ n: Object(1n) }, indent)).toThrow(TypeError);
    expect(() => pieces({ n: Object(1n) }, { indent })).toThrow(TypeError);
  });

  it('never splits a surrogate pair between pieces of a long string', () => {
    const s = 'a' + '😀'.repeat(1000);
    for (const pieceUnits of [2, 3, 64]) {
      const out = pieces(s, { pieceUnits });
      expect(out.join('')).toBe(JSON.stringify(s));
      expect(out.join('')).not.toMatch(/\\ud/);
    }
  });

  it('stops at maxReportBytes with PROFKIT_E_LIMIT naming the option, having written less than the limit', () => {
    const out: string[] = [];
    let error: unknown;
    try {
      writeJson({ text: 'x'.repeat(100_000) }, (p) => out.push(p), { limits: { maxReportBytes: 10_000 }, pieceUnits: 1000 });
    } catch (e) {
      error = e;
    }
    expect(isProfkitError(error) && { code: error.code, option: error.detail.option }).toEqual({ code: 'PROFKIT_E_LIMIT', option: 'maxReportBytes' });
    expect(out.join('').length).toBeLessThanOrEqual(10_000);
    expect(out.length).toBeGreaterThan(5);
  });
});

describe('Output.document', () => {
  function output(limit?: number) {
    const writes: string[] = [];
    const stdout = new Writable({
      write(chunk, _encoding, done) {
        writes.push(String(chunk));
        done();
      },
    });
    const out = createOutput({ stdout, stderr: stdout, json: true, quiet: false, verbose: false, limits: limit === undefined ? undefined : () => ({ maxReportBytes: limit }) });
    return { out, writes };
  }

  it('writes a large document in pieces, the same text as one string', () => {
    const body = { text: 'line\n'.repeat(100_000), n: 5n };
    const { out, writes } = output();
    out.document('test', body);
    expect(writes.join('')).toBe(toJson({ schema: 'profkit.test/1', ...body }) + '\n');
    expect(writes.length).toBeGreaterThan(5);
    expect(Math.max(...writes.map((w) => w.length))).toBeLessThan(200 * 1024);
  });

  it('stops at the command line maxReportBytes with a typed error', () => {
    const { out, writes } = output(50_000);
    let error: unknown;
    try {
      out.document('test', { text: 'x'.repeat(1_000_000) });
    } catch (e) {
      error = e;
    }
    expect(isProfkitError(error) && error.detail.option).toBe('maxReportBytes');
    expect(writes.join('').length).toBeLessThanOrEqual(50_000);
  });
});
