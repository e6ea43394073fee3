import { describe, expect, it } from 'vitest';
import { LineSplitter } from '../src/index.js';

function split(chunks: string[]): string[] {
  const out: string[] = [];
  const s = new LineSplitter({ line: (t) => out.push(t) });
  const enc = new TextEncoder();
  for (const c of chunks) s.push(enc.encode(c));
  s.end();
  return out;
}

describe('LineSplitter', () => {
  it('drops the BOM of the first line only, whatever the chunking', () => {
    const text = '\ufeffa\n\ufeffb\nc\r\n\ufeffd';
    const whole = split([text]);
    expect(whole).toEqual(['a', '\ufeffb', 'c', '\ufeffd']);
    // Cut at every position: each chunking gives the same lines.
    for (let at = 1; at < text.length; at++) expect(split([text.slice(0, at), text.slice(at)])).toEqual(whole);
  });
});
