/**
 * Detection of `perf script` text: after optional `#` header lines, an event line followed by
 * a frame (a call graph; indented since perf 4) or an event line carrying the sampled ip (no call graph).
 * Cheap, synchronous, never throws.
 */

import type { SniffHints, SniffResult } from '@profkit/core';
import { FORMAT_ID } from './format.js';
import { parseEventLine, parseFrame } from './grammar.js';

const decoder = new TextDecoder('utf-8', { fatal: false });

/** Lines of the head looked at (a header of ~30 `#` lines comes first with --header). */
const HEAD_LINES = 64;

export function sniffPerfScript(head: Uint8Array, hints: SniffHints = {}): SniffResult {
  const lines = decoder.decode(head).split(/\r?\n/, HEAD_LINES);
  // The last line of a head may be cut; judge the complete ones.
  if (head.length >= 4096) lines.pop();
  let header = false;
  let events = 0;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (l.startsWith('#')) {
      header ||= /^# perf version :|^# cmdline : .*perf/.test(l);
      continue;
    }
    if (l === '') continue;
    const ev = parseEventLine(l);
    if (!ev) return 0;
    const next = lines[i + 1];
    // A frame: indented, or (perf 3.x) not indented but with its DSO.
    const indented = next !== undefined && /^\s/.test(next);
    const frame = next !== undefined ? parseFrame(next) : undefined;
    if (frame && (frame.dso !== '' || frame.inlined || indented)) events++;
    else if (ev.trailer !== '' && parseFrame(ev.trailer)?.dso) events++;
    else return 0;
    // Skip this sample's frames.
    while (i + 1 < lines.length && lines[i + 1] !== '' && (/^\s/.test(lines[i + 1]!) || !parseEventLine(lines[i + 1]!))) i++;
    if (events >= 2) break;
  }
  if (events === 0) return 0;
  const byName = hints.fileName !== undefined && /\.(perf|perf-script|perfscript)(\.txt)?$/i.test(hints.fileName);
  return { score: header || events >= 2 || byName ? 0.95 : 0.8, format: FORMAT_ID, reason: 'perf script event line followed by its call chain' };
}
