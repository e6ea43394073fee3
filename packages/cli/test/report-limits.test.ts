/**
 * Text reports are bounded by `--limit maxReportBytes=N` (core's `ReportTextBudget`): a report
 * can print a string or a location's inline frames once per use, so a small crafted profile can
 * ask for gigabytes of text. The CLI writes such reports as they are made and stops at the limit
 * with PROFKIT_E_LIMIT naming the option.
 */

import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { repoRoot } from '@profkit/test-utils';
import { afterAll, describe, expect, it } from 'vitest';
import { READ_LIMITS } from '@profkit/core';
import { main } from '../src/cli.js';
import { STREAMED_TEXT_PER_INPUT_BYTE, streamedReportLimits } from '../src/commands/stream-text.js';
import type { CliContext } from '../src/types.js';

const tmp = mkdtempSync(join(tmpdir(), 'profkit-report-limits-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Protocol-buffer encoding, just enough for a crafted pprof profile. */
function varint(n: number): number[] {
  const out: number[] = [];
  for (; n >= 0x80; n = Math.floor(n / 128)) out.push((n % 128) | 0x80);
  out.push(n);
  return out;
}
function field(num: number, value: number | number[] | string): number[] {
  if (typeof value === 'number') return [...varint(num * 8), ...varint(value)];
  const bytes = typeof value === 'string' ? [...new TextEncoder().encode(value)] : value;
  return [...varint(num * 8 + 2), ...varint(bytes.length), ...bytes];
}

/**
 * A pprof profile of `samples` samples (each with its own numeric label `k`, so that loading
 * does not merge them) over one location of `inlineLines` lines of function `f`: O(n) bytes, n²
 * frames of `traces` text.
 */
function inlineSquarePprof(samples: number, inlineLines: number): string {
  const bytes: number[] = [...field(1, [...field(1, 1), ...field(2, 2)])];
  for (let i = 0; i < samples; i++) bytes.push(...field(2, [...field(1, varint(1)), ...field(2, varint(1)), ...field(3, [...field(1, 3), ...field(3, i + 1)])]));
  const location = [...field(1, 1)];
  for (let j = 0; j < inlineLines; j++) location.push(...field(4, field(1, 1)));
  bytes.push(...field(4, location), ...field(5, [...field(1, 1), ...field(2, 4)]));
  for (const s of ['', 'samples', 'count', 'k', 'f']) bytes.push(...field(6, s));
  const file = join(tmp, `inline-${samples}x${inlineLines}.pb`);
  writeFileSync(file, Uint8Array.from(bytes));
  return file;
}

/**
 * A pprof profile of `functions` functions sharing one name of `nameLength` characters (distinct
 * files), one location each, and one sample over all of them: O(functions + nameLength) bytes,
 * functions × nameLength characters of raw, folded and traces text.
 */
function sharedNamePprof(functions: number, nameLength: number): string {
  const bytes: number[] = [...field(1, [...field(1, 1), ...field(2, 2)])];
  bytes.push(...field(2, [...field(1, Array.from({ length: functions }, (_, i) => varint(i + 1)).flat()), ...field(2, varint(1))]));
  for (let i = 0; i < functions; i++) {
    bytes.push(...field(4, [...field(1, i + 1), ...field(4, field(1, i + 1))]));
    bytes.push(...field(5, [...field(1, i + 1), ...field(2, 3), ...field(4, 4 + i)]));
  }
  for (const s of ['', 'samples', 'count', 'n'.repeat(nameLength), ...Array.from({ length: functions }, (_, i) => `f${i}.go`)]) bytes.push(...field(6, s));
  const file = join(tmp, `shared-name-${functions}x${nameLength}.pb`);
  writeFileSync(file, Uint8Array.from(bytes));
  return file;
}

/** Runs `profkit ARGS` in-process; stdout's byte count and text. */
async function profkit(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const sink = () => {
    const chunks: Buffer[] = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        chunks.push(Buffer.from(chunk));
        done();
      },
    });
    return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
  };
  const out = sink();
  const err = sink();
  const code = await main(args, { stdout: out.stream, stderr: err.stream, cwd: repoRoot });
  return { code, stdout: out.text(), stderr: err.text() };
}

