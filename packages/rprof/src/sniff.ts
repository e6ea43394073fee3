/**
 * Cheap format detection on the head of a file (already gunzipped by the registry when gzip).
 */

import type { SniffHints, SniffResult } from '@profkit/core';

const HEADER_HEAD = /^\uFEFF?(?:memory profiling: |GC profiling: |line profiling: )*sample\.interval=\d+[ \t]*(?:\r\n|\r|\n|$)/;
const FOLDED_LINE = /^[^\r\n;]+(?:;[^\r\n;]+)* \d+$/;
/** The start of a folded line cut before its count: frames separated by `;`, at least two. */
const FOLDED_LINE_START = /^[^\r\n;]+(?:;[^\r\n;]+)+;?$/;

/** Bytes of the head the sniffers look at (the registry's head is no longer). */
const SNIFF_WINDOW = 4096;

function headText(head: Uint8Array, max = SNIFF_WINDOW): string {
  return new TextDecoder('utf-8', { fatal: false }).decode(head.subarray(0, Math.min(head.length, max)));
}

/** Rprof: the first line is R's header. Folded: the first lines are `frames count`. */
export function sniffRprof(head: Uint8Array, hints: SniffHints = {}): SniffResult {
  const text = headText(head);
  if (HEADER_HEAD.test(text)) return { score: 0.95, format: 'rprof', reason: 'Rprof header line' };
  const f = sniffFolded(text, hints, head.length >= SNIFF_WINDOW);
  if (f > 0) return { score: f, format: 'folded', reason: 'folded stack lines' };
  return 0;
}

/**
 * How much `text`, the head of an input, looks like folded stacks. `cut`: the head may end inside
 * the input (it filled the sniff window), so its last line may be incomplete. A first line longer
 * than the window (deep stacks: 4 KiB is ~400 frames) is judged by its start, frames separated
 * by `;`, when the input is named `.folded`/`.collapsed`; unnamed, any long line with `;` in it
 * would pass, so it is not recognized (`--from folded`).
 */
export function sniffFolded(text: string, hints: SniffHints = {}, cut = false): number {
  const lines = text.split(/\r\n|\r|\n/);
  const byName = hints.fileName !== undefined && /\.(folded|collapsed)$/i.test(hints.fileName);
  if (cut && lines.length === 1 && !FOLDED_LINE.test(lines[0]!)) return byName && FOLDED_LINE_START.test(lines[0]!) ? 0.9 : 0;
  // The last line of a head may be cut; judge the complete ones.
  const complete = lines.length > 1 ? lines.slice(0, -1) : lines;
  const nonEmpty = complete.filter((l) => l.length > 0).slice(0, 20);
  if (nonEmpty.length === 0) return 0;
  if (!nonEmpty.every((l) => FOLDED_LINE.test(l))) return 0;
  const anySemicolon = nonEmpty.some((l) => l.includes(';'));
  return byName ? 0.9 : anySemicolon ? 0.6 : 0.3;
}
