/**
 * Cheap format detection on the head of a file (already gunzipped by the registry when gzip).
 */

import type { SniffHints, SniffResult } from '@profkit/core';

const HEADER_HEAD = /^\uFEFF?(?:memory profiling: |GC profiling: |line profiling: )*sample\.interval=\d+[ \t]*(?:\r\n|\r|\n|$)/;
const FOLDED_LINE = /^[^\r\n;]+(?:;[^\r\n;]+)* \d+$/;

function headText(head: Uint8Array, max = 4096): string {
  return new TextDecoder('utf-8', { fatal: false }).decode(head.subarray(0, Math.min(head.length, max)));
}

/** Rprof: the first line is R's header. Folded: the first lines are `frames count`. */
export function sniffRprof(head: Uint8Array, hints: SniffHints = {}): SniffResult {
  const text = headText(head);
  if (HEADER_HEAD.test(text)) return { score: 0.95, format: 'rprof', reason: 'Rprof header line' };
  const f = sniffFolded(text, hints);
  if (f > 0) return { score: f, format: 'folded', reason: 'folded stack lines' };
  return 0;
}

export function sniffFolded(text: string, hints: SniffHints = {}): number {
  const lines = text.split(/\r\n|\r|\n/);
  // The last line of a head may be cut; judge the complete ones.
  const complete = lines.length > 1 ? lines.slice(0, -1) : lines;
  const nonEmpty = complete.filter((l) => l.length > 0).slice(0, 20);
  if (nonEmpty.length === 0) return 0;
  if (!nonEmpty.every((l) => FOLDED_LINE.test(l))) return 0;
  const byName = hints.fileName !== undefined && /\.(folded|collapsed)$/i.test(hints.fileName);
  const anySemicolon = nonEmpty.some((l) => l.includes(';'));
  return byName ? 0.9 : anySemicolon ? 0.6 : 0.3;
}
