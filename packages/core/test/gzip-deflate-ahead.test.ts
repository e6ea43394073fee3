/**
 * Issue 17 (convert ahead of Go): `startDeflateAhead` deflates bytes a caller expects to write
 * (convert's pprof input, which a canonical pprof output repeats byte for byte) on the thread pool
 * before the write; `gzipStream` takes a block's early output only for the very bytes, with the
 * very block before it (its dictionary). Whatever the guess, the output is the one `gzipStream`
 * makes without it.
 */
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { DEFLATE_BLOCK_BYTES, MIN_DEFLATE_BLOCK_BYTES, deflateBlockBytes, gzipStream, prepareDeflateAhead, startDeflateAhead } from '../src/gzip-node.js';
import { startDeflateAhead as browserStartDeflateAhead } from '../src/gzip-browser.js';
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
  });
});
