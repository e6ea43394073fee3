/**
 * A registry read of a file in chunks opens it for its head (detection) and for the stream only:
 * whether it is gzip is known from that head, so `readChunks` does not open it a third time for
 * its first two bytes (three thread-pool round trips the main thread waited for before a convert's
 * read could start).
 */
import { mkdtempSync, promises as fsp, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { ProfileBuilder, createRegistry, defineAdapter, readChunks, type ReadInput } from '../src/node/index.js';

const dir = mkdtempSync(join(tmpdir(), 'profkit-read-chunks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

/** An adapter of `#chunked` text whose read takes its input in chunks and records the text. */
function chunkedAdapter(texts: string[]) {
  return defineAdapter({
    name: 'chunked',
    formats: [{ id: 'chunked', extensions: ['.chunked'], binary: false }],
    sniff: (head) => (new TextDecoder().decode(head).startsWith('#chunked') ? 1 : 0),
    read: async (input: ReadInput) => {
      let text = '';
      const decoder = new TextDecoder();
      for await (const chunk of input.chunks()) text += decoder.decode(chunk, { stream: true });
      texts.push(text + decoder.decode());
      return { profile: new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] }).build(), warnings: [] };
    },
  });
}

describe('reading a file in chunks', () => {
  const text = '#chunked\n' + 'x'.repeat(300_000);

  it('opens a plain and a gzip file once with promises.open (the head), and reads them whole', async () => {
    const plain = join(dir, 'in.chunked');
    const packed = join(dir, 'in.chunked.gz');
    writeFileSync(plain, text);
    writeFileSync(packed, gzipSync(text));
    const open = vi.spyOn(fsp, 'open');
    const texts: string[] = [];
    const registry = createRegistry([chunkedAdapter(texts)]);
    await registry.read(plain, { validate: false });
    await registry.read(packed, { validate: false });
    expect(texts).toEqual([text, text]);
    expect(open.mock.calls.map((c) => c[0])).toEqual([plain, packed]);
  });

  it('still finds out itself whether a file is gzip when the caller does not say', async () => {
    const packed = join(dir, 'alone.gz');
    writeFileSync(packed, gzipSync(text));
    const chunks: Uint8Array[] = [];
    for await (const c of readChunks(packed)) chunks.push(c);
    expect(Buffer.concat(chunks).toString()).toBe(text);
    const raw: Uint8Array[] = [];
    for await (const c of readChunks(packed, { gzip: false })) raw.push(c);
    expect(Buffer.concat(raw)).toEqual(gzipSync(text));
  });
});
