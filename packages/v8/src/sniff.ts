/**
 * Detection of V8 profiles by content (cheap: the ≤ 4 KiB head only; never throws).
 *
 * - 1.0: the head starts the way V8 writes the format: a `.cpuprofile` is `{"nodes":[{"id":…,
 *   "callFrame":{"functionName":"(root)"`, a `.heapprofile` `{"head":{"callFrame":
 *   {"functionName":"(root)"` (white space allowed, as in pretty-printed copies).
 * - 0.8: a JSON object whose head has the structure (`"nodes"` with `"callFrame"`, or `"head"`
 *   with `"callFrame"` and `"selfSize"`) in another key order.
 * - 0.3: only the file name ends in `.cpuprofile` / `.heapprofile`.
 */

import { hasExtension, headText, type SniffHints, type SniffResult } from '@profkit/core';
import { CPU_FORMAT, HEAP_FORMAT } from './format.js';

const CPU_START = /^\{\s*"nodes"\s*:\s*\[\s*\{\s*"id"\s*:\s*\d+\s*,\s*"callFrame"\s*:\s*\{\s*"functionName"\s*:\s*"\(root\)"/;
const HEAP_START = /^\{\s*"head"\s*:\s*\{\s*"callFrame"\s*:\s*\{\s*"functionName"\s*:\s*"\(root\)"/;

export function sniffV8(head: Uint8Array, hints: SniffHints): SniffResult {
  let text = headText(head);
  if (text.startsWith('\u00ef\u00bb\u00bf')) text = text.slice(3); // UTF-8 BOM read as latin1
  text = text.trimStart();
  if (text.startsWith('{')) {
    if (CPU_START.test(text)) return { score: 1, format: CPU_FORMAT, reason: 'starts like V8 writes a .cpuprofile: {"nodes":[{"id":1,"callFrame":{"functionName":"(root)"' };
    if (HEAP_START.test(text)) return { score: 1, format: HEAP_FORMAT, reason: 'starts like V8 writes a .heapprofile: {"head":{"callFrame":{"functionName":"(root)"' };
    const hasCallFrame = /"callFrame"\s*:\s*\{/.test(text);
    if (hasCallFrame && /"nodes"\s*:\s*\[/.test(text)) return { score: 0.8, format: CPU_FORMAT, reason: 'a JSON object with "nodes" of "callFrame"s (V8 CPU profile)' };
    if (hasCallFrame && /"head"\s*:\s*\{/.test(text) && /"selfSize"\s*:/.test(text)) {
      return { score: 0.8, format: HEAP_FORMAT, reason: 'a JSON object with a "head" node of "callFrame" and "selfSize" (V8 heap profile)' };
    }
  }
  if (hasExtension(hints.fileName, ['.cpuprofile'])) return { score: 0.3, format: CPU_FORMAT, reason: 'file name ends in .cpuprofile' };
  if (hasExtension(hints.fileName, ['.heapprofile'])) return { score: 0.3, format: HEAP_FORMAT, reason: 'file name ends in .heapprofile' };
  return 0;
}
