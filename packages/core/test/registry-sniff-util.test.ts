import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { hasExtension, headText, inflateHead, jsonSyntaxErrorAt, startsWithBytes } from '../src/node/index.js';

describe('inflateHead', () => {
  it('returns exactly the first max bytes, however well the data compresses', async () => {
    const big = Buffer.alloc(20 * 1024 * 1024, 'abcd');
    const gz = gzipSync(big);
    const head = await inflateHead(gz, 4096);
    expect(head.length).toBe(4096);
    expect(Buffer.from(head).equals(big.subarray(0, 4096))).toBe(true);
  });

  it('returns what a truncated or short stream yields', async () => {
    const data = Buffer.from('hello world '.repeat(1000));
    const gz = gzipSync(data);
    const part = await inflateHead(gz.subarray(0, Math.floor(gz.length / 2)), 1 << 20);
    expect(part.length).toBeGreaterThan(0);
    expect(part.length).toBeLessThan(data.length);
    expect(Buffer.from(part).equals(data.subarray(0, part.length))).toBe(true);
    expect((await inflateHead(gzipSync('tiny'), 4096)).length).toBe(4);
    expect((await inflateHead(Buffer.from([0x1f, 0x8b, 0x08]), 4096)).length).toBe(0);
  });
});

describe('jsonSyntaxErrorAt', () => {
  const samples = [
    '{}',
    '[1, 2.5e3, -0, "a\\u00e9\\n", true, false, null, {"k": []}]',
    ' "x" ',
    '{"a": 1,}',
    '[1 2]',
    '{"a" 1}',
    '[01]',
    '"\\x"',
    '{"a": tru}',
    '',
    '[',
    '{"a": 1} extra',
    '"unterminated',
    '-',
    '1.',
  ];
  it('agrees with JSON.parse on what is valid', () => {
    for (const s of samples) {
      let valid = true;
      try {
        JSON.parse(s);
      } catch {
        valid = false;
      }
      expect([s, jsonSyntaxErrorAt(s) === undefined]).toEqual([s, valid]);
    }
  });

  it('points at the line and column of the error', () => {
    expect(jsonSyntaxErrorAt('{\n  "a": [\n    1,\n  ]\n}')).toMatchObject({ line: 4, column: 3 });
    expect(jsonSyntaxErrorAt('[1,\n2 3]')).toMatchObject({ line: 2, column: 3, expected: '"," or "]"' });
  });
});

describe('sniff helpers', () => {
  it('test prefixes, text and extensions', () => {
    const head = new Uint8Array([0x23, 0x21, 0xff, 0x41]);
    expect(startsWithBytes(head, '#!')).toBe(true);
    expect(startsWithBytes(head, new Uint8Array([0x23, 0x22]))).toBe(false);
    expect(startsWithBytes(head.subarray(0, 1), '#!')).toBe(false);
    expect(headText(head).length).toBe(4);
    expect(hasExtension('/a/B.PB.GZ', ['.pb.gz'])).toBe(true);
    expect(hasExtension(undefined, ['.x'])).toBe(false);
  });
});
