/**
 * Issue 15 item 17: a V8 `.cpuprofile` (and the other well-known formats no installed adapter
 * reads) used to get "ambiguous or unknown format (scores: … all 0.00)". `detect` and every
 * reading command now say what the file is, with exit 4 and PROFKIT_E_UNKNOWN_FORMAT; when an
 * adapter for the format is installed (the speedscope example), it reads the file as before.
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
  it('detect, info, top, convert and folded name a V8 CPU profile (exit 4), never "0.00"', () => {
    for (const args of [['detect', cpuprofile], ['info', cpuprofile], ['top', cpuprofile], ['convert', cpuprofile, join(tmp, 'out.pb.gz')], ['folded', cpuprofile]]) {
      const r = runCli(args);
      expect([args[0], r.code]).toEqual([args[0], 4]);
      const line = errorLine(r.stderr);
      expect(line).toContain('this looks like a V8 CPU profile (.cpuprofile JSON');
      expect(line).toContain('no installed adapter reads it');
      expect(line).toContain('PROFKIT_E_UNKNOWN_FORMAT');
      expect(line).not.toContain('0.00');
    }
  });

  it('detect --json reports the recognized format; stdin is recognized too', () => {
    const j = JSON.parse(runCli(['detect', cpuprofile, '--json']).stdout) as { format: unknown; problem: string; recognized: { format: string; name: string } };
    expect(j.format).toBeNull();
    expect(j.problem).toBe('unknown');
    expect(j.recognized.format).toBe('v8-cpuprofile');
    const r = runCli(['info', '-'], { input: JSON.stringify({ head: { callFrame: { functionName: '(root)' }, selfSize: 0, id: 1, children: [] }, samples: [] }) });
    expect(r.code).toBe(4);
    expect(errorLine(r.stderr)).toContain('-: this looks like a V8 sampling heap profile (.heapprofile JSON');
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
