/**
 * The contention and thread writers: what they write, `go tool pprof -raw` reads back to the same
 * profile (byte for byte against pprof's reading of the original, or against profkit's `raw`
 * report of the written profile), and the adapter lists both formats as writable.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ProfileBuilder, goPprofLoad, rawReport, scale, type Profile } from '@profkit/core';
import gperftoolsHeapAdapter, { MAX_THREADZ_SECTIONS, readLegacy } from '../src/index.js';
import { codec } from '../src/codec.js';
import { catchError, haveCommand, haveShared, sharedFixture } from './helpers.js';

const haveGo = haveCommand('go');
if (!haveGo) console.warn('gperftools contention/thread writers: `go` not installed (apt-get install golang-go); go tool pprof round trips skipped');

const work = mkdtempSync(join(tmpdir(), 'profkit-ct-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function goRaw(file: string): string {
  const r = spawnSync('go', ['tool', 'pprof', '-raw', '-symbolize=none', file], {
    encoding: 'utf8',
    env: { ...process.env, TZ: 'UTC', HOME: work, PPROF_TMPDIR: work, PPROF_BINARY_PATH: work, GOFLAGS: '' },
    timeout: 60_000,
  });
  if (r.status !== 0) throw new Error(`go tool pprof failed on ${file}: ${r.stderr}`);
  return r.stdout;
}

async function written(p: Profile, format: string, options?: Record<string, unknown>): Promise<{ text: string; warnings: string[] }> {
  const r = await codec.write(p, { format, options } as Parameters<typeof codec.write>[1]);
  return { text: new TextDecoder().decode(r.data as Uint8Array), warnings: r.warnings.map((w) => w.code) };
}

function save(name: string, text: string): string {
  const f = join(work, name);
  writeFileSync(f, text);
  return f;
}

const ourRaw = async (p: Profile) => rawReport((await goPprofLoad(p)).profile);

describe('contention and thread formats are writable', () => {
  it('the adapter registers both as writable', () => {
    const f = Object.fromEntries(gperftoolsHeapAdapter.formats.map((x) => [x.id, x]));
    expect(f['gperftools-contention']!.write).toBe(true);
    expect(f['gperftools-thread']!.write).toBe(true);
  });

  it('threadz: a count of N is N thread sections, the later ones "[same as previous thread]"', async () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'thread', unit: 'count' }] });
    const m = b.internMapping({ memoryStart: 0x400000n, memoryLimit: 0x500000n, filename: '/usr/bin/app' });
    const leaf = b.internLocation({ address: 0x401000n, mappingId: m });
    const caller = b.internLocation({ address: 0x402000n, mappingId: m });
    b.addSample([leaf, caller], [3n]);
    const { text } = await written(b.build(), 'gperftools-thread');
    expect(text.match(/^--- Thread /gm)!.length).toBe(3);
    expect(text.match(/\[same as previous thread\]/g)!.length).toBe(2);
    // The leaf is written as recorded, callers as return addresses (+1): reading gives them back.
    expect(text).toContain('  0x401000\n  0x402001\n');
    const back = readLegacy(new TextEncoder().encode(text)).profile;
    expect(Array.from(back.samples['.values'][0]!)).toEqual([3n]);
    expect(Array.from(back.locations['.address'])).toEqual([0x401000n, 0x402000n]);
  });

  it('threadz writes a stack of 500 000 frames (one line each, no call-stack overflow)', async () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'thread', unit: 'count' }] });
    const loc = b.internLocation({ address: 0x401000n });
    b.addSample(new Array<number>(500_000).fill(loc), [1n]);
    const { text } = await written(b.build(), 'gperftools-thread', { kind: 'threadz' });
    expect(text.match(/^ {2}0x40100[01]$/gm)!.length).toBe(500_000);
  });

  it('threadz refuses more than MAX_THREADZ_SECTIONS threads (bounded output); kind=count writes them as one row', async () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'thread', unit: 'count' }] });
    b.addSample([b.internLocation({ address: 0x401000n })], [BigInt(MAX_THREADZ_SECTIONS) + 1n]);
    const p = b.build();
    const e = await catchAsync(() => written(p, 'gperftools-thread'));
    expect(e.code).toBe('PROFKIT_E_UNSUPPORTED');
    expect(e.detail.option).toBe('kind');
    const { text } = await written(p, 'gperftools-thread', { kind: 'count' });
    expect(text).toBe(`thread profile: total ${MAX_THREADZ_SECTIONS + 1}\n${MAX_THREADZ_SECTIONS + 1} @ 0x401001\n--- Memory map: ---\n`);
  });

  it('a profile without contention types or with a non-time delay is refused with a typed error', async () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
    b.addSample([b.internLocation({ address: 0x10n })], [1n]);
    expect((await catchAsync(() => written(b.build(), 'gperftools-contention'))).code).toBe('PROFKIT_E_UNSUPPORTED');
    const c = new ProfileBuilder({ sampleTypes: [{ type: 'contentions', unit: 'count' }, { type: 'delay', unit: 'bytes' }] });
    c.addSample([c.internLocation({ address: 0x10n })], [1n, 2n]);
    expect((await catchAsync(() => written(c.build(), 'gperftools-contention'))).message).toMatch(/not a time unit/);
  });

  it('an unknown thread kind is a usage error naming the option', async () => {
    const p = readLegacy(sharedFixtureOrEmpty('cppbench.thread')).profile;
    const e = await catchAsync(() => written(p, 'gperftools-thread', { kind: 'nope' }));
    expect(e.code).toBe('PROFKIT_E_USAGE');
    expect(e.detail.option).toBe('kind');
  });
});

async function catchAsync(f: () => Promise<unknown>): Promise<{ code: string; message: string; detail: Record<string, unknown> }> {
  try {
    await f();
  } catch (e) {
    return catchError(() => {
      throw e;
    });
  }
  throw new Error('expected an error');
}

function sharedFixtureOrEmpty(name: string): Uint8Array {
  return haveShared ? sharedFixture(`pprof/profile/testdata/${name}`) : new TextEncoder().encode('--- threadz 1 ---\n\n--- Thread 1 (name: a/1) stack: ---\n  0x10\n--- Memory map: ---\n');
}

describe.skipIf(!haveShared || !haveGo)('round trip through go tool pprof -raw', () => {
  const fixtures: [string, string][] = [
    ['pprof/profile/testdata/cppbench.contention', 'gperftools-contention'],
    ['pprof/internal/driver/testdata/cppbench.small.contention', 'gperftools-contention'],
    ['pprof/profile/testdata/cppbench.thread', 'gperftools-thread'],
    ['pprof/profile/testdata/cppbench.thread.all', 'gperftools-thread'],
    ['pprof/profile/testdata/cppbench.thread.none', 'gperftools-thread'],
    ['pprof/profile/testdata/go.godoc.thread', 'gperftools-thread'],
  ];

  it.each(fixtures)('%s: pprof reads what we write as it reads the original', async (rel, format) => {
    const original = sharedFixture(rel);
    const p = readLegacy(original).profile;
    const out = await written(p, format);
    const name = rel.split('/').pop()!;
    expect(goRaw(save(`rt-${name}`, out.text))).toBe(goRaw(save(`orig-${name}`, new TextDecoder().decode(original))));
  });

  it('changed contention values are written so that pprof reads exactly them', async () => {
    const p = scale(readLegacy(sharedFixture('pprof/profile/testdata/cppbench.contention')).profile, 3);
    const out = await written(p, 'gperftools-contention');
    expect(out.text).toMatch(/^--- contention:\ncycles\/second = 1000000000\nsampling period = 1\n/);
    // Scaled delays are not all multiples of the period 100: period 1, said in a warning.
    expect(out.warnings).toContain('PROFKIT_W_GPERFTOOLS_PERIOD_ONE');
    const withoutPeriod = (s: string) => s.replace(/^Period: \d+\n/m, '');
    expect(withoutPeriod(goRaw(save('scaled.contention', out.text)))).toBe(withoutPeriod(await ourRaw(p)));
  });

  it('Java contention (delays in microseconds) is written in nanoseconds', async () => {
    const p = readLegacy(sharedFixture('pprof/profile/testdata/java.contention')).profile;
    const out = await written(p, 'gperftools-contention');
    const back = readLegacy(new TextEncoder().encode(out.text)).profile;
    const iDelay = p.sample_types.type.indexOf('delay');
    expect(p.sample_types.unit[iDelay]).toBe('microseconds');
    expect(Array.from(back.samples['.values'][1]!)).toEqual(Array.from(p.samples['.values'][iDelay]!, (v) => v * 1000n));
    expect(Array.from(back.samples['.values'][0]!)).toEqual(Array.from(p.samples['.values'][p.sample_types.type.indexOf('contentions')]!));
  });

  it('thread counts of a changed profile, as threadz and as a Go count profile', async () => {
    const p = scale(readLegacy(sharedFixture('pprof/profile/testdata/go.godoc.thread')).profile, 2);
    for (const kind of ['threadz', 'count']) {
      const out = await written(p, 'gperftools-thread', { kind });
      expect(goRaw(save(`scaled-${kind}.thread`, out.text)).replace(/^PeriodType: .*\n/m, '').replace(/^(\S+)\/count\[?/m, 'T/count')).toBe(
        (await ourRaw(p)).replace(/^PeriodType: .*\n/m, '').replace(/^(\S+)\/count\[?/m, 'T/count'),
      );
    }
  });
});
