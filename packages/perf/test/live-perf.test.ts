/**
 * The real producer: `perf record --call-graph dwarf` of a C program built here (an always-inline
 * function in a noinline one), then `perf script -F +srcline`, read through a registry. Skipped,
 * with the reason, where perf, gcc or perf_event_open are not available (perf_event_paranoid > 2,
 * a container without the syscall).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ProfileIndex, resolveStack } from '@profkit/core';
import { createRegistry } from '@profkit/core/node';
import { which } from '@profkit/test-utils';
import perfAdapter from '../src/index.js';
import { expectValid } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'profkit-perf-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function skipReason(): string | undefined {
  if (!which('perf')) return 'perf is not installed (apt-get install -y linux-perf)';
  if (!which('gcc')) return 'gcc is not installed';
  const r = spawnSync('perf', ['record', '-q', '-e', 'cpu-clock:u', '-o', join(dir, 'probe.data'), '--', 'true'], { encoding: 'utf8' });
  if (r.status !== 0) return `perf record does not run here: ${(r.stderr || '').trim().split('\n')[0]}`;
  return undefined;
}

const reason = skipReason();
if (reason) console.warn(`@profkit/perf live test skipped: ${reason}`);

describe.skipIf(reason !== undefined)('perf record + perf script on a program built here', () => {
  it('reads user frames, the inlined function with its source line, one sample per event line', async () => {
    const src = join(dir, 'inl.c');
    writeFileSync(
      src,
      [
        '#include <stdio.h>',
        'static inline __attribute__((always_inline)) double leaf(double x) { for (int i = 0; i < 1000; i++) x = x * 1.0000001 + 0.5; return x; }',
        '__attribute__((noinline)) double mid(double x) { return leaf(x) + leaf(x + 1); }',
        'int main(void) { double s = 0; for (long i = 0; i < 100000; i++) s += mid(i); printf("%f\\n", s); return 0; }',
        '',
      ].join('\n'),
    );
    const bin = join(dir, 'inl');
    execFileSync('gcc', ['-O2', '-g', '-o', bin, src]);
    const data = join(dir, 'perf.data');
    execFileSync('perf', ['record', '-q', '-e', 'cpu-clock:u', '--call-graph', 'dwarf', '-o', data, bin], { stdio: 'ignore' });
    const text = execFileSync('perf', ['script', '-i', data, '-F', '+srcline'], { encoding: 'utf8', maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'ignore'] });
    const file = join(dir, 'out.txt');
    writeFileSync(file, text);

    const r = await createRegistry([perfAdapter]).read(file);
    expect(r.format).toBe('perf-script');
    const p = r.profile;
    expectValid(p);
    const eventLines = text.split('\n').filter((l) => / cpu-clock:u: *$/.test(l)).length;
    expect(p.samples.value.length).toBe(eventLines);
    expect(p.sample_types).toEqual({ type: ['cpu-clock:u'], unit: ['nanoseconds'] });
    const index = new ProfileIndex(p);
    let inlinedLeaf = 0;
    for (let i = 0; i < p.samples.value.length; i++) {
      const frames = resolveStack(p, i, index);
      const k = frames.findIndex((f) => f.name === 'leaf');
      if (k >= 0 && frames[k]!.inlined && frames[k + 1]?.name === 'mid' && frames[k]!.filename === src.replace(/.*\//, '') && frames[k]!.line === 2) inlinedLeaf++;
    }
    // The program spends nearly all its time in leaf's loop.
    expect(inlinedLeaf).toBeGreaterThan(p.samples.value.length / 2);
    expect(p['.mappings'].filename).toContain(bin);
  });
});
