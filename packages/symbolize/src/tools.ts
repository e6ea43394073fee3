/**
 * The external tools and their protocols:
 *
 * - `llvm-symbolizer --inlining -demangle=false --output-style=JSON --obj=FILE`: one request
 *   line `0x<addr>` per address, one JSON reply line per request (`Symbol[]`, innermost first);
 * - `addr2line -aif -e FILE`: address lines in hex, replies `0x<addr>` then (function,
 *   `file:line`) pairs per inline frame; a batch ends with the sentinel `ffffffffffffffff`, whose
 *   echo (and its two following lines) closes the last reply;
 * - `nm --numeric-sort --print-size --format=posix FILE`: names-only fast mode;
 *
 * Each symbolizer is one long-running process per binary; addresses are sent in batches
 * (pipelined), not one round trip each.
 */

import { accessSync, constants as fsc } from 'node:fs';
import { delimiter, join } from 'node:path';
import { LineProcess, runLines } from './process.js';

/** One source frame for an address (innermost first in a list). */
export interface Frame {
  /** Function (system, i.e. mangled) name; `''` = unknown. */
  func: string;
  /** Source file; `''` = unknown. */
  file: string;
  /** Line, 0 = unknown. */
  line: number;
  /** Column, 0 = unknown. */
  column: number;
  /** First line of the function, 0 = unknown. */
  startLine: number;
}

export interface ToolPaths {
  llvmSymbolizer?: string;
  addr2line?: string;
  nm?: string;
  cxxfilt?: string;
}

/** Finds an executable by name on `$PATH` (plus `$PPROF_TOOLS` and extra directories). */
export function findTool(names: string[], extraDirs: string[] = []): string | undefined {
  const dirs = [...extraDirs, ...(process.env.PPROF_TOOLS ?? '').split(delimiter), ...(process.env.PATH ?? '').split(delimiter)].filter(Boolean);
  for (const name of names) {
    if (name.includes('/')) {
      if (isExecutable(name)) return name;
      continue;
    }
    for (const d of dirs) {
      const p = join(d, name);
      if (isExecutable(p)) return p;
    }
  }
  return undefined;
}

function isExecutable(p: string): boolean {
  try {
    accessSync(p, fsc.X_OK);
    return true;
  } catch {
    return false;
  }
}

export interface Symbolizer {
  readonly tool: string;
  /** Frames (innermost first) for each address (already relative to the binary: addr - base). */
  lookup(addresses: bigint[]): Promise<Frame[][]>;
  close(): Promise<void>;
}

export interface ToolOptions {
  timeoutMs: number;
  batchSize: number;
  signal?: AbortSignal;
}

const hex = (a: bigint) => a.toString(16);

/** llvm-symbolizer with JSON output and inlining on. */
export class LlvmSymbolizer implements Symbolizer {
  readonly tool = 'llvm-symbolizer';
  private readonly proc: LineProcess;

  constructor(
    command: string,
    readonly file: string,
    private readonly options: ToolOptions,
  ) {
    this.proc = new LineProcess(command, ['--inlining', '-demangle=false', '--output-style=JSON', `--obj=${file}`], options);
  }

  async lookup(addresses: bigint[]): Promise<Frame[][]> {
    const out: Frame[][] = [];
    for (let b = 0; b < addresses.length; b += this.options.batchSize) {
      const batch = addresses.slice(b, b + this.options.batchSize);
      const writing = this.proc.write(batch.map((a) => `0x${hex(a)}\n`).join(''));
      writing.catch(() => undefined); // a failed write also fails the reads below
      for (let i = 0; i < batch.length; i++) out.push(parseLlvmJson(await this.proc.readLine(), this.file));
      await writing;
    }
    return out;
  }

  close(): Promise<void> {
    return this.proc.close();
  }
}

