/**
 * Writing a report's text as it is made (folded, traces, raw…): a large report is hundreds of
 * megabytes, so it is sent to stdout (or a file, atomically) in UTF-8 chunks of about 64 KiB,
 * one chunk out before the next is made, never held whole.
 */

import { writeFileAtomic } from '@profkit/core/node';
import type { CliContext } from '../types.js';

/** `pieces` as UTF-8 chunks of about 64 KiB. */
export function* utf8Batches(pieces: Iterable<string>): Generator<Uint8Array> {
  const encoder = new TextEncoder();
  let batch: string[] = [];
  let length = 0;
  for (const piece of pieces) {
    batch.push(piece);
    length += piece.length;
    if (length >= 1 << 16) {
      yield encoder.encode(batch.join(''));
      batch = [];
      length = 0;
    }
  }
  if (batch.length > 0) yield encoder.encode(batch.join(''));
}

/**
 * Writes `pieces` to `output` (atomically; `inputs` are the files it must not clobber) or, when
 * `output` is undefined, to stdout, each chunk awaited before the next is made.
 */
export async function writeStreamedText(ctx: CliContext, pieces: Iterable<string>, output?: { path: string; inputs: string[] }): Promise<void> {
  if (output) {
    await writeFileAtomic(output.path, utf8Batches(pieces), { inputs: output.inputs, signal: ctx.signal });
    return;
  }
  for (const chunk of utf8Batches(pieces)) await new Promise<void>((sent, failed) => ctx.stdout.write(chunk, (err) => (err ? failed(err) : sent())));
}
