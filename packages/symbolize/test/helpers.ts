/** Test helpers: compile the C/C++ fixtures, and independent oracles (nm, readelf, addr2line). */

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { haveTool as haveToolFor } from '@profkit/test-utils';

export { which } from '@profkit/test-utils';

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
export const C_DIR = join(FIXTURES, 'c');

/** Warns (once per call) and returns whether the tool is installed. */
export function haveTool(tool: string, apt: string): boolean {
  return haveToolFor(tool, apt, 'symbolize tests');
}

export function tmp(prefix = 'profkit-symbolize-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function run(cmd: string, args: string[], input?: string): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', input, maxBuffer: 256 << 20, env: { ...process.env, LC_ALL: 'C' } });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

/** `MARK:name` comments of a source file → 1-based line numbers. */
export function markers(src: string): Map<string, number> {
  const m = new Map<string, number>();
  readFileSync(src, 'utf8')
    .split('\n')
    .forEach((l, i) => {
      const x = /MARK:(\w+)/.exec(l);
      if (x) m.set(x[1]!, i + 1);
    });
  return m;
}

/** Symbol → {address, size} from `nm -S` (the oracle for where functions are). */
export function nmSymbols(bin: string): Map<string, { addr: bigint; size: bigint }> {
  const out = new Map<string, { addr: bigint; size: bigint }>();
  for (const l of run('nm', ['-S', bin]).split('\n')) {
    const m = /^([0-9a-f]+) ([0-9a-f]+) [TtWw] (\S+)$/.exec(l);
    if (m) out.set(m[3]!, { addr: BigInt('0x' + m[1]), size: BigInt('0x' + m[2]) });
  }
  return out;
}

export interface Seg {
  offset: bigint;
  vaddr: bigint;
  filesz: bigint;
  memsz: bigint;
  flags: string;
}

/** PT_LOAD segments from `readelf -lW`. */
export function loadSegments(bin: string): Seg[] {
  const segs: Seg[] = [];
  for (const l of run('readelf', ['-lW', bin]).split('\n')) {
    const m = /^\s*LOAD\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+([RWE ]+?)\s+0x[0-9a-f]+$/.exec(l);
    if (m) segs.push({ offset: BigInt('0x' + m[1]), vaddr: BigInt('0x' + m[2]), filesz: BigInt('0x' + m[3]), memsz: BigInt('0x' + m[4]), flags: m[5]!.replace(/\s/g, '') });
  }
  return segs;
}

/** Build id from `readelf -n`. */
export function readelfBuildId(bin: string): string {
  const m = /Build ID: ([0-9a-f]+)/.exec(run('readelf', ['-n', bin]));
  return m ? m[1]! : '';
}

/** e_type from `readelf -h` (EXEC/DYN). */
export function readelfType(bin: string): string {
  return /Type:\s+(\w+)/.exec(run('readelf', ['-h', bin]))![1]!;
}

const PAGE = 4096n;
export const pageDown = (v: bigint) => v & ~(PAGE - 1n);
export const pageUp = (v: bigint) => (v + PAGE - 1n) & ~(PAGE - 1n);

/**
 * The runtime mapping of a binary's executable segment loaded with bias `bias` (as
 * /proc/self/maps shows it), and the function that turns a link-time address into a runtime one.
 */
export function execMapping(bin: string, bias: bigint): { start: bigint; limit: bigint; offset: bigint; runtime: (a: bigint) => bigint } {
  const x = loadSegments(bin).find((s) => s.flags.includes('E'))!;
  return {
    start: bias + pageDown(x.vaddr),
    limit: bias + pageUp(x.vaddr + x.memsz),
    offset: pageDown(x.offset),
    runtime: (a) => a + bias,
  };
}

export interface OracleFrame {
  func: string;
  file: string;
  line: number;
}

/** addr2line -aif run directly, one address at a time (the oracle for lines and inlining). */
export function addr2lineOracle(bin: string, addr: bigint): OracleFrame[] {
  const lines = run('addr2line', ['-aif', '-e', bin, addr.toString(16)]).trimEnd().split('\n');
  const out: OracleFrame[] = [];
  for (let i = 1; i + 1 < lines.length; i += 2) {
    const loc = lines[i + 1]!.replace(/ \(discriminator \d+\)$/, '');
    const c = loc.lastIndexOf(':');
    out.push({ func: lines[i]!, file: loc.slice(0, c), line: Number(loc.slice(c + 1)) || 0 });
  }
  return out;
}

export function compile(compiler: string, args: string[]): void {
  run(compiler, args);
}
