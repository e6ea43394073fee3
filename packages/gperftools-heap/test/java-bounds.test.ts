/**
 * Java heapz/contentionz text: the samples' frames count towards `maxTotalFrames`, and the
 * distinct location ids towards `maxTableEntries` (a Map holds at most 2^24 entries), each checked
 * as the samples are read; the location lines' function names are keyed through StringKeyedMap.
 */

import { describe, expect, it } from 'vitest';
import { isProfkitError, type ReadLimits } from '@profkit/core/node';
import { readLegacy } from '../src/node.js';

const encoder = new TextEncoder();
const id = (i: number) => `0x${(0x1000 + i).toString(16)}`;

/** `rows` heapz samples of `frames` frames each, every frame id distinct, and their location lines. */
function heapz(rows: number, frames: number, name: (i: number) => string = (i) => `com.example.F${i}.run(F${i}.java:${i + 1})`): Uint8Array {
  let text = '--- heapz 1 ---\nformat = java\nresolution = bytes\n';
  for (let r = 0; r < rows; r++) text += `64 1 @ ${Array.from({ length: frames }, (_, k) => id(r * frames + k)).join(' ')}\n`;
  for (let i = 0; i < rows * frames; i++) text += `${id(i)} ${name(i)}\n`;
  return encoder.encode(text);
}

function outcome(input: Uint8Array, limits: ReadLimits) {
  try {
    const p = readLegacy(input, { limits, fileName: 'in' }).profile;
    return { samples: p.samples.value.length, functions: p.functions.name.length };
  } catch (e) {
    if (!isProfkitError(e)) throw e;
    return { code: e.code, option: e.detail.option, line: e.detail.line };
  }
}

describe('Java heapz text', () => {
  it('stops at maxTotalFrames (the frames of all samples together)', () => {
    // 10 samples of 4 frames: 40 frames; sample 6 takes the total to 24.
    expect(outcome(heapz(10, 4), { maxTotalFrames: 40 })).toEqual({ samples: 10, functions: 40 });
    expect(outcome(heapz(10, 4), { maxTotalFrames: 23 })).toEqual({ code: 'PROFKIT_E_LIMIT', option: 'maxTotalFrames', line: 9 });
  });

  it('stops at maxTableEntries distinct location ids, on the line that adds one too many', () => {
    expect(outcome(heapz(10, 4), { maxTableEntries: 40 })).toEqual({ samples: 10, functions: 40 });
    expect(outcome(heapz(10, 4), { maxTableEntries: 30 })).toEqual({ code: 'PROFKIT_E_LIMIT', option: 'maxTableEntries', line: 11 });
  });

  it('long frame texts: distinct names are distinct functions, an equal name one function', () => {
    // Names past MAX_SEARCH_LINE are taken whole; these differ only in their last characters.
    const names = (i: number) => 'x'.repeat(20_000) + String(i % 150).padStart(6, '0');
    const p = readLegacy(heapz(100, 3, names), { fileName: 'in' }).profile;
    expect([...p.functions.name]).toEqual(Array.from({ length: 150 }, (_, i) => names(i)));
  });
});
