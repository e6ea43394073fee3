/**
 * Command groups: adapter commands named with two words (`fuchsia-sampler serve`, `dm-export
 * list`, the test adapter's `lines echo`) form a group; `profkit GROUP`, `profkit GROUP --help`
 * and `profkit help GROUP` list its subcommands (docs/cli.md, "Command groups").
 */

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cliBin } from '@profkit/test-utils';
import { afterAll, describe, expect, it } from 'vitest';

const linesAdapter = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'lines-adapter.mjs');
const dir = mkdtempSync(join(tmpdir(), 'profkit-groups-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// The test adapter and the two first-party adapters the issue names; no discovery.
writeFileSync(join(dir, 'profkit.config.json'), JSON.stringify({ autoDiscover: false, adapters: [linesAdapter, '@profkit/fuchsia-sampler', '@profkit/dm-export'] }));

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliBin, ...args], { cwd: dir, env: { ...process.env, NO_COLOR: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end();
  });
}

const LINES_GROUP = [
  'profkit lines: commands of the lines adapter',
  '',
  'Usage: profkit lines <subcommand> [arguments] [options]',
  '',
  'Subcommands:',
  '  echo   Print the arguments back (test command)',
  '  wait   Wait until interrupted (test command)',
  '  total  Read a profile through the CLI context and print its sample count',
  '',
  'Run `profkit help lines <subcommand>` for a subcommand\'s options.',
  '',
].join('\n');

describe('command groups list their subcommands', () => {
  it('GROUP --help, GROUP -h and help GROUP print the list on stdout and exit 0', async () => {
    for (const args of [['lines', '--help'], ['lines', '-h'], ['help', 'lines']]) {
      const r = await run(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      expect(r.stdout).toBe(LINES_GROUP);
      expect(r.stderr).toBe('');
    }
  });

  it('GROUP without a subcommand prints the list on stderr and exits 2 (like `profkit` alone)', async () => {
    const r = await run(['lines']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(LINES_GROUP);
  });

  it('an unknown subcommand is a one-line usage error naming the valid ones', async () => {
    for (const args of [['lines', 'nope'], ['help', 'lines', 'nope'], ['lines', 'nope', '--help']]) {
      const r = await run(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe('profkit: unknown lines subcommand "nope" (subcommands: echo, wait, total) (see `profkit help lines`) [PROFKIT_E_USAGE]\n');
    }
  });

  it('fuchsia-sampler and dm-export: every subcommand with its one-line summary', async () => {
    for (const [group, subcommands] of [
      ['fuchsia-sampler', ['serve', 'replay', 'profiles']],
      ['dm-export', ['append', 'export', 'import', 'diagram', 'list']],
    ] as const) {
      const help = await run([group, '--help']);
      expect(help.code, help.stderr).toBe(0);
      const listed = help.stdout.split('\n').filter((l) => /^ {2}\S/.test(l)).map((l) => l.trim().split(/\s+/)[0]);
      expect(listed).toEqual([...subcommands]);
      // Each line carries the summary `profkit help GROUP SUB` starts with.
      for (const sub of subcommands) {
        const one = await run(['help', group, sub]);
        expect(one.code, one.stderr).toBe(0);
        const summary = /^profkit [\w-]+ [\w-]+: (.*) \(from the /.exec(one.stdout)![1]!;
        const line = help.stdout.split('\n').find((l) => l.startsWith(`  ${sub} `))!;
        expect(line.replace(/^ {2}\S+ +/, '')).toBe(summary);
      }
      const bare = await run([group]);
      expect(bare.code).toBe(2);
      expect(bare.stderr).toBe(help.stdout);
    }
  });

  it('full commands of a group still run and still show their own help', async () => {
    const r = await run(['lines', 'echo', 'a', 'b']);
    expect(r.code, r.stderr).toBe(0);
    const h = await run(['lines', 'echo', '--help']);
    expect(h.code).toBe(0);
    expect(h.stdout).toContain('profkit lines echo [ARGS...] [--shout]');
  });
});
