/**
 * Cheap format detection: the binary recording's magic, or a JSONL line naming a Sampler method.
 * No imports beyond constants, no decoding.
 */

import type { SniffHints, SniffResult } from '@profkit/core';

const MAGIC = [0x46, 0x58, 0x53, 0x4d, 0x50, 0x52, 0x45, 0x43]; // "FXSMPREC"
const JSONL_HINT = /^\{.*"(method|event)"\s*:\s*"(RecordAllocation|RecordDeallocation|SetProcessInfo|SetSharedSocket|socket_closed)"/;

export function sniff(head: Uint8Array, hints: SniffHints): SniffResult {
  if (head.length >= 8 && MAGIC.every((b, i) => head[i] === b)) return { score: 1, format: 'fuchsia-sampler', reason: 'magic FXSMPREC' };
  // JSONL: skip comment lines, then the first object must name a Sampler method or event.
  const text = new TextDecoder('utf-8', { fatal: false }).decode(head.subarray(0, 4096));
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (t === '' || t.startsWith('#')) continue;
    if (JSONL_HINT.test(t)) return { score: 0.9, format: 'fuchsia-sampler-jsonl', reason: 'JSON line with a fuchsia.memory.sampler method' };
    break;
  }
  if (hints.fileName?.endsWith('.fsrec.jsonl')) return { score: 0.3, format: 'fuchsia-sampler-jsonl', reason: 'file name' };
  return 0;
}