/** Parses one llvm-symbolizer JSON reply line into frames. */
export function parseLlvmJson(line: string, file = ''): Frame[] {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    throw new Error(`llvm-symbolizer replied with a line that is not JSON for ${file}: ${line.slice(0, 200)}`);
  }
  const o = v as { Symbol?: unknown; Error?: { Message?: string } };
  if (o.Error) throw new Error(`llvm-symbolizer: ${o.Error.Message ?? 'error'}`);
  if (!Array.isArray(o.Symbol)) return [];
  const frames: Frame[] = [];
  for (const s of o.Symbol as Record<string, unknown>[]) {
    const func = typeof s.FunctionName === 'string' && s.FunctionName !== '??' ? s.FunctionName : '';
    const f = typeof s.FileName === 'string' && s.FileName !== '??' ? s.FileName : '';
    const num = (x: unknown) => (typeof x === 'number' && Number.isSafeInteger(x) && x > 0 ? x : 0);
    if (!func && !f) continue;
    frames.push({ func, file: f, line: num(s.Line), column: num(s.Column), startLine: num(s.StartLine) });
  }
  return frames;
}

const SENTINEL = 0xffffffffffffffffn;

/** GNU addr2line in `-aif` mode, batched with a trailing sentinel. */
export class Addr2Line implements Symbolizer {
  readonly tool = 'addr2line';
  private readonly proc: LineProcess;
  /** nm-based names, used to fix names addr2line truncates (binutils bug 17541), as pprof does. */
  nm: NmSymbols | undefined;

  constructor(
    command: string,
    readonly file: string,
    private readonly options: ToolOptions,
  ) {
    this.proc = new LineProcess(command, ['-aif', '-e', file], options);
  }

  async lookup(addresses: bigint[]): Promise<Frame[][]> {
    const out: Frame[][] = [];
    for (let b = 0; b < addresses.length; b += this.options.batchSize) {
      const batch = addresses.slice(b, b + this.options.batchSize);
      const writing = this.proc.write(batch.map((a) => `${hex(a)}\n`).join('') + `${hex(SENTINEL)}\n`);
      writing.catch(() => undefined); // a failed write also fails the reads below
      let line = await this.proc.readLine();
      for (let i = 0; i < batch.length; i++) {
        if (!isEcho(line, batch[i]!)) throw new Error(`addr2line: expected the echo of 0x${hex(batch[i]!)}, got ${JSON.stringify(line.slice(0, 100))}`);
        const next = i + 1 < batch.length ? batch[i + 1]! : SENTINEL;
        const frames: Frame[] = [];
        for (;;) {
          const fn = await this.proc.readLine();
          if (isEcho(fn, next)) {
            line = fn;
            break;
          }
          // A function name is never a bare hex number: an unexpected echo is a protocol error,
          // reported now rather than after the inactivity timeout.
          if (/^0x[0-9a-fA-F]+$/.test(fn)) throw new Error(`addr2line: expected the echo of 0x${hex(next)}, got ${fn}`);
          const loc = await this.proc.readLine();
          const fr = parseAddr2LineFrame(fn, loc);
          if (fr) frames.push(fr);
        }
        if (this.nm && frames.length > 0) {
          const nmName = this.nm.lookup(batch[i]!);
          const last = frames[frames.length - 1]!;
          if (nmName && nmName.length >= last.func.length + 2) last.func = nmName;
        }
        out.push(frames);
      }
      // The sentinel's own reply: two lines (`??`, `??:0`).
      await this.proc.readLine();
      await this.proc.readLine();
      await writing;
    }
    return out;
  }

  close(): Promise<void> {
    return this.proc.close();
  }
}

/** Whether `line` is addr2line's echo of `addr` (32-bit binaries echo 8 digits: the low half). */
function isEcho(line: string, addr: bigint): boolean {
  if (!/^0x[0-9a-fA-F]+$/.test(line)) return false;
  const v = BigInt(line);
  return v === addr || (line.length === 10 && v === (addr & 0xffffffffn));
}

