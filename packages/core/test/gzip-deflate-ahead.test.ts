/**
 * Issue 17 (convert ahead of Go): `startDeflateAhead` deflates bytes a caller expects to write
 * (convert's pprof input, which a canonical pprof output repeats byte for byte) on the thread pool
 * before the write; `gzipStream` takes a block's early output only for the very bytes, with the
 * very block before it (its dictionary). Whatever the guess, the output is the one `gzipStream`
 * makes without it.
 */
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { DEFLATE_BLOCK_BYTES, MIN_DEFLATE_BLOCK_BYTES, deflateBlockBytes, gzipStream, prepareDeflateAhead, startDeflateAhead, startDeflateAheadOfArriving } from '../src/gzip-node.js';
import { startDeflateAhead as browserStartDeflateAhead, startDeflateAheadOfArriving as browserStartDeflateAheadOfArriving } from '../src/gzip-browser.js';
import { profileLike } from './gzip-data.js';

async function gzipped(bytes: Uint8Array, level: number, ahead?: ReturnType<typeof startDeflateAhead>): Promise<Buffer> {
  // Odd-sized chunks, as an encoder hands them over.
  const chunks = Array.from({ length: Math.ceil(bytes.length / 300_007) }, (_, i) => bytes.subarray(i * 300_007, (i + 1) * 300_007));
  const out: Uint8Array[] = [];
  for await (const piece of gzipStream(chunks, level, bytes.length, ahead)) out.push(piece);
  return Buffer.concat(out);
}

describe('deflating ahead (startDeflateAhead)', () => {
  const input = profileLike(4 * DEFLATE_BLOCK_BYTES + 54_321, 23);
  const blocks = Math.ceil(input.length / deflateBlockBytes(input.length));

  it('the very bytes: every block is taken from the early jobs, and the output is the one made without them', async () => {
    const plain = await gzipped(input, 6);
    // The guess is a copy: only the bytes count, not the buffer.
    const ahead = startDeflateAhead(input.slice(), 6)!;
    const early = await gzipped(input, 6, ahead);
    expect(ahead.blocksTaken).toBe(blocks);
    expect(early.equals(plain)).toBe(true);
    expect(gunzipSync(early).equals(input)).toBe(true);
  });

  it('a block that differs, even only in the tail the next block is primed with: the blocks before it are taken, none from it on, same output', async () => {
    const blockBytes = deflateBlockBytes(input.length);
    for (const changedAt of [blockBytes + 1000, 2 * blockBytes - 10]) {
      const guess = input.slice();
      guess[changedAt]! ^= 0x55;
      const ahead = startDeflateAhead(guess, 6)!;
      const early = await gzipped(input, 6, ahead);
      // Block 1 differs; block 2 is equal but its dictionary (block 1's tail) is not.
      expect(ahead.blocksTaken).toBe(1);
      expect(early.equals(await gzipped(input, 6))).toBe(true);
    }
  });

  it('another length, another level, another total: nothing taken, same output', async () => {
    const longer = new Uint8Array(input.length + 1);
    longer.set(input);
    const shorter = input.subarray(0, input.length - 1);
    for (const [guess, level] of [
      [longer, 6],
      [shorter, 6],
      [input, 5],
    ] as const) {
      const ahead = startDeflateAhead(guess, level)!;
      expect((await gzipped(input, 6, ahead)).equals(await gzipped(input, 6))).toBe(true);
      expect(ahead.blocksTaken).toBe(0);
    }
    // Without a total, gzipStream cuts other blocks: the guess is not used either.
    const ahead = startDeflateAhead(input, 6)!;
    const out: Uint8Array[] = [];
    for await (const piece of gzipStream([input], 6, undefined, ahead)) out.push(piece);
    expect(ahead.blocksTaken).toBe(0);
    expect(gunzipSync(Buffer.concat(out)).equals(input)).toBe(true);
  });

  it('another length or level: the worker is stopped as the stream starts, not left deflating beside it to the end', async () => {
    for (const [guess, level] of [
      [input.subarray(1), 6],
      [input, 5],
    ] as const) {
      const ahead = startDeflateAhead(guess, level)!;
      const claims = (ahead as unknown as { claims: Int32Array }).claims;
      const stream = gzipStream([input], 6, input.length, ahead);
      await stream.next(); // the header: the blocks are not all deflated yet
      expect(Atomics.load(claims, claims.length - 1)).toBe(1); // the cancelled flag the worker reads
      await stream.return(undefined);
    }
  });

  it('small inputs (one block, several small blocks, a last block that is full) and an empty one', async () => {
    for (const size of [1000, 5 * MIN_DEFLATE_BLOCK_BYTES + 7, 8 * MIN_DEFLATE_BLOCK_BYTES, 0]) {
      const part = input.subarray(0, size);
      const ahead = startDeflateAhead(part, 6)!;
      expect((await gzipped(part, 6, ahead)).equals(await gzipped(part, 6))).toBe(true);
      expect(ahead.blocksTaken).toBe(Math.ceil(size / deflateBlockBytes(size)));
    }
  });

  it('is used once: a second gzipStream with the same guess takes nothing (the first ended it), and cancel() ends it before', async () => {
    const ahead = startDeflateAhead(input, 6)!;
    await gzipped(input, 6, ahead);
    const taken = ahead.blocksTaken;
    expect((await gzipped(input, 6, ahead)).equals(await gzipped(input, 6))).toBe(true);
    expect(ahead.blocksTaken).toBe(taken);
    const cancelled = startDeflateAhead(input, 6)!;
    cancelled.cancel();
    expect((await gzipped(input, 6, cancelled)).equals(await gzipped(input, 6))).toBe(true);
    expect(cancelled.blocksTaken).toBe(0);
  });

  it('with its worker prepared first (prepareDeflateAhead), or prepared and released unused: the same output, every block taken', async () => {
    const plain = await gzipped(input, 6);
    const release = prepareDeflateAhead();
    const prepared = startDeflateAhead(input, 6)!;
    release(); // after a start took the worker: changes nothing
    expect((await gzipped(input, 6, prepared)).equals(plain)).toBe(true);
    expect(prepared.blocksTaken).toBe(blocks);
    prepareDeflateAhead()(); // released unused: the next start makes a worker of its own
    const fresh = startDeflateAhead(input, 6)!;
    expect((await gzipped(input, 6, fresh)).equals(plain)).toBe(true);
    expect(fresh.blocksTaken).toBe(blocks);
  });

  it('never holds the process up: its worker is unref-ed while it deflates, ref-ed only while a block taken from it is awaited', async () => {
    // A ref-ed worker port is an active 'MessagePort'; a failed convert would wait for the whole deflate.
    const refedPorts = () => process.getActiveResourcesInfo().filter((r) => r === 'MessagePort').length;
    const before = refedPorts();
    const ahead = startDeflateAhead(input, 9)!;
    expect(refedPorts()).toBe(before);
    // Block here until the worker is on block 1, then take it: the message is not read before the await.
    const claims = (ahead as unknown as { claims: Int32Array }).claims;
    const pause = new Int32Array(new SharedArrayBuffer(4));
    for (let waited = 0; Atomics.load(claims, 1) === 0 && waited < 30_000; waited += 5) Atomics.wait(pause, 0, 0, 5);
    expect(Atomics.load(claims, 1)).toBe(1);
    const taken = (ahead as unknown as { take(i: number): Promise<Buffer> }).take(1);
    // Awaited: an unref-ed worker would let the process exit with the write half done.
    expect(refedPorts()).toBe(before + 1);
    expect((await taken).length).toBeGreaterThan(0);
    expect(refedPorts()).toBe(before);
    ahead.cancel();
  });

  it('the browser build (pako on the calling thread) deflates nothing ahead', () => {
    expect(browserStartDeflateAhead(input, 6)).toBeUndefined();
    expect(browserStartDeflateAheadOfArriving(new Uint8Array(new SharedArrayBuffer(16)), 6)).toBeUndefined();
  });
});

