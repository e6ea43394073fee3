/**
 * The `ObjectTool` of `profkit disasm`: ELF binaries read through GNU binutils, as google/pprof's
 * `binutils` package reads them: symbols from `nm -S`, instructions (AT&T syntax) with their
 * function, file and line from `objdump -d --no-show-raw-insn -l`. A profile address maps to an
 * object address unchanged for executables (ET_EXEC), and relative to the mapping for
 * position-independent binaries and libraries (ET_DYN: address - start + offset).
 */

import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { ErrorCodes, ProfkitError, type ObjectFile, type ObjectInstruction, type ObjectSymbol, type ObjectTool } from '@profkit/core/node';
import { goErrnoText } from './source-files.js';

/** Output of one nm/objdump run beyond this is an error (a symbol's listing is far smaller). */
const MAX_TOOL_OUTPUT_BYTES = 256 << 20;

const ET_DYN = 3;

/** The ELF `e_type` of `path`, or a reason it is not a readable ELF file. */
function elfType(path: string): number | { error: string } {
  let fd: number;
  try {
    // A FIFO would block the open, a device be read by nm without end.
    if (!statSync(path).isFile()) return { error: `${path}: not a regular file` };
    fd = openSync(path, 'r');
  } catch (e) {
    return { error: `open ${path}: ${goErrnoText(e)}` };
  }
  try {
    const h = Buffer.alloc(18);
    const n = readSync(fd, h, 0, 18, 0);
    if (n < 18 || h[0] !== 0x7f || h.toString('latin1', 1, 4) !== 'ELF') return { error: `${path}: not an ELF file` };
    return h[5] === 2 ? h.readUInt16BE(16) : h.readUInt16LE(16);
  } finally {
    closeSync(fd);
  }
}

/** `tool ARGS`'s output, or why it failed; a tool that cannot be started is a PROFKIT_E_UNSUPPORTED error. */
function run(tool: string, args: string[]): string | { error: string } {
  const r = spawnSync(tool, args, { encoding: 'utf8', maxBuffer: MAX_TOOL_OUTPUT_BYTES });
  if ((r.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') {
    throw new ProfkitError(ErrorCodes.UNSUPPORTED, `disasm needs GNU binutils: ${tool} is not installed (apt-get install binutils)`, { rule: 'disasm reads binaries with nm and objdump' });
  }
  if (r.error) return { error: `${tool}: ${r.error.message}` };
  if (r.status !== 0) return { error: `${tool} ${args[args.length - 1]}: ${(r.stderr || `exit status ${r.status}`).trim()}` };
  return r.stdout;
}

/** `nm -S` lines with a size: address, size, type, name. */
const NM_SYMBOL = /^([0-9a-f]+) ([0-9a-f]+) \S (.+)$/;
/** objdump's lines: an instruction, a function name (`name():`), a source position (`file:line`). */
const OBJDUMP_INSTRUCTION = /^\s+([0-9a-f]+):\t(.*)$/;
const OBJDUMP_FUNCTION = /^(\S.*)\(\):$/;
const OBJDUMP_POSITION = /^(\S.*):(\d+)(?: \(discriminator \d+\))?$/;

/** Parses `objdump -d -l --no-show-raw-insn` output. */
export function parseObjdump(text: string): ObjectInstruction[] {
  const out: ObjectInstruction[] = [];
  let fn = '';
  let file = '';
  let line = 0;
  for (const l of text.split('\n')) {
    let m = OBJDUMP_INSTRUCTION.exec(l);
    if (m) {
      out.push({ address: BigInt('0x' + m[1]), text: m[2]!.trimEnd(), function: fn, file, line });
      continue;
    }
    if ((m = OBJDUMP_FUNCTION.exec(l))) fn = m[1]!;
    else if ((m = OBJDUMP_POSITION.exec(l))) {
      file = m[1]!;
      line = Number(m[2]);
    }
  }
  return out;
}

class BinutilsFile implements ObjectFile {
  private allSymbols: ObjectSymbol[] | undefined;
  /** Absolute, so that a mapping named `-x` or `@file` reaches nm/objdump as a file, not an option or response file. */
  private readonly path: string;
  constructor(
    path: string,
    private readonly base: bigint,
    private readonly intelSyntax: boolean,
  ) {
    this.path = resolve(path);
  }

  symbols(matches: (name: string) => boolean, address: bigint | undefined): ObjectSymbol[] {
    if (!this.allSymbols) {
      const text = run('nm', ['-S', this.path]);
      this.allSymbols = [];
      if (typeof text === 'string') {
        for (const l of text.split('\n')) {
          const m = NM_SYMBOL.exec(l);
          if (!m) continue;
          const start = BigInt('0x' + m[1]);
          const size = BigInt('0x' + m[2]);
          if (size > 0n) this.allSymbols.push({ name: m[3]!, start, end: start + size - 1n });
        }
      }
    }
    return this.allSymbols.filter((s) => matches(s.name) && (address === undefined || address === 0n || (s.start <= address && address <= s.end)));
  }

  objectAddress(address: bigint): bigint {
    return address - this.base;
  }

  disassemble(start: bigint, end: bigint): ObjectInstruction[] {
    const syntax = this.intelSyntax ? ['-M', 'intel'] : [];
    const text = run('objdump', ['-d', '--no-show-raw-insn', '-l', ...syntax, `--start-address=0x${start.toString(16)}`, `--stop-address=0x${end.toString(16)}`, this.path]);
    return typeof text === 'string' ? parseObjdump(text) : [];
  }
}

/** The binutils object tool (AT&T syntax, or Intel's); one `ObjectFile` per binary and base. */
export function binutilsTool(intelSyntax = false): ObjectTool {
  const opened = new Map<string, ObjectFile | { error: string }>();
  return {
    open({ file, start, offset }) {
      const type = elfType(file);
      if (typeof type !== 'number') return type;
      const base = type === ET_DYN ? start - offset : 0n;
      const key = `${file}\0${base}`;
      let f = opened.get(key);
      if (!f) opened.set(key, (f = new BinutilsFile(file, base, intelSyntax)));
      return f;
    },
  };
}
