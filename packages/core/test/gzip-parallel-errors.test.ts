/**
 * Failures around the parallel gzip writer on Node: a deflate job failing on the thread pool, a
 * consumer that stops while blocks are still deflating, a producer failing with a typed error, a
 * write failing mid-way. Errors reach the caller (typed where the caller is `writeFileAtomic`),
 * nothing is left as an unhandled rejection, and an atomic write leaves the old file as it was.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { rejectionOf, seededRandom } from '@profkit/test-utils';

// deflateRaw as node:zlib has it, unless a test makes the jobs from `failFromJob` on fail (after
// `failDelayMs`, as a job on the thread pool would).
const control = vi.hoisted(() => ({ jobs: 0, done: 0, failFromJob: Infinity, failDelayMs: 0 }));
vi.mock('node:zlib', async (importOriginal) => {
  const zlib = await importOriginal<typeof import('node:zlib')>();
  const deflateRaw = (input: Uint8Array, options: object, callback: (e: Error | null, out?: Buffer) => void) => {
    // Counts the jobs that called back, so that settle() waits for every job in flight.
    const counted = (e: Error | null, out?: Buffer) => {
      control.done++;
      callback(e, out);
    };
    if (control.jobs++ >= control.failFromJob) setTimeout(() => counted(new Error('deflate job failed')), control.failDelayMs);
    else zlib.deflateRaw(input, options, counted);
  };
  return { ...zlib, deflateRaw, default: { ...zlib, deflateRaw } };
});

const { ErrorCodes, ProfkitError, isProfkitError } = await import('../src/errors.js');
const { DEFLATE_BLOCK_BYTES, gzipStream } = await import('../src/gzip-node.js');
const { writeFileAtomic } = await import('../src/node/io.js');

function randomBytes(n: number, seed: number): Uint8Array {
  const random = seededRandom(seed);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.floor(random() * 256);
  return out;
}

const input = randomBytes(6 * DEFLATE_BLOCK_BYTES, 3);
const blocks = () => Array.from({ length: 6 }, (_, i) => input.subarray(i * DEFLATE_BLOCK_BYTES, (i + 1) * DEFLATE_BLOCK_BYTES));

/** Unhandled rejections seen while a test runs (vitest would report them after the fact). */
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeEach(() => {
  control.jobs = 0;
  control.done = 0;
  control.failFromJob = Infinity;
  control.failDelayMs = 0;
  unhandled.length = 0;
  process.on('unhandledRejection', onUnhandled);
});
afterEach(() => {
  process.off('unhandledRejection', onUnhandled);
});

/**
 * Waits until every deflate job started has called back (not a fixed 150 ms, which a loaded
 * machine's thread pool may need more than: a late rejection would then go unseen), then for the
 * turn in which Node reports the rejections nobody handled.
 */
async function settle(): Promise<void> {
  while (control.done < control.jobs) await new Promise((r) => setImmediate(r));
  await new Promise((r) => setTimeout(r, 0));
  await new Promise((r) => setImmediate(r));
}

const dir = mkdtempSync(join(tmpdir(), 'profkit-gzip-errors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('parallel gzip on Node: failures', () => {
  it('a failing deflate job rejects the stream with its error, and the blocks in flight after it leave no unhandled rejection', async () => {
    control.failFromJob = 1;
    const seen: Uint8Array[] = [];
    const error = await rejectionOf<Error>(
      (async () => {
        for await (const piece of gzipStream(blocks(), 6, input.length)) seen.push(piece);
      })(),
    );
    expect(error.message).toBe('deflate job failed');
    // The header and the first block came out; nothing after the failed block.
    expect(seen).toHaveLength(2);
    await settle();
    expect(unhandled).toEqual([]);
  });

  it('a consumer that stops while blocks are deflating (and then fail) leaves no unhandled rejection', async () => {
    control.failFromJob = 1;
    control.failDelayMs = 20;
    const stream = gzipStream(blocks(), 6, input.length);
    expect((await stream.next()).done).toBe(false); // the header (no block started yet)
    expect((await stream.next()).done).toBe(false); // block 0; blocks 1-3 (failing) in flight
    await stream.return(undefined);
    expect(control.jobs).toBe(4);
    await settle();
    expect(unhandled).toEqual([]);
  });

  it('a consumer that breaks out of its loop early stops the producer (no block is produced beyond those in flight)', async () => {
    let produced = 0;
    function* counted(): Generator<Uint8Array> {
      for (const block of blocks()) {
        produced++;
        yield block;
      }
    }
    for await (const piece of gzipStream(counted(), 6, input.length)) {
      if (piece.length > 10) break; // the first deflated block
    }
    // The blocks in flight (4 of 512 KiB: 2 MiB) plus the one read ahead of them, not all 6.
    expect(produced).toBeLessThanOrEqual(5);
    await settle();
    expect(unhandled).toEqual([]);
  });

  it('a typed error of the producer mid-stream reaches writeFileAtomic unchanged and the old file stays', async () => {
    const target = join(dir, 'limit.pb.gz');
    writeFileSync(target, 'old');
    function* failing(): Generator<Uint8Array> {
      yield* blocks().slice(0, 3);
      throw new ProfkitError(ErrorCodes.LIMIT, 'too many samples (raise it with the option limits.maxSamples)', { option: 'maxSamples' });
    }
    const error = await rejectionOf(writeFileAtomic(target, gzipStream(failing(), 6)));
    expect(isProfkitError(error) && error.code === ErrorCodes.LIMIT && error.detail.option === 'maxSamples').toBe(true);
    expect(readFileSync(target, 'utf8')).toBe('old');
    expect(readdirSync(dir).filter((f) => f.startsWith('.profkit-tmp'))).toEqual([]);
    await settle();
    expect(unhandled).toEqual([]);
  });

  it('a deflate failure during an atomic write is a typed I/O error naming the file, and the old file stays', async () => {
    const target = join(dir, 'deflate.pb.gz');
    writeFileSync(target, 'old');
    control.failFromJob = 2;
    const error = await rejectionOf(writeFileAtomic(target, gzipStream(blocks(), 6, input.length)));
    expect(isProfkitError(error) && error.code === ErrorCodes.IO && error.detail.file === target).toBe(true);
    expect(readFileSync(target, 'utf8')).toBe('old');
    expect(readdirSync(dir).filter((f) => f.startsWith('.profkit-tmp'))).toEqual([]);
    await settle();
    expect(unhandled).toEqual([]);
  });

  it.skipIf(!existsSync('/dev/full'))('a write failing mid-way (/dev/full: no space) is a typed I/O error, with blocks still in flight', async () => {
    const error = await rejectionOf(writeFileAtomic('/dev/full', gzipStream(blocks(), 6, input.length)));
    expect(isProfkitError(error) && error.code === ErrorCodes.IO && error.detail.file === '/dev/full').toBe(true);
    await settle();
    expect(unhandled).toEqual([]);
  });
});
