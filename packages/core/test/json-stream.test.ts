/**
 * The incremental JSON tokenizer (`JsonTokenizer` feeding a `JsonValueBuilder`) builds the values
 * `JSON.parse` builds and refuses what it refuses, whatever the chunk boundaries: every input is
 * fed in chunks of 1, 7 and 4096 bytes. (The readers built on it are tested in their packages.)
 */
import { describe, expect, it } from 'vitest';
import { JsonTokenizer, JsonValueBuilder, ProfkitError, tokenizeChunks } from '../src/index.js';

const CHUNK_SIZES = [1, 7, 4096];
const enc = (text: string) => new TextEncoder().encode(text);

function parseInChunks(bytes: Uint8Array, size: number, maxDepth?: number): unknown {
  const builder = new JsonValueBuilder();
  const t = new JsonTokenizer(builder, { file: 'x.json', format: 'test' }, maxDepth);
  for (let i = 0; i < bytes.length; i += size) t.write(bytes.subarray(i, i + size));
  t.end();
  return builder.result;
}

function thrown(f: () => unknown): ProfkitError {
  try {
    f();
  } catch (e) {
    if (e instanceof ProfkitError) return e;
    throw e;
  }
  throw new Error('no error');
}

describe('the JSON tokenizer builds the values JSON.parse builds', () => {
  const texts = ['0', '-0', ' 12345678901234567 ', '1.5e-3', '-2E+2', '"a\\u00e9\\ud83d\\ude00\\/"', '"\u00e9\u4e2d\ud83d\ude00"', '[]', '{}', '[1,[2,[3,{"a":{"b":null}}]],true,false]', '{"a":1,"a":2}', '{"__proto__":[1]}'];
  for (const text of texts) {
    for (const size of CHUNK_SIZES) {
      it(`${text}, chunks of ${size}`, () => {
        const result = parseInChunks(enc(text), size);
        expect(result).toStrictEqual(JSON.parse(text));
        expect(Object.is(result, JSON.parse(text)) || typeof result === 'object').toBe(true);
      });
    }
  }
});

describe('the JSON tokenizer refuses what JSON.parse refuses, naming the byte offset', () => {
  const cases: [string, string, string, number | undefined][] = [
    ['a missing comma', '[1 2]', 'PROFKIT_E_PARSE', 3],
    ['a bad literal', '[nul]', 'PROFKIT_E_PARSE', 1],
    ['a leading zero', '[01]', 'PROFKIT_E_PARSE', 1],
    ['a hexadecimal number', '0x1', 'PROFKIT_E_PARSE', 1],
    ['a bad escape', '["a\\x"]', 'PROFKIT_E_PARSE', 1],
    ['a raw control character', '"a\u0001"', 'PROFKIT_E_PARSE', 2],
    ['a trailing comma', '[1,]', 'PROFKIT_E_PARSE', 3],
    ['data after the value', '{} {}', 'PROFKIT_E_PARSE', 3],
    ['the end cut off', '{"a":[1', 'PROFKIT_E_TRUNCATED', 7],
    ['nothing', ' \n', 'PROFKIT_E_EMPTY_INPUT', undefined],
  ];
  for (const [name, text, code, offset] of cases) {
    for (const size of CHUNK_SIZES) {
      it(`${name}, chunks of ${size}`, () => {
        expect(() => JSON.parse(text)).toThrow();
        const e = thrown(() => parseInChunks(enc(text), size));
        expect([e.code, e.detail.offset, e.detail.file]).toEqual([code, offset, 'x.json']);
      });
    }
  }
  it('nesting deeper than maxDepth, at the bracket that goes too deep', () => {
    const e = thrown(() => parseInChunks(enc('['.repeat(50)), 7, 10));
    expect([e.code, e.detail.offset]).toEqual(['PROFKIT_E_PARSE', 10]);
    expect(parseInChunks(enc('['.repeat(10) + ']'.repeat(10)), 7, 10)).toStrictEqual(JSON.parse('['.repeat(10) + ']'.repeat(10)));
  });
});

describe('tokenizeChunks', () => {
  async function* chunksOf(...texts: string[]): AsyncGenerator<Uint8Array> {
    for (const t of texts) yield enc(t);
  }
  it('feeds every chunk and ends the tokenizer', async () => {
    const builder = new JsonValueBuilder();
    await tokenizeChunks(new JsonTokenizer(builder, { file: 'x.json', format: 'test' }), chunksOf('[1,', '2', ']'), { file: 'x.json', format: 'test' }, {});
    expect(builder.result).toStrictEqual([1, 2]);
  });
  it('maxInputBytes stops before the chunk that goes past it is tokenized; an aborted signal stops between chunks', async () => {
    const builder = new JsonValueBuilder();
    const t = new JsonTokenizer(builder, { file: 'x.json', format: 'test' });
    let e = await tokenizeChunks(t, chunksOf('[1,', '2,3]'), { file: 'x.json', format: 'test' }, { limits: { maxInputBytes: 5 } }).catch((x: unknown) => x as ProfkitError);
    expect([e?.code, e?.detail.option, e?.detail.file, t.offset]).toEqual(['PROFKIT_E_LIMIT', 'maxInputBytes', 'x.json', 3]);
    const aborted = AbortSignal.abort();
    e = await tokenizeChunks(new JsonTokenizer(new JsonValueBuilder(), { file: 'x', format: 'test' }), chunksOf('1'), { file: 'x', format: 'test' }, { signal: aborted }).catch((x: unknown) => x as ProfkitError);
    expect((e as unknown as Error).name).toBe('AbortError');
  });
});
