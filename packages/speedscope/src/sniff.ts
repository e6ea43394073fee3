/**
 * Detection: 1.0 for speedscope's `$schema` URL, 0.8 for a JSON object with `shared.frames` and
 * `profiles` in its head, 0.3 for a `.speedscope.json` name alone. Cheap, never throws.
 */

import type { SniffHints, SniffResult } from '@profkit/core';
import { FORMAT_ID } from './format.js';

const decoder = new TextDecoder('utf-8', { fatal: false });

export function sniffSpeedscope(head: Uint8Array, hints: SniffHints = {}): SniffResult {
  const text = decoder.decode(head).replace(/^\uFEFF/, '').trimStart();
  const byName = hints.fileName?.toLowerCase().endsWith('.speedscope.json') === true;
  if (!text.startsWith('{')) return 0;
  if (/"\$schema"\s*:\s*"https?:\/\/(www\.)?speedscope\.app\/file-format-schema\.json"/.test(text)) return { score: 1, format: FORMAT_ID, reason: '$schema names the speedscope file format' };
  if (/"shared"\s*:\s*\{\s*"frames"\s*:\s*\[/.test(text) && /"profiles"\s*:\s*\[/.test(text)) return { score: 0.8, format: FORMAT_ID, reason: 'a JSON object with shared.frames and profiles' };
  return byName ? { score: 0.3, format: FORMAT_ID, reason: 'the name ends with .speedscope.json' } : 0;
}
