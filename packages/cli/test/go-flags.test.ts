/**
 * `go tool pprof` flag spellings on the profkit command line (issue 18): `-nodecount=5`,
 * `-focus=fib`, `-sample_index=T`, `-lines`, `-top FILE`, `-peek=RE FILE` give what profkit's own
 * spellings give; short options, their values and negative numbers are left alone; pprof flags
 * profkit lacks say so; `--help` shows the pprof names.
 */

import { describe, expect, it } from 'vitest';
import { normalizeGoFlags, goModeCommand } from '../src/go-flags.js';
import { fixture, hasFixtures, parseTop, profkit } from './views-helpers.js';

const OPTIONS = {
  nodecount: { type: 'string', short: 'n', description: '' },
  output: { type: 'string', short: 'o', description: '' },
  quiet: { type: 'boolean', short: 'q', description: '' },
  focus: { type: 'string', description: '' },
  'sample-type': { type: 'string', description: '' },
  'node-fraction': { type: 'string', description: '' },
  by: { type: 'string', description: '' },
  cum: { type: 'boolean', description: '' },
} as const;

describe('normalizeGoFlags', () => {
  it('rewrites pprof spellings to ours', () => {
    expect(normalizeGoFlags(['f', '-nodecount=5', '-focus', 'fib', '-sample_index=alloc_space', '-nodefraction=0', '-lines', '-cum'], OPTIONS)).toEqual([
      'f',
      '--nodecount=5',
      '--focus',
      'fib',
      '--sample-type=alloc_space',
      '--node-fraction=0',
      '--by=line',
      '--cum',
    ]);
    expect(normalizeGoFlags(['-inuse_space', '-files'], OPTIONS)).toEqual(['--sample-type=inuse_space', '--by=file']);
  });

  it('leaves short options, clusters, option values, negative numbers and everything after -- alone', () => {
    const args = ['-n', '20', '-o', 'out.txt', '-qn5', '-q', '--focus', '-nodecount', '--node-fraction=-1', '-5', '--', '-focus=x'];
    expect(normalizeGoFlags(args, OPTIONS)).toEqual(args);
  });

  it('a pprof flag the command lacks is a usage error that says so; an unknown one names itself', () => {
    expect(() => normalizeGoFlags(['-http=:8080'], OPTIONS)).toThrow(/-http \(go tool pprof\) has no equivalent for this command; see docs\/cli\.md/);
    expect(() => normalizeGoFlags(['-tagfocus=a'], OPTIONS)).toThrow(/it would be --tag-focus/);
    expect(() => normalizeGoFlags(['-bogus'], OPTIONS)).toThrow(/^Unknown option '-bogus'$/);
    // Every character of `normalize` after the `n` would be its value (`-n ormalize`): a pprof flag is one flag.
    expect(() => normalizeGoFlags(['-normalize', '-nodecount=4'], OPTIONS)).toThrow(/-normalize \(go tool pprof\) has no equivalent for this command/);
  });

  it("names of Object.prototype's members are unknown options, not options or pprof flags", () => {
    for (const name of ['constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
      expect(() => normalizeGoFlags([`-${name}`], OPTIONS)).toThrow(new RegExp(`^Unknown option '-${name}'$`));
    }
    const commands = new Set(['top']);
    for (const argv of [['-constructor', 'f'], ['-toString', 'f']]) expect(goModeCommand(argv, commands)).toEqual(argv);
  });

  it('pprof output modes as flags become the command', () => {
    const commands = new Set(['top', 'peek', 'raw', 'traces']);
    expect(goModeCommand(['-top', 'f.pb.gz', '-n', '3'], commands)).toEqual(['top', 'f.pb.gz', '-n', '3']);
    expect(goModeCommand(['-text', 'f'], commands)).toEqual(['top', 'f']);
    expect(goModeCommand(['-peek=main\\.', 'f'], commands)).toEqual(['peek', 'f', 'main\\.']);
    expect(goModeCommand(['-traces', 'f'], commands)).toEqual(['traces', 'f']);
    // A command given, two modes, or a mode after -- : unchanged.
    for (const argv of [['top', 'f', '-top'], ['-top', '-traces', 'f'], ['--', '-top']]) expect(goModeCommand(argv, commands)).toEqual(argv);
  });
});

describe.skipIf(!hasFixtures)('profkit accepts the spellings pprof users type', () => {
  const f = () => fixture('pprof/internal/report/testdata/sample.cpu');
  const same = async (pprofStyle: string[], ours: string[]) => {
    const a = await profkit(pprofStyle);
    const b = await profkit(ours);
    expect(a.stderr).toBe('');
    expect(a.code).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    expect(a.stdout).toBe(b.stdout);
    return a.stdout;
  };

  it('-nodecount=5 (was "odecount=5: expected an integer") and -focus=fib (was "Unknown option \'-f\'")', async () => {
    const out = await same(['top', f(), '-nodecount=5'], ['top', f(), '-n', '5']);
    expect(parseTop(out).rows.length).toBe(5);
    await same(['top', f(), '-focus=mapassign', '-nodecount', '3'], ['top', f(), '--focus', 'mapassign', '--nodecount', '3']);
    await same(['tree', f(), '-lines', '-cum', '-nodecount=4'], ['tree', f(), '--by', 'line', '--cum', '-n', '4']);
    await same(['top', f(), '-sample_index=samples', '-nodefraction=0'], ['top', f(), '--sample-type', 'samples', '--node-fraction', '0']);
  });

  it('-top FILE and -peek=RE FILE', async () => {
    await same(['-top', f(), '-n', '4'], ['top', f(), '-n', '4']);
    await same(['-peek=mapassign', f()], ['peek', f(), 'mapassign']);
  });

  it('-show=x is not read as -s -h -o -w (help); -http names docs/cli.md', async () => {
    const r = await profkit(['top', f(), '-add_comment=x']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/-add_comment \(go tool pprof\) has no equivalent/);
    // -show=x is --show (pprof -show) now that every report has the filters.
    await same(['top', f(), '-show=mapassign'], ['top', f(), '--show', 'mapassign']);
    const h = await profkit(['top', f(), '-http=:8080']);
    expect(h.code).toBe(2);
    expect(h.stderr).toMatch(/-http \(go tool pprof\) has no equivalent for this command; see docs\/cli\.md/);
  });

  it('--help lists the pprof spelling beside ours', async () => {
    const r = await profkit(['help', 'top']);
    expect(r.stdout).toMatch(/--sample-type TYPE .*\[pprof -sample_index=…, -inuse_space/);
    expect(r.stdout).toMatch(/--nodecount N .*pprof -nodecount/);
    expect(r.stdout).toMatch(/--by function\|filefunctions\|file\|line\|address .*\[pprof -functions, -filefunctions, -files, -lines, -addresses, -granularity=…\]/);
    expect(r.stdout).toContain('go tool pprof spellings work too');
  });
});
