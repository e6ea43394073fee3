/**
 * Output that cannot be written, and interrupted writes (issue 15, items 8, 9 and 10):
 * - stdout on a full device (`/dev/full`, opened as the child's stdout) is exit 3 with one line on
 *   stderr, never a stack trace or exit 0;
 * - a reader that closes the pipe (`| head -1`) ends profkit quietly;
 * - SIGINT/SIGTERM while convert writes leaves the old file, no temporary file, no success line;
 * - a profile without sample types is invalid data (exit 1), not a usage error (exit 2).
 */

import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliBin, haveCli, repoRoot } from '@profkit/test-utils';

const tmp = mkdtempSync(join(tmpdir(), 'profkit-output-errors-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A folded-stacks profile of `lines` distinct stacks (about 26 bytes a line). */
function foldedProfile(name: string, lines: number): string {
  const path = join(tmp, name);
  const out: string[] = [];
  for (let i = 0; i < lines; i++) out.push(`main;f${i % 1000};g${i};h${(i * 7) % 5000} ${(i % 97) + 1}`);
  writeFileSync(path, out.join('\n') + '\n');
  return path;
}

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Spawns the built CLI from the repository root (whose config names every adapter). `stdout`: a
 * file descriptor for the child's stdout, or 'pipe'. `onStart` sees the child once spawned.
 */
function profkit(args: string[], options: { stdout?: number | 'pipe'; wrap?: string[]; onStdout?: (chunk: Buffer, child: ReturnType<typeof spawn>) => void; onStart?: (child: ReturnType<typeof spawn>) => void } = {}): Promise<Run> {
  return new Promise((done, fail) => {
    const [command, ...prefix] = [...(options.wrap ?? []), process.execPath];
    const child = spawn(command!, [...prefix, cliBin, ...args], { cwd: repoRoot, stdio: ['ignore', options.stdout ?? 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => {
      stdout += d.toString();
      options.onStdout?.(d, child);
    });
    child.stdout?.on('error', () => undefined);
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const guard = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', (e) => {
      clearTimeout(guard);
      fail(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(guard);
      done({ code, signal, stdout, stderr });
    });
    options.onStart?.(child);
  });
}

const haveDevFull = existsSync('/dev/full');
const havePrlimit = spawnSync('prlimit', ['--version']).status === 0;
if (!havePrlimit) console.warn('output-errors: prlimit (util-linux) is not installed; the file-size-limit test is skipped');
if (!haveDevFull) console.warn('output-errors: /dev/full is absent on this system; the full-stdout tests are skipped');

describe.skipIf(!haveCli('output-errors'))('output errors', () => {
  const small = foldedProfile('small.folded', 2000);
  // 7 MB of folded text: about 10 MB of pprof, written in 1 MiB pieces over a second or more.
  const big = foldedProfile('big.folded', 280_000);

  describe.skipIf(!haveDevFull)('stdout on a full device (/dev/full)', () => {
    it.each([
      ['folded', ['folded', small]],
      ['folded (large output)', ['folded', big]],
      ['top', ['top', small]],
      ['info --json', ['info', '--json', small]],
      ['convert IN -', ['convert', small, '-', '--to', 'pprof']],
      ['convert IN - (folded text)', ['convert', small, '-', '--to', 'folded']],
      ['help', ['help', 'top']],
    ])('%s: exit 3 with one line naming ENOSPC, no stack trace', async (_label, args) => {
      const fd = openSync('/dev/full', 'w');
      let r: Run;
      try {
        r = await profkit(args, { stdout: fd });
      } finally {
        closeSync(fd);
      }
      expect(r.code, r.stderr).toBe(3);
      expect(r.stderr).toMatch(/^profkit: .*writing to standard output failed: no space left on device \(ENOSPC\) \[PROFKIT_E_IO\]\n$/);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    });
  });

  it.skipIf(!havePrlimit)('stdout to a file that can only take 1 MiB (RLIMIT_FSIZE: a short write, then EFBIG): exit 3, never 0 with a truncated file', async () => {
    // The short write is what a filling disk does: Node's stdout on a file ignored it and exited 0.
    const out = join(tmp, 'limited.folded');
    const fd = openSync(out, 'w');
    let r: Run;
    try {
      r = await profkit(['folded', big], { stdout: fd, wrap: ['prlimit', `--fsize=${1 << 20}`, '--'] });
    } finally {
      closeSync(fd);
    }
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/^profkit: .*writing to standard output failed: file too large \(EFBIG\) \[PROFKIT_E_IO\]\n$/);
    expect(statSync(out).size).toBe(1 << 20);
  });

  it('a reader that closes the pipe early ends profkit quietly (exit 0, nothing on stderr)', async () => {
    let closed = false;
    const r = await profkit(['folded', big], {
      onStdout: (_chunk, child) => {
        if (closed) return;
        closed = true;
        child.stdout!.destroy();
      },
    });
    expect(closed).toBe(true);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  describe('a signal while convert writes', () => {
    it.each(['SIGINT', 'SIGTERM'] as const)('%s: the old file stays, no temporary file is left, no success line, exit 130', async (signal) => {
      const dir = mkdtempSync(join(tmp, 'sig-'));
      const target = join(dir, 'out.pb');
      const OLD = 'the old profile\n';
      writeFileSync(target, OLD);
      let sent = false;
      let tmpSeenAt = -1;
      const r = await profkit(['convert', big, target], {
        onStart: (child) => {
          // The signal goes as soon as the temporary file exists: the write has begun and its
          // rename has not happened (the 10 MB output takes far longer than the poll interval).
          const poll = setInterval(() => {
            const tmpFile = readdirSync(dir).find((f) => f.startsWith('.profkit-tmp-'));
            if (tmpFile === undefined) return;
            clearInterval(poll);
            tmpSeenAt = Date.now();
            sent = child.kill(signal);
          }, 1);
          child.on('close', () => clearInterval(poll));
        },
      });
      expect(sent, `the temporary file never appeared: ${r.stderr}`).toBe(true);
      expect(tmpSeenAt).toBeGreaterThan(0);
      expect(r.code, r.stderr).toBe(130);
      expect(r.stderr).toContain(`interrupted by ${signal}`);
      expect(r.stdout).toBe('');
      expect(readFileSync(target, 'utf8')).toBe(OLD);
      expect(readdirSync(dir)).toEqual(['out.pb']);
    });
  });

  it('top on a profile without sample types: invalid profile (exit 1), not usage (exit 2)', async () => {
    // A pprof Profile message with an empty string table and nothing else.
    const file = join(tmp, 'no-types.pb');
    writeFileSync(file, Uint8Array.from([0x32, 0x00]));
    const r = await profkit(['top', file, '--from', 'pprof']);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toBe(`profkit: ${file}: the profile has no sample types, so there are no values to report [PROFKIT_E_INVALID_PROFILE]\n`);
  });
});
