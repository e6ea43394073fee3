/**
 * Stream inputs (stdin, FIFOs): read as they arrive, with `maxInputBytes` firing while streaming,
 * and handed to streaming readers through the same route as files (issue 15, item 2).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { rejectionOf } from '@profkit/test-utils';
import { StreamInput, createRegistry, defineAdapter, createProfile, ErrorCodes, isProfkitError, type ReadInput } from '../src/node/index.js';

/** An endless source of `chunk`-byte chunks that counts what was taken from it. */
function endless(chunk = 64 * 1024) {
  const counter = { bytes: 0 };
  async function* gen(): AsyncGenerator<Uint8Array> {
    const c = new Uint8Array(chunk).fill(0x61);
    for (;;) {
      counter.bytes += c.length;
      yield c;
    }
  }
  return { counter, source: gen() };
}

async function drain(it: AsyncIterable<Uint8Array>): Promise<number> {
  let n = 0;
  for await (const c of it) n += c.length;
  return n;
}

describe('StreamInput', () => {
  it('stops an endless stream at maxInputBytes while streaming it to a reader', async () => {
    const { counter, source } = endless();
    const input = new StreamInput(source, '-', { maxInputBytes: 1 << 20 });
    const e = await rejectionOf(drain(input.chunks()));
    expect(isProfkitError(e) && e.code).toBe(ErrorCodes.LIMIT);
    expect((e as { detail: { option?: string } }).detail.option).toBe('maxInputBytes');
    // It read one chunk past the limit, not the stream to its end.
    expect(counter.bytes).toBe((1 << 20) + 64 * 1024);
  });

  it('stops an endless stream at maxInputBytes while buffering it for a whole-buffer reader', async () => {
    const { counter, source } = endless();
    const e = await rejectionOf(new StreamInput(source, '-', { maxInputBytes: 1 << 20 }).bytes());
    expect((e as { detail: { option?: string } }).detail.option).toBe('maxInputBytes');
    expect(counter.bytes).toBe((1 << 20) + 64 * 1024);
  });

  it('replays the head and the first pass to a second pass', async () => {
    async function* three() {
      yield Uint8Array.of(1, 2);
      yield Uint8Array.of(3);
      yield Uint8Array.of(4, 5, 6);
    }
    const input = new StreamInput(three(), 'f');
    expect([...(await input.head(2))]).toEqual([1, 2]);
    const pass = async () => {
      const out: number[] = [];
      for await (const c of input.chunks()) out.push(...c);
      return out;
    };
    expect(await pass()).toEqual([1, 2, 3, 4, 5, 6]);
    expect(await pass()).toEqual([1, 2, 3, 4, 5, 6]);
    expect([...(await input.bytes())]).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('keeps no more than the replay budget of a long stream, and then refuses a second pass', async () => {
    async function* many() {
      for (let i = 0; i < 100; i++) yield new Uint8Array(1000).fill(i);
    }
    const input = new StreamInput(many(), 'f', {}, 10_000);
    let kept = 0;
    for await (const c of input.chunks()) {
      expect(c[0]).toBe(kept / 1000);
      kept += c.length;
      expect((input as unknown as { kept: Uint8Array[] }).kept.length).toBeLessThanOrEqual(11);
    }
    expect(kept).toBe(100_000);
    const e = await rejectionOf(drain(input.chunks()));
    expect(isProfkitError(e) && e.code).toBe(ErrorCodes.UNSUPPORTED);
  });
});

describe('registry.read of a FIFO', () => {
  const dir = mkdtempSync(join(tmpdir(), 'profkit-stream-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const haveMkfifo = spawnSync('mkfifo', ['--version']).status === 0;

  it.skipIf(!haveMkfifo)('streams the FIFO to a streaming reader, which stops it at its own limit without reading it whole', async () => {
    const fifo = join(dir, 'in.fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    // A writer that would write 1 GiB; the reader gives up after 2 MiB.
    const writer = spawn(process.execPath, ['-e', `const fs=require('fs');const fd=fs.openSync(${JSON.stringify(fifo)},'w');const b=Buffer.alloc(1<<16,0x61);b.write('LINES\\n');let n=0;try{for(;n<(1<<30);n+=b.length)fs.writeSync(fd,b)}catch{};process.stderr.write(String(n))`]);
    let written = '';
    writer.stderr.on('data', (d) => (written += d));
    const exited = new Promise((ok) => writer.on('exit', ok));
    const adapter = defineAdapter({
      apiVersion: 1,
      name: 'lines',
      formats: [{ id: 'lines', extensions: ['.lines'], binary: false }],
      sniff: (head) => (new TextDecoder().decode(head.subarray(0, 6)) === 'LINES\n' ? 1 : 0),
      async read(input: ReadInput) {
        let n = 0;
        for await (const c of input.chunks()) {
          n += c.length;
          if (n > 2 << 20) throw new Error('reader limit');
        }
        return { profile: createProfile({}), warnings: [] };
      },
    });
    const registry = createRegistry([adapter]);
    const e = await rejectionOf(registry.read(fifo));
    expect(String((e as Error).message)).toContain('reader limit');
    await exited;
    // Before, the FIFO was read whole (up to maxInputBytes) before the reader saw a byte.
    expect(Number(written)).toBeLessThan(64 << 20);
  });
});
