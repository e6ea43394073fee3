/**
 * Issue 15 item 17: a V8 `.cpuprofile` (and the other well-known formats no installed adapter
 * reads) used to get "ambiguous or unknown format (scores: … all 0.00)". `detect` and every
 * reading command now say what the file is, with exit 4 and PROFKIT_E_UNKNOWN_FORMAT (with the
 * package to install for a first-party format); when an adapter for the format is installed
 * (@profkit/v8, the speedscope example), it reads the file.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haveCli, runCli } from '@profkit/test-utils';
import { repoRoot } from './views-helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'profkit-unsupported-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const cpuprofile = join(tmp, 'app.cpuprofile');

beforeAll(() => {
  // A real V8 CPU profile, written by this Node.
  const dir = join(tmp, 'cpu');
  mkdirSync(dir);
  execFileSync(process.execPath, ['--cpu-prof', '--cpu-prof-dir', dir, '-e', 'let s = 0; for (let i = 0; i < 3e6; i++) s += Math.sqrt(i);'], { env: { ...process.env, NODE_OPTIONS: '' }, timeout: 30_000 });
  copyFileSync(join(dir, readdirSync(dir)[0]!), cpuprofile);
}, 60_000);

/** The one error line of a failed command (`profkit: file: message [CODE]`). */
function errorLine(stderr: string): string {
  const lines = stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

describe.skipIf(!haveCli('unsupported-format tests'))('well-known unsupported formats', () => {
  it('a V8 CPU profile is read by the installed @profkit/v8: detect, info, top, convert and folded succeed', () => {
    const detect = runCli(['detect', cpuprofile]);
    expect(detect.code, detect.stderr).toBe(0);
    expect(detect.stdout).toContain('v8-cpuprofile (adapter v8');
    const info = runCli(['info', cpuprofile]);
    expect(info.code, info.stderr).toBe(0);
    expect(info.stdout).toMatch(/^format\s+v8-cpuprofile \(adapter v8\)$/m);
    expect(Number(/^samples\s+(\d+)$/m.exec(info.stdout)?.[1])).toBeGreaterThan(0);
    const top = runCli(['top', cpuprofile]);
    expect(top.code, top.stderr).toBe(0);
    expect(top.stdout).toContain('Type: cpu');
    const out = join(tmp, 'out.pb.gz');
    const convert = runCli(['convert', cpuprofile, out]);
    expect(convert.code, convert.stderr).toBe(0);
    expect(runCli(['detect', out]).stdout).toContain('pprof (adapter pprof');
    const folded = runCli(['folded', cpuprofile]);
    expect(folded.code, folded.stderr).toBe(0);
    const stacks = folded.stdout.trim().split('\n');
    expect(stacks.length).toBeGreaterThan(0);
    for (const line of stacks) expect(line).toMatch(/^\S.* \d+$/);
  });

  it('without @profkit/v8: named with the install hint (exit 4, never "0.00"); detect --json reports the recognized format; stdin too', () => {
    // Only the pprof adapter, so that convert gets as far as detecting its input.
    const bare = join(tmp, 'pprof-only');
    mkdirSync(bare);
    writeFileSync(join(bare, 'profkit.config.json'), JSON.stringify({ autoDiscover: false, adapters: [join(repoRoot, 'packages/pprof/dist/index.js')] }));
    const hint = 'no installed adapter reads it; it is read by @profkit/v8: run `npm install @profkit/v8`';
    for (const args of [['detect', cpuprofile], ['info', cpuprofile], ['top', cpuprofile], ['convert', cpuprofile, join(tmp, 'out2.pb.gz')], ['folded', cpuprofile]]) {
      const r = runCli(args, { cwd: bare });
      expect([args[0], r.code]).toEqual([args[0], 4]);
      const line = errorLine(r.stderr);
      expect(line).toContain('this looks like a V8 CPU profile (.cpuprofile JSON');
      expect(line).toContain(hint);
      expect(line).toContain('PROFKIT_E_UNKNOWN_FORMAT');
      expect(line).not.toContain('0.00');
    }
    const j = JSON.parse(runCli(['detect', cpuprofile, '--json'], { cwd: bare }).stdout) as { format: unknown; problem: string; recognized: { format: string; name: string; note: string } };
    expect(j.format).toBeNull();
    expect(j.problem).toBe('unknown');
    expect(j.recognized.format).toBe('v8-cpuprofile');
    expect(j.recognized.note).toContain('@profkit/v8');
    const r = runCli(['info', '-'], { cwd: bare, input: JSON.stringify({ head: { callFrame: { functionName: '(root)' }, selfSize: 0, id: 1, children: [] }, samples: [] }) });
    expect(r.code).toBe(4);
    const line = errorLine(r.stderr);
    expect(line).toContain('-: this looks like a V8 sampling heap profile (.heapprofile JSON');
    expect(line).toContain(hint);
  });

  it('speedscope: named with a pointer to @profkit/speedscope; read by an adapter once one is configured', () => {
    const src = join(repoRoot, 'tools/adapter-example-speedscope/test/fixtures/sampled.speedscope.json');
    const bare = join(tmp, 'no-adapters');
    mkdirSync(bare);
    writeFileSync(join(bare, 'profkit.config.json'), JSON.stringify({ autoDiscover: false, adapters: [] }));
    const without = runCli(['info', src], { cwd: bare });
    expect(without.code).toBe(4);
    expect(errorLine(without.stderr)).toContain('this looks like a speedscope JSON file; no installed adapter reads it; it is read by @profkit/speedscope');
    const project = join(tmp, 'with-speedscope');
    mkdirSync(project);
    writeFileSync(join(project, 'profkit.config.json'), JSON.stringify({ autoDiscover: false, adapters: [join(repoRoot, 'tools/adapter-example-speedscope/dist/index.js')] }));
    const withIt = runCli(['detect', src], { cwd: project });
    expect(withIt.code, withIt.stderr).toBe(0);
    expect(withIt.stdout).toContain('speedscope-example (adapter speedscope-example');
  });
});
