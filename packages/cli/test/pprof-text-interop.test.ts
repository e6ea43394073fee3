/**
 * `profkit raw`, `traces` and `tags` against `go tool pprof -raw`, `-traces` and `-tags`, byte for
 * byte, on profiles of different producers: the Go runtime (made here by
 * `fixtures/goprof/main.go`: CPU with pprof labels, heap, legacy mutex and goroutine text),
 * gperftools (heap, CPU, contention, threadz fixtures), Java legacy profiles, R (Rprof read
 * directly, compared with pprof on its profkit conversion), and google/pprof's own test profiles.
 *
 * Documented normalisation: pprof runs with `TZ=UTC` (profkit prints `Time:` in UTC) and
 * `-symbolize=none` (profkit does not symbolize on load); nothing else.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fixture, goAvailable, hasFixtures, profkit } from './views-helpers.js';
import { goPprofAsCompared, goProfilesNow, gperftoolsProfilesNow, haveGperftools, warnIfNoGperftools } from './producers.js';

const tmp = mkdtempSync(join(tmpdir(), 'profkit-pprof-text-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const goPprof = (args: string[]) => goPprofAsCompared(args, tmp);

const T = 'pprof/profile/testdata/';
/** Fixtures of different producers that `go tool pprof` reads as they are. */
const FIXTURES = [
  'pprof/internal/report/testdata/sample.cpu', // Go runtime CPU (profile.proto)
  T + 'gobench.heap', // Go legacy heap text
  T + 'go.godoc.thread', // Go legacy goroutine count text
  T + 'cppbench.heap', // gperftools heap (drop_frames applied)
  T + 'cppbench.cpu', // gperftools binary CPU
  T + 'cppbench.contention', // gperftools contention
  T + 'cppbench.thread', // threadz
  T + 'java.heap', // Java heapz
  T + 'java.cpu', // Java CPU (no mappings: pprof's placeholder mapping)
  'pprof/internal/driver/testdata/go.nomappings.crash',
  'r-profile/inst/samples/proto/1.out.prof.pb.gz', // R (empty function names)
];

const MODES = ['raw', 'traces', 'tags'] as const;

async function expectSameAsPprof(mode: (typeof MODES)[number], ours: string, theirs = ours, extra: string[] = []): Promise<string> {
  const g = goPprof([`-${mode}`, ...extra.map((a) => a.replace(/^--sample-type=/, '-sample_index=')), theirs]);
  expect(g.code, g.stderr).toBe(0);
  const r = await profkit([mode, ours, ...extra, '--quiet']);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toBe(g.stdout);
  return r.stdout;
}

describe.skipIf(!hasFixtures || !goAvailable)('raw / traces / tags = go tool pprof -raw / -traces / -tags', () => {
  it.each(FIXTURES)('%s', async (rel) => {
    for (const mode of MODES) await expectSameAsPprof(mode, fixture(rel));
  });

  it('large.cpu (23k functions, 10k samples)', async () => {
    const f = fixture('pprof/internal/proftest/testdata/large.cpu');
    expect((await expectSameAsPprof('raw', f)).length).toBeGreaterThan(1_000_000);
    await expectSameAsPprof('traces', f);
  });

  it('other sample types (-sample_index)', async () => {
    for (const t of ['alloc_space', 'inuse_objects']) {
      await expectSameAsPprof('traces', fixture(T + 'gobench.heap'), undefined, [`--sample-type=${t}`]);
      expect(await expectSameAsPprof('tags', fixture(T + 'gobench.heap'), undefined, [`--sample-type=${t}`])).toMatch(/^ *bytes: Total /);
    }
  });

  it('an Rprof profile read directly prints what pprof prints for its profile.proto conversion', async () => {
    const src = fixture('r-profile/inst/samples/rprof/1.out');
    const pb = join(tmp, 'rprof-1.pb.gz');
    const c = await profkit(['convert', src, pb, '--quiet']);
    expect(c.code, c.stderr).toBe(0);
    for (const mode of MODES) await expectSameAsPprof(mode, src, pb);
  });
});

describe.skipIf(!goAvailable)('raw / traces / tags on profiles the Go runtime writes now', () => {
  const dir = join(tmp, 'go');
  goProfilesNow(dir, tmp);

  it('CPU profile with pprof labels: tags lists the label values, traces the labels per sample', async () => {
    const cpu = join(dir, 'cpu.pb.gz');
    const tags = await expectSameAsPprof('tags', cpu);
    expect(tags).toMatch(/^ phase: Total /m);
    expect(tags).toMatch(/^ worker: Total /m);
    expect(tags).toMatch(/: slow$/m);
    const traces = await expectSameAsPprof('traces', cpu);
    expect(traces).toMatch(/^ +worker: +(fast|slow)$/m);
    await expectSameAsPprof('raw', cpu);
    const j = JSON.parse((await profkit(['tags', cpu, '--json'])).stdout);
    expect(j.schema).toBe('profkit.tags/1');
    expect(j.keys.map((k: { key: string }) => k.key)).toEqual(['phase', 'worker']);
    for (const k of j.keys) expect(k.values.reduce((s: bigint, v: { amount: string }) => s + BigInt(v.amount), 0n)).toBe(BigInt(k.total));
    const t = JSON.parse((await profkit(['traces', cpu, '--json'])).stdout);
    expect(t.samples.length).toBe(traces.split('-----------+').length - 2);
    expect(t.samples.some((s: { labels: Record<string, string[]> }) => s.labels.worker?.[0] === 'slow')).toBe(true);
  });

  it.each(['heap.pb.gz', 'mutex.contention', 'goroutine.thread'])('%s', async (name) => {
    for (const mode of MODES) await expectSameAsPprof(mode, join(dir, name));
  });

  it.each([
    ['mutex.contention', 'gperftools-contention'],
    ['goroutine.thread', 'gperftools-thread'],
  ])('%s written back by profkit convert --to %s reads in pprof as the original', async (name, format) => {
    const out = join(tmp, `rt-${name}`);
    const c = await profkit(['convert', join(dir, name), out, '--to', format, '--quiet']);
    expect(c.code, c.stderr).toBe(0);
    expect(goPprof(['-raw', out]).stdout).toBe(goPprof(['-raw', join(dir, name)]).stdout);
  });
});

warnIfNoGperftools('pprof-text interop');

describe.skipIf(!goAvailable || !haveGperftools)('raw / traces / tags on profiles gperftools writes now', () => {
  const dir = join(tmp, 'gperftools');
  const producedFiles = gperftoolsProfilesNow(dir);

  it('heap dumps and the CPU profile', async () => {
    const files = producedFiles();
    expect(files).toContain('cpu.prof');
    expect(files.length).toBeGreaterThanOrEqual(2);
    for (const f of files) for (const mode of MODES) await expectSameAsPprof(mode, join(dir, f));
  });
});
