/**
 * `folded -o FILE` and `folded -o -` write the report's chunks as views of one reused buffer
 * (`foldedChunks` with `reuseBuffer`): each chunk must be written out before the next one
 * overwrites it. Checked on a report of several chunks against the sorted input (a folded
 * profile of distinct stacks prints its own lines, sorted), with the `-o -` pipe read slowly so
 * that the writes wait for the reader.
 */

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliBin, haveCli, repoRoot } from '@profkit/test-utils';

const tmp = mkdtempSync(join(tmpdir(), 'profkit-folded-output-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Runs the built CLI; its stdout is read in pieces with a pause after each (a slow reader). */
function profkit(args: string[], pauseMs = 0): Promise<{ code: number | null; stdout: Buffer; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [cliBin, ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      out.push(d);
      if (pauseMs > 0) {
        child.stdout.pause();
        setTimeout(() => child.stdout.resume(), pauseMs);
      }
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const guard = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', (e) => {
      clearTimeout(guard);
      fail(e);
    });
    child.on('close', (code) => {
      clearTimeout(guard);
      done({ code, stdout: Buffer.concat(out), stderr });
    });
  });
}

describe.skipIf(!haveCli('folded-output'))('folded -o: chunks of one reused buffer, each written before the next', () => {
  // 200,000 distinct stacks of about 60 bytes: 12 MB of text, a dozen 1 MiB chunks.
  const lines = Array.from({ length: 200_000 }, (_, i) => `main;worker${i % 300};step${i}_${'x'.repeat(i % 40)};leaf${(i * 7) % 5000} ${(i % 97) + 1}`);
  const input = join(tmp, 'in.folded');
  writeFileSync(input, lines.join('\n') + '\n');
  const expected = Buffer.from(lines.sort().join('\n') + '\n');

  it('-o FILE', async () => {
    const out = join(tmp, 'out.folded');
    const r = await profkit(['folded', input, '-o', out]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(readFileSync(out).equals(expected)).toBe(true);
  });

  it('-o - to a slow pipe', async () => {
    const r = await profkit(['folded', input, '-o', '-'], 5);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.length).toBe(expected.length);
    expect(r.stdout.equals(expected)).toBe(true);
  });
});
