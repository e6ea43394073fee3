/**
 * Detection: cheap, synchronous, never throws. Scores follow docs/writing-an-adapter.md:
 * 1.0 for the format's `$schema` URL, 0.8 when the head has speedscope's structure, 0.3 for the
 * `.speedscope.json` extension alone, 0 otherwise.
 *
 * Every score above 0 needs a head that is a JSON object (`{` after a byte order mark and JSON's
 * white space): package.json declares that as the sniff's `magic`, so the CLI imports this module
 * only for such inputs (docs/writing-an-adapter.md, "Static metadata").
 */

import type { SniffHints, SniffResult } from '@profkit/core';

const decoder = new TextDecoder('utf-8', { fatal: false });

export function sniffSpeedscope(head: Uint8Array, hints: SniffHints): SniffResult {
  let text = decoder.decode(head);
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  // JSON's white space only (as the declared magic skips): trimStart() also skips \f, U+00A0…
  text = text.replace(/^[ \t\r\n]+/, '');
  const byName = hints.fileName !== undefined && hints.fileName.toLowerCase().endsWith('.speedscope.json');
  if (!text.startsWith('{')) return 0;
  if (/"\$schema"\s*:\s*"https?:\/\/(www\.)?speedscope\.app\/file-format-schema\.json"/.test(text)) {
    return { score: 1, format: 'speedscope-example', reason: '$schema names the speedscope file format' };
  }
  if (/"shared"\s*:\s*\{\s*"frames"\s*:\s*\[/.test(text) && /"profiles"\s*:\s*\[/.test(text)) {
    return { score: 0.8, format: 'speedscope-example', reason: 'JSON object with shared.frames and profiles' };
  }
  if (byName) return { score: 0.3, format: 'speedscope-example', reason: 'file name ends with .speedscope.json' };
  return 0;
}