/** One addr2line (function, `file:line`) pair → frame; `undefined` when both are unknown. */
export function parseAddr2LineFrame(fn: string, loc: string): Frame | undefined {
  const func = fn === '??' ? '' : fn;
  let file = '';
  let line = 0;
  const l = loc.replace(/ \(discriminator \d+\)$/, '');
  const colon = l.lastIndexOf(':');
  if (colon >= 0) {
    file = l.slice(0, colon);
    const n = Number(l.slice(colon + 1));
    line = Number.isSafeInteger(n) && n > 0 ? n : 0;
  } else file = l;
  if (file === '??') file = '';
  if (!func && !file) return undefined;
  return { func, file, line, column: 0, startLine: 0 };
}

/** A binary's symbol table from `nm`, for names-only lookups. */
export class NmSymbols {
  constructor(
    private readonly starts: BigUint64Array,
    private readonly sizes: BigUint64Array,
    private readonly names: string[],
    private readonly isData: Uint8Array,
  ) {}

  get size(): number {
    return this.names.length;
  }

  /** Name of the symbol with the greatest start ≤ addr (data symbols: also addr < start+size). */
  lookup(addr: bigint): string | undefined {
    let lo = 0;
    let hi = this.starts.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.starts[mid]! <= addr) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (found < 0) return undefined;
    // Among symbols at the same address, prefer the first global code symbol (nm -n order).
    const start = this.starts[found]!;
    let i = found;
    while (i > 0 && this.starts[i - 1] === start) i--;
    let pick = i;
    for (let j = i; j <= found; j++) if (!this.isData[j]) {
      pick = j;
      break;
    }
    if (this.isData[pick] && this.sizes[pick]! > 0n && addr >= start + this.sizes[pick]!) return undefined;
    return this.names[pick];
  }
}

/** Runs nm on a binary (falling back to its dynamic symbols when it is stripped). */
export async function loadNm(command: string, file: string, options: ToolOptions): Promise<NmSymbols> {
  const read = async (extra: string[]) => {
    const rows: { start: bigint; size: bigint; name: string; data: boolean }[] = [];
    await runLines(
      command,
      ['--numeric-sort', '--print-size', '--format=posix', ...extra, file],
      undefined,
      (line) => {
        // posix format: name type value [size]
        const m = /^(\S+) ([A-Za-z]) ([0-9a-fA-F]+)(?: ([0-9a-fA-F]+))?\s*$/.exec(line);
        if (!m) return;
        const type = m[2]!;
        if ('UuwvN'.includes(type) || type === 'a' || type === 'A') return;
        const code = 'TtWiI'.includes(type);
        const data = 'DdBbRrGgSsVC'.includes(type);
        if (!code && !data) return;
        rows.push({ name: m[1]!, start: BigInt('0x' + m[3]!), size: m[4] ? BigInt('0x' + m[4]) : 0n, data: !code });
      },
      options,
    );
    return rows;
  };
  // Only the symbol table (`.symtab`), as pprof: the dynamic symbols of a stripped binary
  // miss every local function, so the nearest one would usually be a wrong name.
  const rows = await read([]);
  rows.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  return new NmSymbols(
    BigUint64Array.from(rows.map((r) => r.start)),
    BigUint64Array.from(rows.map((r) => r.size)),
    rows.map((r) => r.name),
    Uint8Array.from(rows.map((r) => (r.data ? 1 : 0))),
  );
}

/** Names-only symbolizer over `nm` output. */
export class NmSymbolizer implements Symbolizer {
  readonly tool = 'nm';
  constructor(private readonly symbols: NmSymbols) {}

  async lookup(addresses: bigint[]): Promise<Frame[][]> {
    return addresses.map((a) => {
      const name = this.symbols.lookup(a);
      return name ? [{ func: name, file: '', line: 0, column: 0, startLine: 0 }] : [];
    });
  }

  async close(): Promise<void> {}
}
