/** The CLI (built, spawned from the repository root, where discovery finds @profkit/speedscope). */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { haveCli, runCli } from '@profkit/test-utils';

const fixtures = join(import.meta.dirname, 'fixtures');
const dir = mkdtempSync(join(tmpdir(), 'profkit-speedscope-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(!haveCli('@profkit/speedscope cli tests'))('profkit with @profkit/speedscope', () => {
  it('`profkit formats` lists speedscope from @profkit/speedscope, the example under its own id', () => {
    const r = runCli(['formats', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const adapters = (JSON.parse(r.stdout) as { adapters: { name: string; packageName: string; formats: { id: string }[] }[] }).adapters;
    expect(adapters.filter((a) => a.formats.some((f) => f.id === 'speedscope')).map((a) => a.packageName)).toEqual(['@profkit/speedscope']);
  });
  it('speedscope → pprof → speedscope through the CLI keeps both profiles and their stacks', () => {
    const src = join(fixtures, '0.6.0-two-sampled.speedscope.json');
    expect(runCli(['detect', src]).stdout).toContain('speedscope (adapter speedscope');
    const pb = join(dir, 'two.pb.gz');
    const back = join(dir, 'back.speedscope.json');
    expect(runCli(['convert', src, pb]).code).toBe(0);
    const c = runCli(['convert', pb, back]);
    expect(c.code, c.stderr).toBe(0);
    const original = JSON.parse(readFileSync(src, 'utf8')) as { profiles: { name: string; samples: number[][]; weights: number[] }[] };
    const written = JSON.parse(readFileSync(back, 'utf8')) as typeof original & { shared: { frames: { name: string }[] } };
    expect(written.profiles.map((p) => p.name)).toEqual(['one', 'two']);
    const names = (p: { samples: number[][]; weights: number[] }, frames: { name: string }[]) => p.samples.map((s, i) => `${s.map((f) => frames[f]!.name).join(';')} ${p.weights[i]}`);
    const originalFrames = (JSON.parse(readFileSync(src, 'utf8')) as { shared: { frames: { name: string }[] } }).shared.frames;
    expect(names(written.profiles[1]!, written.shared.frames)).toEqual(names(original.profiles[1]!, originalFrames));
  });
});
