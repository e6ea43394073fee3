/**
 * The adapter contract from the outside: the real `profkit` binary, in temporary project folders
 * outside the repository, loads this package by config-file path, by `--adapter`, and by
 * zero-config discovery from a project's node_modules, then converts speedscope files and back.
 * The repository's CLI also discovers this package in its own node_modules tree (the workspace
 * links it there), so the "without it" case switches discovery off with --no-discover.
 */

import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCliAsync, type CliRun } from '@profkit/test-utils';
import { afterAll, describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
const packageDir = resolve(here, '..');
const fixtures = join(here, 'fixtures');

const root = mkdtempSync(join(tmpdir(), 'profkit-speedscope-contract-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let count = 0;
function folder(): string {
  const dir = join(root, `p${count++}`);
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(fixtures, 'sampled.speedscope.json'), join(dir, 'in.speedscope.json'));
  return dir;
}

function run(args: string[], cwd: string, input?: Buffer): Promise<CliRun> {
  return runCliAsync(args, { cwd, input });
}

/** Stacks (root first, by frame name) and weights of every speedscope profile in a file. */
function speedscopeMeaning(text: string): Record<string, Record<string, number>> {
  const doc = JSON.parse(text) as { shared: { frames: { name: string }[] }; profiles: { name: string; samples: number[][]; weights: number[] }[] };
  const out: Record<string, Record<string, number>> = {};
  for (const p of doc.profiles) {
    const acc: Record<string, number> = (out[p.name] = {});
    p.samples.forEach((s, i) => {
      const key = s.map((f) => doc.shared.frames[f]!.name).join(';');
      acc[key] = (acc[key] ?? 0) + p.weights[i]!;
    });
  }
  return out;
}

describe('loaded by path from profkit.config.json', () => {
  it('converts speedscope to another format and back, keeping stacks and weights', async () => {
    const dir = folder();
    writeFileSync(
      join(dir, 'profkit.config.json'),
      JSON.stringify({ adapters: [relative(dir, packageDir), relative(dir, join(fixtures, 'stackcount-adapter.mjs'))] }),
    );
    const formats = JSON.parse((await run(['formats', '--json'], dir)).stdout);
    const ss = formats.adapters.find((a: { name: string }) => a.name === 'speedscope-example');
    expect(ss).toMatchObject({ packageName: 'profkit-adapter-speedscope', apiVersion: 1, source: { kind: 'config', specifier: relative(dir, packageDir) } });
    expect(ss.formats[0]).toMatchObject({ id: 'speedscope-example', read: true, write: true });

    // speedscope -> stackcount keeps only the first sample type (that format has one).
    const a = await run(['convert', 'in.speedscope.json', 'mid.stackcount'], dir);
    expect(a.stderr).toBe('');
    expect(a.code).toBe(0);
    const b = await run(['convert', 'mid.stackcount', 'back.speedscope.json'], dir);
    expect(b.code).toBe(0);
    const original = speedscopeMeaning(readFileSync(join(dir, 'in.speedscope.json'), 'utf8'));
    const back = speedscopeMeaning(readFileSync(join(dir, 'back.speedscope.json'), 'utf8'));
    expect(back).toEqual({ samples: original.cpu });

    // speedscope -> speedscope through stdout keeps every profile.
    const c = await run(['convert', 'in.speedscope.json', '-', '--to', 'speedscope-example'], dir);
    expect(c.code).toBe(0);
    expect(speedscopeMeaning(c.stdout)).toEqual(original);
  });

  it('reads from stdin and detects the format by content', async () => {
    const dir = folder();
    // autoDiscover off: @profkit/speedscope, installed beside the CLI, would win the detection.
    writeFileSync(join(dir, 'profkit.config.json'), JSON.stringify({ autoDiscover: false, adapters: [relative(dir, packageDir)] }));
    const r = await run(['info', '-', '--json'], dir, readFileSync(join(fixtures, 'evented.speedscope.json')));
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j).toMatchObject({ schema: 'profkit.info/1', format: 'speedscope-example', sampleTypes: [{ type: 'wall', unit: 'milliseconds', total: '14' }], durationNanos: '14000000' });
  });
});

describe('loaded with --adapter', () => {
  it('reads and validates a speedscope file', async () => {
    const dir = folder();
    const r = await run(['--adapter', packageDir, '--no-discover', 'validate', 'in.speedscope.json'], dir);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('in.speedscope.json: valid (speedscope-example)');
    const d = await run(['detect', 'in.speedscope.json', '--adapter', packageDir, '--no-discover', '--json'], dir);
    expect(JSON.parse(d.stdout)).toMatchObject({ format: 'speedscope-example', score: 1 });
  });

  it('without it, the format is unknown (exit 4)', async () => {
    const dir = folder();
    const r = await run(['info', 'in.speedscope.json', '--no-discover'], dir);
    expect(r.code).toBe(4);
    // core recognizes the format by its signature and says no installed adapter reads it
    expect(r.stderr).toContain('this looks like a speedscope JSON file; no installed adapter reads it');
  });
});

describe('discovered without a config file', () => {
  it("finds the package in the project's node_modules by its profkit-adapter keyword", async () => {
    const dir = folder();
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'app', private: true, devDependencies: { 'profkit-adapter-speedscope': '^0.1.0' } }));
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(packageDir, join(dir, 'node_modules', 'profkit-adapter-speedscope'), 'dir');
    const off = await run(['formats', '--json', '--no-discover'], dir);
    expect(JSON.parse(off.stdout).adapters).toEqual([]);
    const on = JSON.parse((await run(['formats', '--json'], dir)).stdout);
    const speedscope = on.adapters.find((a: { name: string }) => a.name === 'speedscope-example');
    // The project's copy is nearer than the one beside the CLI: it is the one loaded.
    expect(speedscope.source).toMatchObject({ kind: 'discovered', specifier: 'profkit-adapter-speedscope', from: join(dir, 'node_modules', 'profkit-adapter-speedscope') });
    // Both it and @profkit/speedscope (beside the CLI) read the file; the first-party one wins
    // the detection by its priority, so the example is asked for by its format id.
    const r = await run(['info', 'in.speedscope.json', '--from', 'speedscope-example'], dir);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('format      speedscope-example (adapter speedscope-example)');
  });
});
