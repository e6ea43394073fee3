/**
 * Writing a report's text as it is made (folded, traces, raw…): a large report is hundreds of
 * megabytes, so it is sent to stdout (or a file, atomically) in UTF-8 chunks of about 64 KiB,
 * one chunk out before the next is made, never held whole.
 */

import { statSync } from 'node:fs';
import { READ_LIMITS, parseLimitArgs, writeFileAtomic, type ReadLimits } from '@profkit/core/node';
import type { CliContext } from '../types.js';

/** Bytes of streamed report text allowed per byte of the input files, by default. */
export const STREAMED_TEXT_PER_INPUT_BYTE = 64;

/**
 * The `--limit` values for a report written as it is made. Such a report holds one chunk, not its
 * text, so `maxReportBytes` guards against amplification (a 40 KB profile asking for gigabytes),
 * not memory: unless the command line sets it, it is the larger of the default (512 MiB) and 64
 * bytes per byte of the input files. A real profile's text is proportional to it (the 1M-sample
 * benchmark profile, 95 MB gzipped, prints 1.3 GB of folded stacks), a crafted one is not. Stdin
 * (`-`) counts nothing.
 */
export function streamedReportLimits(ctx: CliContext, files: string[]): ReadLimits & Record<string, number> {
  const limits = parseLimitArgs(ctx.values.limit);
  // `--json` holds the whole report (then its document), so the default bounds memory there.
  if (limits.maxReportBytes !== undefined || ctx.json) return limits;
  let inputBytes = 0;
  for (const file of files) {
    if (file === '-') continue;
    try {
      inputBytes += statSync(file).size;
    } catch {
      // Read already, so present; a file gone since then counts nothing.
    }
  }
  return { ...limits, maxReportBytes: Math.max(READ_LIMITS.maxReportBytes, STREAMED_TEXT_PER_INPUT_BYTE * inputBytes) };
}

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
  await writeStreamedBytes(ctx, utf8Batches(pieces), output);
}

/** `writeStreamedText` for a report made as UTF-8 chunks (`foldedChunks`). */
export async function writeStreamedBytes(ctx: CliContext, chunks: Iterable<Uint8Array>, output?: { path: string; inputs: string[] }): Promise<void> {
  if (output) {
    await writeFileAtomic(output.path, chunks, { inputs: output.inputs, signal: ctx.signal });
    return;
  }
  for (const chunk of chunks) await new Promise<void>((sent, failed) => ctx.stdout.write(chunk, (err) => (err ? failed(err) : sent())));
}
