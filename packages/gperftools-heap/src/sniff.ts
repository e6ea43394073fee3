/** Cheap format detection for the adapter's formats (no heavy imports). */

import type { SniffHints, SniffResult } from '@profkit/core';
import { detectCpuHeader } from './cpu-header.js';

function firstTextLine(head: Uint8Array): string | undefined {
  // Text formats are ASCII at the start; give up on NUL bytes.
  const n = Math.min(head.length, 4096);
  let s = '';
  for (let i = 0; i < n; i++) {
    const c = head[i]!;
    if (c === 0) return undefined;
    s += String.fromCharCode(c);
  }
  const lines = s.split('\n');
  for (const l of lines) {
    const t = l.trim();
    if (t === '' || t.startsWith('%') || t.startsWith('#')) continue;
    return t;
  }
  return undefined;
}

export function sniff(head: Uint8Array, _hints: SniffHints = {}): SniffResult {
  if (head.length >= 20 && head[0] === 0) {
    const h = detectCpuHeader(head);
    if (h) return { score: 0.95, format: 'gperftools-cpu', reason: `legacy CPU profile header (${h.word.size * 8}-bit ${h.word.littleEndian ? 'LE' : 'BE'}${h.java ? ', Java' : ''})` };
    return 0;
  }
  const line = firstTextLine(head);
  if (line === undefined) return 0;
  if (/heap profile: *\d+: *\d+ *\[ *\d+: *\d+ *\] *@ *(heap[_a-z0-9]*|growthz?|fragmentationz?)/.test(line)) {
    return { score: 0.95, format: 'gperftools-heap', reason: 'heap profile header' };
  }
  if (line.startsWith('--- heapz 1 ---')) return { score: 0.9, format: 'gperftools-heap', reason: 'Java heapz header' };
  if (line.startsWith('--- contention') || line.startsWith('--- mutex:')) return { score: 0.9, format: 'gperftools-contention', reason: 'contention header' };
  if (/^--- threadz \d+ ---/.test(line) || line.startsWith('--- Thread ')) return { score: 0.85, format: 'gperftools-thread', reason: 'threadz header' };
  if (/^[^\t\n\f\r ]+ profile: total \d+$/.test(line)) return { score: 0.8, format: 'gperftools-thread', reason: 'Go count profile header' };
  return 0;
}
