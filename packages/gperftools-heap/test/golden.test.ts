import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertValid, formatPprofDump, isProfkitError } from '@profkit/core/node';
import { readLegacy } from '../src/node.js';
import { haveShared, pprofTestdata, sharedFixture } from './helpers.js';

/** Every legacy fixture of google/pprof's profile/testdata, with the format we report for it. */
const GOLDEN: [string, string][] = [
  ['cppbench.heap', 'gperftools-heap'],
  ['cppbench.growth', 'gperftools-heap'],
  ['cppbench.cpu', 'gperftools-cpu'],
  ['cppbench.contention', 'gperftools-contention'],
  ['cppbench.thread', 'gperftools-thread'],
  ['cppbench.thread.all', 'gperftools-thread'],
  ['cppbench.thread.none', 'gperftools-thread'],
  ['gobench.heap', 'gperftools-heap'],
  ['gobench.cpu', 'gperftools-cpu'],
  ['go.crc32.cpu', 'gperftools-cpu'],
  ['go.godoc.thread', 'gperftools-thread'],
  ['java.cpu', 'gperftools-cpu'],
  ['java.heap', 'gperftools-heap'],
  ['java.contention', 'gperftools-contention'],
];

describe.skipIf(!haveShared)('golden conformance with google/pprof Profile.String()', () => {
  for (const [name, format] of GOLDEN) {
    it(`${name} dumps exactly as ${name}.string`, () => {
      const r = readLegacy(sharedFixture(`pprof/profile/testdata/${name}`), { fileName: name });
      expect(r.format).toBe(format);
      assertValid(r.profile, name);
      const want = readFileSync(join(pprofTestdata, `${name}.string`), 'utf8');
      expect(formatPprofDump(r.profile)).toBe(want);
    });
  }

  it('reads internal/driver/testdata/cppbench.small.contention', () => {
    const r = readLegacy(sharedFixture('pprof/internal/driver/testdata/cppbench.small.contention'), { fileName: 'cppbench.small.contention' });
    assertValid(r.profile);
    expect(r.format).toBe('gperftools-contention');
    // One row "100 10 @ …" with sampling period 100 and cycles/second 3201000000.
    expect(r.profile.samples['.values'][0]![0]).toBe(10n * 100n);
    expect(r.profile.samples['.values'][1]![0]).toBe(BigInt(Math.trunc((100 * 100) / 3.201)));
    expect(r.profile['.mappings'].filename[0]).toBe('cppbench_server_main');
  });

  it('rejects the crashing fuzz input (Java heapz with a zero count) with a typed error', () => {
    let err: unknown;
    try {
      readLegacy(sharedFixture('pprof/fuzz/testdata/7e3c92482f6f39fc502b822ded792c589849cca8'), { fileName: '7e3c9248' });
    } catch (e) {
      err = e;
    }
    expect(isProfkitError(err)).toBe(true);
    const e = err as { code: string; message: string; detail: Record<string, unknown> };
    expect(e.code).toBe('PROFKIT_E_PARSE');
    expect(e.message).toMatch(/second value must be non-zero/);
    expect(e.detail).toMatchObject({ file: '7e3c9248', line: 2 });
  });

  it('rejects the empty corpus input', () => {
    let err: unknown;
    try {
      readLegacy(sharedFixture('pprof/fuzz/corpus/empty'), { fileName: 'empty' });
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'PROFKIT_E_EMPTY_INPUT', detail: { file: 'empty' } });
  });

  it('attaches google/pprof default drop/keep frames by profile type', () => {
    const heap = readLegacy(sharedFixture('pprof/profile/testdata/cppbench.heap')).profile['.profile'];
    expect(heap.drop_frames.split('|')).toContain('tcmalloc::.*');
    expect(heap.keep_frames).toBe('runtime\\.panic|runtime\\.reflectcall|runtime\\.call[0-9]*');
    const cont = readLegacy(sharedFixture('pprof/profile/testdata/cppbench.contention')).profile['.profile'];
    expect(cont.drop_frames.split('|')[0]).toBe('RecordLockProfileData');
    expect(cont.keep_frames).toBe('');
    const cpu = readLegacy(sharedFixture('pprof/profile/testdata/cppbench.cpu')).profile['.profile'];
    expect(cpu.drop_frames).toBe('ProfileData::Add|ProfileData::prof_handler|CpuProfiler::prof_handler|__pthread_sighandler|__restore');
  });
});
