import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { createRegistry, formatPprofDump } from '@profkit/core/node';
import gperftoolsHeapAdapter, { gperftoolsHeapAdapter as named, sniffGperftools as sniff } from '../src/node.js';
import { haveCli, runCli } from '@profkit/test-utils';
import { bytes, haveShared, localFixture, pprofTestdata, sharedFixture } from './helpers.js';
import { readLegacy } from '../src/node.js';

function score(head: Uint8Array): { score: number; format?: string } {
  const r = sniff(head);
  return typeof r === 'number' ? { score: r } : r;
}

describe('sniff', () => {
  it('scores headers high and names the format', () => {
    expect(score(bytes('heap profile:    1:     8 [    1:     8] @ heapprofile\n'))).toMatchObject({ score: 0.95, format: 'gperftools-heap' });
    expect(score(bytes('heap profile: 1: 8 [1: 8] @ heap_v2/524288\n'))).toMatchObject({ format: 'gperftools-heap' });
    expect(score(bytes('heap profile: 1: 8 [1: 8] @ growthz\n'))).toMatchObject({ format: 'gperftools-heap' });
    expect(score(localFixture('warn.heap'))).toMatchObject({ score: 0.95, format: 'gperftools-heap' });
    expect(score(localFixture('go.mutex'))).toMatchObject({ format: 'gperftools-contention' });
    expect(score(bytes('--- contentionz 1 ---\n'))).toMatchObject({ format: 'gperftools-contention' });
    expect(score(bytes('--- threadz 1 ---\n'))).toMatchObject({ format: 'gperftools-thread' });
    expect(score(bytes('goroutine profile: total 4\n'))).toMatchObject({ format: 'gperftools-thread' });
    const cpu = new Uint8Array(40);
    new DataView(cpu.buffer).setBigUint64(8, 3n, true);
    new DataView(cpu.buffer).setBigUint64(24, 10000n, true);
    expect(score(cpu)).toMatchObject({ score: 0.95, format: 'gperftools-cpu' });
  });

  it('scores other inputs 0', () => {
    expect(score(bytes('hello\n')).score).toBe(0);
    expect(score(new Uint8Array([0x1f, 0x8b, 0, 0])).score).toBe(0);
    expect(score(new Uint8Array(40)).score).toBe(0);
    expect(score(new Uint8Array(0)).score).toBe(0);
  });

  it('exports the adapter as default and named export', () => {
    expect(named).toBe(gperftoolsHeapAdapter);
    expect(gperftoolsHeapAdapter.name).toBe('gperftools-heap');
    expect(gperftoolsHeapAdapter.formats.map((f) => f.id)).toEqual(['gperftools-heap', 'gperftools-cpu', 'gperftools-contention', 'gperftools-thread']);
  });
});

describe.skipIf(!haveShared)('through the registry', () => {
  it('detects and reads every legacy fixture', async () => {
    const reg = createRegistry([gperftoolsHeapAdapter]);
    for (const [name, format] of [
      ['cppbench.heap', 'gperftools-heap'],
      ['cppbench.cpu', 'gperftools-cpu'],
      ['java.cpu', 'gperftools-cpu'],
      ['cppbench.contention', 'gperftools-contention'],
      ['cppbench.thread', 'gperftools-thread'],
      ['go.godoc.thread', 'gperftools-thread'],
    ]) {
      const b = sharedFixture(`pprof/profile/testdata/${name}`);
      const r = await reg.read(b, { fileName: name! });
      expect(r.format).toBe(format);
      expect(formatPprofDump(r.profile)).toBe(readFileSync(join(pprofTestdata, `${name}.string`), 'utf8'));
    }
  });
});

describe.skipIf(!haveShared)('gzip-compressed input', () => {
  it('reads a gzipped heap profile through the registry', async () => {
    const reg = createRegistry([gperftoolsHeapAdapter]);
    const r = await reg.read(gzipSync(sharedFixture('pprof/profile/testdata/cppbench.heap')), { fileName: 'cppbench.heap.gz' });
    expect([r.format, r.gzipped]).toEqual(['gperftools-heap', true]);
    expect(formatPprofDump(r.profile)).toBe(readFileSync(join(pprofTestdata, 'cppbench.heap.string'), 'utf8'));
  });
});

describe.skipIf(!haveShared || !haveCli('gperftools-heap CLI tests'))('profkit convert (CLI, spawned)', () => {
  it('converts cppbench.heap to gperftools heap text and back to the same meaning', () => {
    const dir = mkdtempSync(join(tmpdir(), 'profkit-gperf-cli-'));
    try {
      const src = join(dir, 'in.heap');
      writeFileSync(src, sharedFixture('pprof/profile/testdata/cppbench.heap'));
      const out = join(dir, 'out.heap');
      const r = runCli(['convert', src, out, '--to', 'gperftools-heap']);
      expect(r.code, r.stderr).toBe(0);
      const text = readFileSync(out, 'utf8');
      expect(text.startsWith('heap profile:    144:  8498176 [   144:  8498176] @ heap_v2/524288\n')).toBe(true);
      expect(text).toContain('\nMAPPED_LIBRARIES:\n00400000-00fcb000 r-xp 00000000 00:00 0           /home/cppbench_server_main\n');
      const original = readLegacy(sharedFixture('pprof/profile/testdata/cppbench.heap')).profile;
      expect(formatPprofDump(readLegacy(new TextEncoder().encode(text)).profile)).toBe(formatPprofDump(original));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