/** Blocks until `done()` (the worker thread works meanwhile; this thread does not turn its event loop). */
function waitFor(done: () => boolean): boolean {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let waited = 0; !done() && waited < 30_000; waited += 5) Atomics.wait(pause, 0, 0, 5);
  return done();
}

describe('deflating ahead of bytes still arriving (startDeflateAheadOfArriving)', () => {
  const input = profileLike(6 * DEFLATE_BLOCK_BYTES + 12_345, 29);
  const claimsOf = (ahead: unknown) => (ahead as { claims: Int32Array }).claims;

  /** A shared buffer of `capacity` bytes that `bytes` are written into (`arrive`, `end`), deflated ahead at `level`. */
  function arriving(bytes: Uint8Array, capacity = bytes.length + 1000, level = 6) {
    const buffer = new Uint8Array(new SharedArrayBuffer(capacity));
    const ahead = startDeflateAheadOfArriving(buffer, level)!;
    let at = 0;
    return {
      ahead,
      /** Writes up to `to` and says so. */
      arrive(to: number) {
        buffer.set(bytes.subarray(at, to), at);
        at = to;
        ahead.arrived(at);
      },
      end() {
        this.arrive(bytes.length);
        ahead.end(bytes.length);
      },
    };
  }

  it('deflates the blocks before the bytes end (each whole block with bytes after it), and the output is the one made without', async () => {
    const plain = await gzipped(input, 6);
    const blocks = Math.ceil(input.length / DEFLATE_BLOCK_BYTES);
    const a = arriving(input);
    // Not even the first block while the block size is unknown (the total could still be small).
    a.arrive(DEFLATE_BLOCK_BYTES + 1);
    a.arrive(4 * DEFLATE_BLOCK_BYTES);
    const claims = claimsOf(a.ahead);
    // Blocks 0–2 are whole with bytes after them; block 3 ends where the bytes do: it may be the last.
    expect(waitFor(() => Atomics.load(claims, 2) === 1)).toBe(true);
    expect(Atomics.load(claims, 3)).toBe(0);
    a.end();
    const early = await gzipped(input, 6, a.ahead);
    expect(a.ahead.blocksTaken).toBe(blocks);
    expect(early.equals(plain)).toBe(true);
  });

  it('a total ending on a block boundary the worker reached before the end: that block ends the stream (Z_FINISH), the same output', async () => {
    const exact = input.subarray(0, 5 * DEFLATE_BLOCK_BYTES);
    const a = arriving(exact);
    a.arrive(5 * DEFLATE_BLOCK_BYTES);
    const claims = claimsOf(a.ahead);
    expect(waitFor(() => Atomics.load(claims, 3) === 1)).toBe(true);
    a.end();
    const early = await gzipped(exact, 6, a.ahead);
    expect(a.ahead.blocksTaken).toBe(5);
    expect(early.equals(await gzipped(exact, 6))).toBe(true);
    expect(gunzipSync(early).equals(exact)).toBe(true);
  });

  it('totals whose block size is known only at the end (under 2 MiB), an empty input, and many small arrivals: the same output, every block taken', async () => {
    for (const size of [0, 1000, 3 * MIN_DEFLATE_BLOCK_BYTES + 5, 2 * DEFLATE_BLOCK_BYTES - 1, input.length]) {
      const part = input.subarray(0, size);
      const a = arriving(part);
      for (let at = 65_536; at < size; at += 65_536) a.arrive(at);
      a.end();
      expect((await gzipped(part, 6, a.ahead)).equals(await gzipped(part, 6)), `${size} bytes`).toBe(true);
      expect(a.ahead.blocksTaken, `${size} bytes`).toBe(Math.ceil(size / deflateBlockBytes(size)));
    }
  });

  it('takes nothing before the end, and a total past the buffer cancels: the output is the one made without', async () => {
    const a = arriving(input, input.length);
    a.arrive(input.length);
    // Not ended: gzipStream cannot know the blocks are the bytes it gets.
    expect((await gzipped(input, 6, a.ahead)).equals(await gzipped(input, 6))).toBe(true);
    expect(a.ahead.blocksTaken).toBe(0);
    const past = arriving(input, 4 * DEFLATE_BLOCK_BYTES);
    past.arrive(3 * DEFLATE_BLOCK_BYTES);
    past.ahead.end(input.length);
    const claims = claimsOf(past.ahead);
    expect(Atomics.load(claims, claims.length - 1)).toBe(1); // the cancelled flag the worker reads
    expect((await gzipped(input, 6, past.ahead)).equals(await gzipped(input, 6))).toBe(true);
    expect(past.ahead.blocksTaken).toBe(0);
  });

  it('cancel() while the bytes arrive wakes and stops the worker (it waits for bytes): its thread ends', async () => {
    const a = arriving(input);
    a.arrive(5 * DEFLATE_BLOCK_BYTES);
    const claims = claimsOf(a.ahead);
    // Blocks 0–3 claimed: the worker then sleeps until block 4 is known not to be the last.
    expect(waitFor(() => Atomics.load(claims, 3) === 1)).toBe(true);
    const worker = (a.ahead as unknown as { worker: import('node:worker_threads').Worker }).worker;
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    a.ahead.cancel();
    await exited;
    expect(Atomics.load(claims, 4)).toBe(0);
  });

  it('a total short of the bytes said to have arrived (a caller bug) cancels: blocks deflated as not the last are never taken, the output is the one made without', async () => {
    const a = arriving(input);
    a.arrive(5 * DEFLATE_BLOCK_BYTES);
    const claims = claimsOf(a.ahead);
    // Block 3 deflated as followed by more bytes (Z_SYNC_FLUSH), though the total below ends inside it.
    expect(waitFor(() => Atomics.load(claims, 3) === 1)).toBe(true);
    const short = input.subarray(0, 3 * DEFLATE_BLOCK_BYTES + 1000);
    a.ahead.arrived(3 * DEFLATE_BLOCK_BYTES); // going back is ignored: the worker went past it
    a.ahead.end(short.length);
    expect(Atomics.load(claims, claims.length - 1)).toBe(1);
    const out = await gzipped(short, 6, a.ahead);
    expect(out.equals(await gzipped(short, 6))).toBe(true);
    expect(gunzipSync(out).equals(short)).toBe(true);
  });

  it('refuses bytes not on a SharedArrayBuffer (the worker could not see them)', () => {
    expect(startDeflateAheadOfArriving(new Uint8Array(16), 6)).toBeUndefined();
  });
});