describe('maxReportBytes bounds the text reports', () => {
  const square = inlineSquarePprof(300, 300); // 90,000 frames: about 2 MB of traces text

  it('traces: a report over --limit maxReportBytes stops with PROFKIT_E_LIMIT, having written at most the limit', async () => {
    const r = await profkit(['traces', square, '--limit', 'maxReportBytes=256KiB']);
    expect(r.stderr).toMatch(/PROFKIT_E_LIMIT/);
    expect(r.stderr).toMatch(/maxReportBytes/);
    expect(r.code).not.toBe(0);
    expect(Buffer.byteLength(r.stdout)).toBeLessThanOrEqual(256 * 1024);
  });

  it('traces --json: the samples are bounded by the same count', async () => {
    const r = await profkit(['traces', square, '--json', '--limit', 'maxReportBytes=256KiB']);
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toMatch(/PROFKIT_E_LIMIT/);
    expect(r.stdout + r.stderr).toMatch(/maxReportBytes/);
  });

  it('traces: under the limit the whole report is written, every inline frame of every sample', async () => {
    const r = await profkit(['traces', square]);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines.filter((l) => l.endsWith('   f (inline)')).length).toBe(300 * 299);
    expect(lines.filter((l) => /^ +k: +[0-9]+$/.test(l)).length).toBe(300);
  });

  // 200 functions sharing one 20,000-character name: 4 MB of text from a 22 KB profile.
  const shared = sharedNamePprof(200, 20_000);
  for (const [command, ...rest] of [['raw'], ['folded'], ['traces'], ['list', '^n'], ['top', '--by', 'lines'], ['tree', '--by', 'lines']]) {
    it(`${command}: one long name printed once per function stops at --limit maxReportBytes`, async () => {
      const args = [command!, shared, ...rest];
      // (top and tree at line granularity: one node, so one line or more, per function.)
      const r = await profkit([...args, '--limit', 'maxReportBytes=1MiB']);
      expect(r.stderr).toMatch(/PROFKIT_E_LIMIT/);
      expect(r.stderr).toMatch(/maxReportBytes/);
      expect(r.code).not.toBe(0);
      expect(Buffer.byteLength(r.stdout)).toBeLessThanOrEqual(1024 * 1024);
      // Under the limit it is all there: the name once per function.
      const all = await profkit(args);
      expect(all.code, all.stderr).toBe(0);
      const copies = all.stdout.split('n'.repeat(20_000)).length - 1;
      // tree also names each node's callers and callees.
      if (command === 'tree') expect(copies).toBeGreaterThanOrEqual(200);
      else expect(copies).toBe(200);
    });
  }
});


describe('streamed reports: maxReportBytes by default follows the input size', () => {
  // A streamed report holds one chunk, so its default bound is on amplification: the 1M-sample
  // benchmark profile (95 MB) prints 1.3 GB of folded stacks, over the fixed 512 MiB default.
  const dir = mkdtempSync(join(tmpdir(), 'profkit-streamed-limit-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const sized = (name: string, bytes: number) => {
    const path = join(dir, name);
    writeFileSync(path, '');
    truncateSync(path, bytes); // sparse: no bytes written
    return path;
  };
  const ctxOf = (values: Record<string, unknown>) => ({ values }) as unknown as CliContext;

  it('is 64 bytes per input byte (FILE and its base) when that is above the default', () => {
    const big = sized('big.pb.gz', 16 * 1024 * 1024);
    const base = sized('base.pb.gz', 4 * 1024 * 1024);
    expect(streamedReportLimits(ctxOf({}), [big]).maxReportBytes).toBe(STREAMED_TEXT_PER_INPUT_BYTE * 16 * 1024 * 1024);
    expect(streamedReportLimits(ctxOf({}), [big, base]).maxReportBytes).toBe(STREAMED_TEXT_PER_INPUT_BYTE * 20 * 1024 * 1024);
  });

  it('is the default for small inputs and stdin, and what --limit says when given', () => {
    const small = sized('small.pb.gz', 40_000);
    expect(streamedReportLimits(ctxOf({}), [small]).maxReportBytes).toBe(READ_LIMITS.maxReportBytes);
    expect(streamedReportLimits(ctxOf({}), ['-']).maxReportBytes).toBe(READ_LIMITS.maxReportBytes);
    const big = sized('big2.pb.gz', 64 * 1024 * 1024);
    expect(streamedReportLimits(ctxOf({ limit: ['maxReportBytes=1KiB'] }), [big]).maxReportBytes).toBe(1024);
  });

  it('is the fixed default under --json, which holds the whole report', () => {
    const big = sized('big3.pb.gz', 64 * 1024 * 1024);
    const json = { ...ctxOf({}), json: true } as CliContext;
    expect(streamedReportLimits(json, [big]).maxReportBytes ?? READ_LIMITS.maxReportBytes).toBe(READ_LIMITS.maxReportBytes);
  });
});
