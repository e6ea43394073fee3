/**
 * End-to-end tests of the `profkit` binary, spawned as a process (node dist/bin.cjs) in temporary
 * project folders whose profkit.config.json names the test adapters in test/fixtures.
 */

import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { cliBin } from '@profkit/test-utils';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli.js';

const here = dirname(fileURLToPath(import.meta.url));
const bin = cliBin;
const fixtures = join(here, 'fixtures');
const linesAdapter = join(fixtures, 'lines-adapter.mjs');
const twinAdapter = join(fixtures, 'twin-adapter.mjs');
const danglingSourceMapsAdapter = join(fixtures, 'dangling-source-maps-adapter.mjs');
const cliPkg = JSON.parse(readFileSync(resolve(here, '../package.json'), 'utf8')) as { version: string };
const corePkg = JSON.parse(readFileSync(resolve(here, '../../core/package.json'), 'utf8')) as { version: string };

/** Where the repository's CLI finds @profkit/pprof: the workspace's node_modules above it. */
const pprofInstalled = resolve(here, '../../../node_modules/@profkit/pprof');
const root = mkdtempSync(join(tmpdir(), 'profkit-cli-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let count = 0;
/**
 * A project folder with a config naming the lines test adapter, and a copy of sample.lines.
 * Discovery is off unless the config says otherwise: the CLI's own node_modules (the repository's)
 * holds every first-party adapter, and these tests are about the configured test adapters.
 */
function project(config: object = { adapters: [linesAdapter] }): string {
  const dir = join(root, `p${count++}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'profkit.config.json'), JSON.stringify({ autoDiscover: false, ...config }));
  copyFileSync(join(fixtures, 'sample.lines'), join(dir, 'sample.lines'));
  return dir;
}

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function run(args: string[], opts: { cwd: string; input?: string | Buffer; onStdout?: (text: string, child: ReturnType<typeof spawn>) => void }): Promise<Run> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: opts.cwd, env: { ...process.env, NO_COLOR: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      opts.onStdout?.(stdout, child);
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolvePromise({ code, signal, stdout, stderr }));
    if (opts.input !== undefined) child.stdin.end(opts.input);
    else child.stdin.end();
  });
}

/** The error output must be exactly one line, with a code, and no stack trace. */
function expectOneLineError(r: Run, code: string): string {
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^profkit: /);
  expect(lines[0]!.endsWith(`[${code}]`), lines[0]).toBe(true);
  expect(r.stderr).not.toMatch(/\n\s+at /);
  return lines[0]!;
}

describe('help and version', () => {
  it('prints help with --help, -h and help, listing built-in and adapter commands', async () => {
    const dir = project();
    for (const args of [['--help'], ['-h'], ['help']]) {
      const r = await run(args, { cwd: dir });
      expect(r.code).toBe(0);
      for (const c of ['formats', 'detect', 'validate', 'info', 'convert', 'lines echo', 'lines wait']) expect(r.stdout).toContain(c);
      expect(r.stdout).toContain('--json');
    }
  });

  it('prints command help with help CMD, CMD --help and CMD -h, for built-in and adapter commands', async () => {
    const dir = project();
    for (const args of [['help', 'convert'], ['convert', '--help'], ['convert', '-h']]) {
      const r = await run(args, { cwd: dir });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('profkit convert IN OUT');
      expect(r.stdout).toContain('--to FORMAT');
    }
    for (const args of [['help', 'lines', 'echo'], ['lines', 'echo', '--help']]) {
      const r = await run(args, { cwd: dir });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('profkit lines echo [ARGS...] [--shout]');
      expect(r.stdout).toContain('--shout');
      expect(r.stdout).toContain('from the lines adapter');
    }
  });

  it('prints versions, also as JSON', async () => {
    const dir = project();
    const r = await run(['--version'], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`profkit ${cliPkg.version} (@profkit/core ${corePkg.version}, adapter API 1`);
    const j = JSON.parse((await run(['--version', '--json'], { cwd: dir })).stdout);
    expect(j).toMatchObject({ schema: 'profkit.version/1', profkit: cliPkg.version, core: corePkg.version, adapterApi: 1 });
  });

  it('without a command prints help to stderr and exits 2', async () => {
    const r = await run([], { cwd: project() });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('Usage: profkit <command>');
  });
});

describe('usage errors exit 2 with one line', () => {
  it.each([
    [['info'], 'info takes 1 argument, got 0'],
    [['info', 'a', 'b'], 'info takes 1 argument, got 2'],
    [['info', '--frm', 'x', 'sample.lines'], "Unknown option '--frm'"],
    [['frobnicate'], 'unknown command "frobnicate"'],
    [['lines', 'nope'], 'unknown lines subcommand "nope" (subcommands: echo, wait, total) (see `profkit help lines`)'],
    [['convert', 'sample.lines', '-'], 'writing to stdout needs an explicit format'],
  ])('%j', async (args, message) => {
    const r = await run(args, { cwd: project() });
    expect(r.code).toBe(2);
    expect(expectOneLineError(r, 'PROFKIT_E_USAGE')).toContain(message);
  });

  it('reports a malformed config with its file and line', async () => {
    const dir = project();
    writeFileSync(join(dir, 'profkit.config.json'), '{\n  "adapters": [\n    "x",,\n  ]\n}\n');
    const r = await run(['formats'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(expectOneLineError(r, 'PROFKIT_E_CONFIG')).toContain(`${join(dir, 'profkit.config.json')}:3: config file is not valid JSON`);
  });

  it('refuses an adapter built for another adapter API version, naming it and where it was named', async () => {
    const dir = project();
    writeFileSync(
      join(dir, 'future.mjs'),
      "export default { apiVersion: 2, name: 'future', formats: [{ id: 'future', extensions: [], binary: false }], sniff: () => 0, read: async () => ({}) };\n",
    );
    writeFileSync(join(dir, 'profkit.config.json'), JSON.stringify({ adapters: ['./future.mjs'] }));
    const r = await run(['formats'], { cwd: dir });
    expect(r.code).toBe(2);
    const line = expectOneLineError(r, 'PROFKIT_E_ADAPTER_API');
    expect(line).toContain(`adapter future targets adapter API 2; @profkit/core ${corePkg.version} supports 1; upgrade @profkit/core`);
    expect(line).toContain(`./future.mjs named in ${join(dir, 'profkit.config.json')}`);
  });

  it('names an --adapter specifier that cannot be found', async () => {
    const r = await run(['formats', '--adapter', './nowhere.mjs'], { cwd: project() });
    expect(r.code).toBe(2);
    expect(expectOneLineError(r, 'PROFKIT_E_ADAPTER_NOT_FOUND')).toContain('"./nowhere.mjs"');
  });
});

describe('zero-config discovery', () => {
  /** A folder outside the repository with no config file: only discovery can find adapters. */
  function bareFolder(): string {
    const dir = join(root, `bare${count++}`);
    mkdirSync(dir, { recursive: true });
    copyFileSync(join(fixtures, 'sample.lines'), join(dir, 'sample.lines'));
    return dir;
  }

  it("finds the adapters installed in the CLI's own node_modules tree without a config file", async () => {
    const dir = bareFolder();
    const c = await run(['convert', 'sample.lines', 'x.pb.gz', '--adapter', linesAdapter], { cwd: dir });
    expect(c.code).toBe(0);
    const top = await run(['top', 'x.pb.gz'], { cwd: dir });
    expect(top.stderr).toBe('');
    expect(top.code).toBe(0);
    expect(top.stdout).toContain('flat%');
    const j = JSON.parse((await run(['formats', '--json'], { cwd: dir })).stdout);
    expect(j.adapters.find((a: { name: string }) => a.name === 'pprof').source).toMatchObject({ kind: 'discovered', specifier: '@profkit/pprof', from: pprofInstalled });
    expect(j.notInstalled).toEqual([]);
  });

  it('--no-discover loads only what is named, and the error says the adapter is installed but not loaded', async () => {
    const dir = bareFolder();
    expect((await run(['convert', 'sample.lines', 'x.pb.gz', '--adapter', linesAdapter], { cwd: dir })).code).toBe(0);
    const r = await run(['info', 'x.pb.gz', '--no-discover'], { cwd: dir });
    expect(r.code).toBe(4);
    const line = expectOneLineError(r, 'PROFKIT_E_UNKNOWN_FORMAT');
    expect(line).toContain(`@profkit/pprof, which is installed in ${pprofInstalled} but not loaded: discovery is off (--no-discover`);
  });
});

describe('formats', () => {
  it('lists adapters, formats, capabilities and sources', async () => {
    const dir = project();
    const r = await run(['formats'], { cwd: dir });
    expect(r.code).toBe(0);
    const row = r.stdout.split('\n').find((l) => l.startsWith('lines '))!;
    expect(row.split(/\s{2,}/)).toEqual(['lines', 'yes', 'yes', '.lines .lines.txt', 'lines 9.9.9', `config ${linesAdapter} (${join(dir, 'profkit.config.json')})`]);
    // Installed beside the CLI, but the config switched discovery off: not "not installed".
    expect(r.stdout).toContain(`@profkit/pprof is installed in ${pprofInstalled} but not loaded: "autoDiscover": false in ${join(dir, 'profkit.config.json')}`);
    expect(r.stdout).not.toContain('not installed');
  });

  it('has a versioned JSON form', async () => {
    const dir = project();
    const j = JSON.parse((await run(['formats', '--json', '--adapter', twinAdapter], { cwd: dir })).stdout);
    expect(j.schema).toBe('profkit.formats/1');
    expect(j.adapters.map((a: { name: string; source: { kind: string } }) => [a.name, a.source.kind])).toEqual([
      ['lines', 'config'],
      ['twin', 'flag'],
    ]);
    expect(j.adapters[0].formats).toEqual([{ id: 'lines', title: 'Test lines', extensions: ['.lines', '.lines.txt'], binary: false, read: true, write: true }]);
    expect(j.adapters[1].formats[0]).toMatchObject({ id: 'twin', read: true, write: false });
    expect(j.adapters[0].commands.map((c: { name: string }) => c.name)).toEqual(['lines echo', 'lines wait', 'lines total']);
    expect(j.notInstalled.find((m: { packageName: string }) => m.packageName === '@profkit/pprof')).toEqual({
      packageName: '@profkit/pprof',
      formats: ['pprof'],
      install: 'npm install @profkit/pprof',
      notLoaded: `installed in ${pprofInstalled} but not loaded: "autoDiscover": false in ${join(dir, 'profkit.config.json')}`,
    });
  });
});

describe('detect', () => {
  it('names the format, explains scores, and has a JSON form', async () => {
    const dir = project({ adapters: [linesAdapter, twinAdapter] });
    const r = await run(['detect', 'sample.lines'], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe('sample.lines: lines (adapter lines, score 1.00)');
    const e = await run(['detect', '--explain', 'sample.lines'], { cwd: dir });
    expect(e.stdout).toMatch(/lines\s+lines\s+1\.00\s+0\s+header line/);
    expect(e.stdout).toMatch(/twin\s+twin\s+0\.00/);
    const j = JSON.parse((await run(['detect', 'sample.lines', '--json'], { cwd: dir })).stdout);
    expect(j).toMatchObject({ schema: 'profkit.detect/1', file: 'sample.lines', format: 'lines', adapter: 'lines', score: 1, encoding: null, problem: null });
    expect(j.scores.map((s: { adapter: string; score: number }) => [s.adapter, s.score])).toEqual([
      ['lines', 1],
      ['twin', 0],
    ]);
  });

  it('reads stdin for -', async () => {
    const r = await run(['detect', '-'], { cwd: project(), input: readFileSync(join(fixtures, 'sample.lines')) });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('-: lines');
  });

  it('exits 4 on ambiguity, listing the scores in one line', async () => {
    const dir = project({ adapters: [linesAdapter, twinAdapter] });
    writeFileSync(join(dir, 'amb.txt'), '# ambiguous\nmain 1\n');
    const r = await run(['detect', 'amb.txt'], { cwd: dir });
    expect(r.code).toBe(4);
    const line = expectOneLineError(r, 'PROFKIT_E_UNKNOWN_FORMAT');
    expect(line).toContain('amb.txt: ambiguous or unknown format (scores: lines 0.60, twin 0.60)');
    const j = JSON.parse((await run(['detect', 'amb.txt', '--json'], { cwd: dir })).stdout);
    expect(j).toMatchObject({ format: null, problem: 'ambiguous' });
  });

  it('exits 4 saying the first-party adapter is installed but not loaded when discovery is off', async () => {
    const dir = project();
    writeFileSync(join(dir, 'cpu.pb.gz'), Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xe3, 0x62, 0, 0]));
    const r = await run(['info', 'cpu.pb.gz'], { cwd: dir });
    expect(r.code).toBe(4);
    const line = expectOneLineError(r, 'PROFKIT_E_UNKNOWN_FORMAT');
    expect(line).toContain(`@profkit/pprof, which is installed in ${pprofInstalled} but not loaded`);
    expect(line).not.toContain('not installed');
  });

  it('says when the input is empty', async () => {
    const dir = project();
    writeFileSync(join(dir, 'empty.lines'), '');
    const r = await run(['detect', 'empty.lines'], { cwd: dir });
    expect(r.code).toBe(1);
    expect(expectOneLineError(r, 'PROFKIT_E_EMPTY_INPUT')).toContain('empty');
  });
});

describe('info', () => {
  it('summarizes sample types, totals, counts and facts', async () => {
    const r = await run(['info', 'sample.lines'], { cwd: project() });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('format      lines (adapter lines)');
    expect(r.stdout).toContain('samples     3');
    expect(r.stdout).toMatch(/cpu\/nanoseconds\s+total 6\s*\n/);
    expect(r.stdout).toMatch(/alloc\/bytes\s+total 50\s+\(default\)/);
    expect(r.stdout).toContain('locations   3');
    expect(r.stdout).toContain('functions   3');
    expect(r.stdout).toContain('comment     made by the lines test adapter');
    expect(r.stdout).toContain('lines files carry no time information');
  });

  it('shows the collection time, duration and time span when known', async () => {
    const dir = project();
    // 2023-11-14T22:13:20Z plus 2.5 s
    writeFileSync(join(dir, 'timed.lines'), '# profkit-lines\ntime 1700000000000000000 2500000000\nmain 1\n');
    const r = await run(['info', 'timed.lines'], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('time        2023-11-14T22:13:20.000Z');
    expect(r.stdout).toContain('duration    2.500 s');
    expect(r.stdout).toContain('time span   2023-11-14T22:13:20.000Z .. 2023-11-14T22:13:22.500Z');
    const j = JSON.parse((await run(['info', 'timed.lines', '--json'], { cwd: dir })).stdout);
    expect(j).toMatchObject({ timeNanos: '1700000000000000000', durationNanos: '2500000000', timeSpan: { start: '2023-11-14T22:13:20.000Z', end: '2023-11-14T22:13:22.500Z' } });
  });

  it('has a JSON form with bigint totals as decimal strings, also from stdin', async () => {
    const dir = project();
    for (const [args, input] of [
      [['info', 'sample.lines', '--json'], undefined],
      [['info', '-', '--json'], readFileSync(join(fixtures, 'sample.lines'))],
    ] as const) {
      const r = await run([...args], { cwd: dir, input });
      expect(r.code).toBe(0);
      const j = JSON.parse(r.stdout);
      expect(j).toMatchObject({
        schema: 'profkit.info/1',
        format: 'lines',
        samples: 3,
        locations: 3,
        functions: 3,
        mappings: 0,
        sampleTypes: [
          { type: 'cpu', unit: 'nanoseconds', total: '6' },
          { type: 'alloc', unit: 'bytes', total: '50' },
        ],
        defaultSampleType: 'alloc',
        period: '0',
        timeSpan: null,
        comments: ['made by the lines test adapter'],
      });
      expect(j.warnings.map((w: { code: string }) => w.code)).toEqual(['PROFKIT_W_LINES_NOTE']);
    }
  });

  it('exits 1 with the file and line of a parse error, details only with --verbose', async () => {
    const dir = project();
    writeFileSync(join(dir, 'bad.lines'), '# profkit-lines\nmain 1\n!fail-at 7\n');
    const r = await run(['info', 'bad.lines'], { cwd: dir });
    expect(r.code).toBe(1);
    expect(expectOneLineError(r, 'PROFKIT_E_PARSE')).toBe('profkit: bad.lines:7: forced failure [PROFKIT_E_PARSE]');
    const v = await run(['info', 'bad.lines', '--verbose'], { cwd: dir });
    expect(v.stderr.split('\n')[0]).toBe('profkit: bad.lines:7: forced failure [PROFKIT_E_PARSE]');
    expect(v.stderr).toContain('rule: test rule');
    expect(v.stderr).toContain('stack:');
  });

  it('exits 3 for a missing file', async () => {
    const r = await run(['info', 'missing.lines'], { cwd: project() });
    expect(r.code).toBe(3);
    expect(expectOneLineError(r, 'PROFKIT_E_IO')).toContain('no such file');
  });

  it('refuses an invalid profile produced by a reader (exit 1)', async () => {
    const dir = project();
    writeFileSync(join(dir, 'dangling.lines'), '# profkit-lines\nmain 1\n!dangling\n');
    const r = await run(['info', 'dangling.lines'], { cwd: dir });
    expect(r.code).toBe(1);
    expect(expectOneLineError(r, 'PROFKIT_E_INVALID_PROFILE')).toContain('dangling.lines: the lines reader produced an invalid profile');
  });
});

describe('validate', () => {
  it('exits 0 for a valid profile, and says so', async () => {
    const dir = project();
    const r = await run(['validate', 'sample.lines'], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('sample.lines: valid (lines)');
    const j = JSON.parse((await run(['validate', 'sample.lines', '--json'], { cwd: dir })).stdout);
    expect(j).toMatchObject({ schema: 'profkit.validate/1', file: 'sample.lines', format: 'lines', mode: 'profkit', ok: true, errors: 0, problems: [] });
  });

  it('exits 1 listing every problem of an invalid profile', async () => {
    const dir = project();
    writeFileSync(join(dir, 'dangling.lines'), '# profkit-lines\nmain 1\n!dangling\n');
    const r = await run(['validate', 'dangling.lines'], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/dangling\.lines: error: samples.*4000/);
    expect(r.stdout).toContain('not valid: 1 error');
    const j = JSON.parse((await run(['validate', 'dangling.lines', '--json'], { cwd: dir })).stdout);
    expect(j.ok).toBe(false);
    expect(j.errors).toBe(1);
    expect(j.problems[0]).toMatchObject({ table: 'samples', severity: 'error' });
    expect(Object.keys(j.problems[0])).toEqual(expect.arrayContaining(['code', 'rule', 'table', 'message', 'severity']));
  });

  it('--strict-r tells whether R could read the profile', async () => {
    const dir = project();
    writeFileSync(join(dir, 'r.lines'), '# profkit-lines\nmain;f 2\nmain 1\n');
    const ok = await run(['validate', '--strict-r', 'r.lines'], { cwd: dir });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain("R's profile package can read it");
    const bad = await run(['validate', '--strict-r', 'sample.lines', '--json'], { cwd: dir });
    expect(bad.code).toBe(1);
    const j = JSON.parse(bad.stdout);
    expect(j.mode).toBe('strict-r');
    expect(j.problems.map((p: { rule: string }) => p.rule)).toContain('R14');
  });
});

describe('convert', () => {
  const meaning = (text: string) =>
    text
      .split('\n')
      .filter((l) => l && !l.startsWith('#'))
      .sort();

  it('writes by the longest matching extension, and the result reads back with the same meaning', async () => {
    const dir = project();
    const r = await run(['convert', 'sample.lines', 'out.lines.txt'], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('sample.lines (lines) -> out.lines.txt (lines)');
    expect(meaning(readFileSync(join(dir, 'out.lines.txt'), 'utf8'))).toEqual(meaning(readFileSync(join(fixtures, 'sample.lines'), 'utf8')));
    const j = JSON.parse((await run(['info', 'out.lines.txt', '--json'], { cwd: dir })).stdout);
    expect(j.sampleTypes.map((t: { total: string }) => t.total)).toEqual(['6', '50']);
  });

  it('uses --to, and - for stdin and stdout', async () => {
    const dir = project();
    const r = await run(['convert', '-', '-', '--to', 'lines'], { cwd: dir, input: readFileSync(join(fixtures, 'sample.lines')) });
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith('# profkit-lines\n')).toBe(true);
    expect(meaning(r.stdout)).toEqual(meaning(readFileSync(join(fixtures, 'sample.lines'), 'utf8')));
    const r2 = await run(['convert', 'sample.lines', 'out.anything', '--to', 'lines', '--json'], { cwd: dir });
    expect(JSON.parse(r2.stdout)).toMatchObject({ schema: 'profkit.convert/1', input: 'sample.lines', output: 'out.anything', from: 'lines', to: 'lines' });
    expect(existsSync(join(dir, 'out.anything'))).toBe(true);
  });

  it('refuses to overwrite its input (exit 3), leaving it intact', async () => {
    const dir = project();
    const before = readFileSync(join(dir, 'sample.lines'), 'utf8');
    const r = await run(['convert', 'sample.lines', './sample.lines'], { cwd: dir });
    expect(r.code).toBe(3);
    expect(expectOneLineError(r, 'PROFKIT_E_CLOBBER')).toContain('refusing to overwrite the input file');
    expect(readFileSync(join(dir, 'sample.lines'), 'utf8')).toBe(before);
  });

  it('exits 4 for an output format nobody writes, naming the missing first-party package', async () => {
    const dir = project();
    const r = await run(['convert', 'sample.lines', 'out.unknownext'], { cwd: dir });
    expect(r.code).toBe(4);
    expect(expectOneLineError(r, 'PROFKIT_E_UNKNOWN_FORMAT')).toContain('pick a format with --to');
    const r2 = await run(['convert', 'sample.lines', 'out.pb.gz'], { cwd: dir });
    expect(r2.code).toBe(4);
    expect(expectOneLineError(r2, 'PROFKIT_E_NO_ADAPTER')).toContain(`@profkit/pprof, which is installed in ${pprofInstalled} but not loaded`);
    expect(existsSync(join(dir, 'out.pb.gz'))).toBe(false);
    const r3 = await run(['convert', 'sample.lines', 'x.twin', '--adapter', twinAdapter], { cwd: dir });
    expect(r3.code).toBe(4);
    expect(expectOneLineError(r3, 'PROFKIT_E_UNSUPPORTED')).toContain('cannot write format "twin"');
  });

  it('validates the profile --source-maps produced before writing it: an invalid one is refused, nothing written', async () => {
    // Discovery is off, so the fixture's transform is the only `source-maps` (@profkit/v8's would clash).
    const dir = project({ adapters: [linesAdapter, join(here, '../../pprof/dist/index.js'), danglingSourceMapsAdapter] });
    expect((await run(['convert', 'sample.lines', 'plain.pb.gz'], { cwd: dir })).code).toBe(0);
    const r = await run(['convert', '--source-maps', 'sample.lines', 'out.pb.gz'], { cwd: dir });
    expect(r.code).not.toBe(0);
    // Location 4242 is the fixture transform's: the validator saw the transformed profile.
    expect(expectOneLineError(r, 'PROFKIT_E_INVALID_PROFILE')).toMatch(/refusing to write an invalid profile: samples.*4242/);
    expect(existsSync(join(dir, 'out.pb.gz'))).toBe(false);
  });
});

describe('adapter commands', () => {
  it('dispatches multi-word commands with their options, exit code and --json', async () => {
    const dir = project();
    const r = await run(['lines', 'echo', 'a', 'b', '--shout'], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('A B\n');
    expect((await run(['lines', 'echo'], { cwd: dir })).code).toBe(2);
    expect(JSON.parse((await run(['lines', 'echo', 'x', '--json'], { cwd: dir })).stdout)).toEqual({ schema: 'profkit.lines-echo/1', words: ['x'] });
    const total = await run(['lines', 'total', 'sample.lines'], { cwd: dir });
    expect(total.stdout).toBe('3\n');
    expect(total.stderr).toBe('');
  });

  it('aborts the command signal on SIGINT and exits 130', async () => {
    const dir = project();
    let sent = false;
    const r = await run(['lines', 'wait'], {
      cwd: dir,
      onStdout: (text, child) => {
        if (!sent && text.includes('waiting')) {
          sent = true;
          child.kill('SIGINT');
        }
      },
    });
    expect(r.code).toBe(130);
    expect(r.stdout).toBe('waiting\naborted\n');
    expect(r.stderr).toContain('interrupted by SIGINT');
  });
});

describe('progress', () => {
  class Sink extends Writable {
    text = '';
    constructor(readonly isTTY: boolean) {
      super();
    }
    override _write(chunk: Buffer, _enc: string, cb: () => void) {
      this.text += chunk.toString();
      cb();
    }
  }

  it('draws on a TTY stderr only, and never with --quiet or --json', async () => {
    const dir = project();
    const file = join(dir, 'sample.lines');
    const tty = new Sink(true);
    const out = new Sink(false);
    expect(await main(['lines', 'total', file], { cwd: dir, stdout: out, stderr: tty })).toBe(0);
    expect(out.text).toBe('3\n');
    expect(tty.text).toContain('counting [');
    expect(tty.text).toContain('\r');
    for (const extra of [['--quiet'], ['--json']]) {
      const quiet = new Sink(true);
      expect(await main(['lines', 'total', file, ...extra], { cwd: dir, stdout: new Sink(false), stderr: quiet })).toBe(0);
      expect(quiet.text).toBe('');
    }
    const pipe = new Sink(false);
    await main(['lines', 'total', file], { cwd: dir, stdout: new Sink(false), stderr: pipe });
    expect(pipe.text).toBe('');
  });
});
