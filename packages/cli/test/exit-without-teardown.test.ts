/**
 * The CLI process ends with `process.exit` once its event loop is empty ('beforeExit'), not
 * through Node's teardown of the environment (which frees the heap piece by piece: ~20 ms after a
 * 200,000-sample convert's last output), with the command's exit code, and only after every
 * pending write: a slow reader of stdout still gets the whole output.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliBin, haveCli, repoRoot } from '@profkit/test-utils';

const tmp = mkdtempSync(join(tmpdir(), 'profkit-exit-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A preload that reports each `process.exit` call (and the code it exits with) on stderr. */
const REPORT_EXIT = 'data:text/javascript,' + encodeURIComponent('const exit = process.exit; process.exit = function (code) { process.stderr.write(`process.exit(${code ?? process.exitCode})\\n`); return exit.apply(process, arguments); };');

describe.skipIf(!haveCli)('the CLI process exits once its work is done', () => {
  it('through process.exit, with the exit code of the command (success and failure)', () => {
    const input = join(tmp, 'p.folded');
    writeFileSync(input, 'main;f;g 3\nmain;h 2\n');
    const ok = spawnSync(process.execPath, ['--import', REPORT_EXIT, cliBin, 'convert', input, join(tmp, 'out.pb.gz')], { cwd: repoRoot, encoding: 'utf8' });
    expect(ok.status).toBe(0);
    expect(ok.stderr).toContain('process.exit(0)');
    const missing = spawnSync(process.execPath, ['--import', REPORT_EXIT, cliBin, 'top', join(tmp, 'missing.folded')], { cwd: repoRoot, encoding: 'utf8' });
    expect(missing.status).not.toBe(0);
    expect(missing.stderr).toContain(`process.exit(${missing.status})`);
  });

  it('after every pending write: a reader that pauses gets the whole output', async () => {
    const input = join(tmp, 'big.folded');
    const lines: string[] = [];
    for (let i = 0; i < 60_000; i++) lines.push(`main;f${i % 700};g${i};h${(i * 7) % 5000} ${(i % 97) + 1}`);
    writeFileSync(input, lines.join('\n') + '\n');
    const file = join(tmp, 'folded.txt');
    expect(spawnSync(process.execPath, [cliBin, 'folded', input, '-o', file], { cwd: repoRoot }).status).toBe(0);
    const child = spawn(process.execPath, [cliBin, 'folded', input], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] });
    const chunks: Buffer[] = [];
    let paused = false;
    child.stdout.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (paused) return;
      // Held back for a while after the first chunk: the child has more to write than the pipe holds.
      paused = true;
      child.stdout.pause();
      setTimeout(() => child.stdout.resume(), 500);
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(Buffer.concat(chunks).equals(readFileSync(file))).toBe(true);
  });
});
