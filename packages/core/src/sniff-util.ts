/**
 * Helpers for format detection: inflating just the head of a gzip stream, and small text tests
 * adapters' `sniff` functions commonly need.
 */

export { inflateHead } from './gzip.js';

const latin1 = new TextDecoder('latin1');

/** The head as text (latin1: every byte maps to one character; never throws). */
export function headText(head: Uint8Array, max = head.length): string {
  return latin1.decode(head.subarray(0, max));
}

/** True when `head` starts with `prefix` (bytes or ASCII text). */
export function startsWithBytes(head: Uint8Array, prefix: Uint8Array | string): boolean {
  const p = typeof prefix === 'string' ? new TextEncoder().encode(prefix) : prefix;
  if (head.length < p.length) return false;
  for (let i = 0; i < p.length; i++) if (head[i] !== p[i]) return false;
  return true;
}

/** True when `fileName` ends with one of `extensions` (case-insensitive). */
export function hasExtension(fileName: string | undefined, extensions: readonly string[]): boolean {
  if (!fileName) return false;
  const lower = fileName.toLowerCase();
  return extensions.some((e) => lower.endsWith(e.toLowerCase()));
}

/**
 * Where JSON text stops being valid: the character offset and 1-based line/column of
 * the first syntax error, or undefined when `text` is valid JSON. `JSON.parse`'s messages do not
 * always carry a position (Node 20), so readers of JSON formats use this to point at the error.
 */
export function jsonSyntaxErrorAt(text: string): { offset: number; line: number; column: number; expected: string } | undefined {
  let i = 0;
  const n = text.length;
  const fail = (expected: string): never => {
    throw { offset: i, expected };
  };
  const ws = () => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 9 || c === 10 || c === 13) i++;
      else break;
    }
  };
  const literal = (word: string) => {
    if (text.startsWith(word, i)) i += word.length;
    else fail(word);
  };
  const string = () => {
    i++; // opening quote
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 34) {
        i++;
        return;
      }
      if (c < 32) fail('a closing quote (control character in string)');
      if (c === 92) {
        i++;
        const e = text[i];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail('four hex digits after \\u');
          i += 5;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i++;
        else fail('a valid escape');
      } else i++;
    }
    fail('a closing quote');
  };
  const number = () => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m || m[0] === '' || m[0] === '-') fail('a value');
    i += m![0].length;
  };
  const value = (depth: number): void => {
    if (depth > 10_000) fail('less nesting');
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('a string key');
        string();
        ws();
        if (text[i] !== ':') fail('":"');
        i++;
        value(depth + 1);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return;
        }
        fail('"," or "}"');
      }
    } else if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value(depth + 1);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return;
        }
        fail('"," or "]"');
      }
    } else if (c === '"') string();
    else if (c === 't') literal('true');
    else if (c === 'f') literal('false');
    else if (c === 'n') literal('null');
    else number();
  };
  try {
    value(0);
    ws();
    if (i < n) fail('the end of the input');
    return undefined;
  } catch (e) {
    if (typeof e !== 'object' || e === null || !('offset' in e)) throw e;
    const { offset, expected } = e as { offset: number; expected: string };
    let line = 1;
    let lineStart = 0;
    for (let k = 0; k < offset && k < n; k++) {
      if (text.charCodeAt(k) === 10) {
        line++;
        lineStart = k + 1;
      }
    }
    return { offset, line, column: offset - lineStart + 1, expected };
  }
}
