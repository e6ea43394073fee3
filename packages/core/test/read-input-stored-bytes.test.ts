/**
 * `ReadInput.storedBytes`: the size of a read's source as stored (compressed when gzipped), known
 * before reading for a file, bytes and a Blob, absent for a stream. The pprof codec reads an input
 * stored past its one-buffer bound as a stream from the start (nothing decoded or deflated ahead
 * in vain).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { ProfileBuilder, createRegistry, defineAdapter, type ReadInput } from '../src/node/index.js';

const dir = mkdtempSync(join(tmpdir(), 'profkit-stored-bytes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** An adapter of `#seen` text whose read records the input it was handed. */
function recordingAdapter(seen: ReadInput[]) {
  return defineAdapter({
    name: 'seen',
    formats: [{ id: 'seen', extensions: ['.seen'], binary: false }],
    sniff: (head) => (new TextDecoder().decode(head).startsWith('#seen') ? 1 : 0),
    load: async () => ({
      async read(input: ReadInput) {
        seen.push(input);
        await input.bytes();
        const profile = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] }).build();
        return { profile, warnings: [], format: 'seen' };
      },
    }),
  });
}

describe('ReadInput.storedBytes', () => {
  const text = new TextEncoder().encode('#seen\n' + 'x'.repeat(5000));
  const gz = new Uint8Array(gzipSync(text));

  it('is the stored size of a file (compressed when gzipped) and of bytes, and absent for a stream', async () => {
    const seen: ReadInput[] = [];
    const registry = createRegistry([recordingAdapter(seen)]);
    const plain = join(dir, 'in.seen');
    const packed = join(dir, 'in.seen.gz');
    writeFileSync(plain, text);
    writeFileSync(packed, gz);
    await registry.read(plain, { validate: false });
    await registry.read(packed, { validate: false });
    await registry.read(gz, { validate: false });
    async function* stream(): AsyncGenerator<Uint8Array> {
      yield gz;
    }
    await registry.read(stream(), { validate: false });
    expect(seen.map((i) => [i.gzipped, i.storedBytes])).toEqual([
      [false, text.length],
      [true, gz.length],
      [true, gz.length],
      [true, undefined],
    ]);
  });
});
