/**
 * `go tool pprof -disasm`: the instructions of every symbol of the profile's binaries that
 * matches a regexp and holds samples, each with the flat and cum of the samples at its address
 * (pprof `PrintAssembly`, graph at `addresses` granularity without inlined frames). Platform-
 * neutral: the binaries are read through an `ObjectTool` (the CLI's runs `nm` and `objdump`).
 */

import { ErrorCodes, ProfkitError } from '../errors.js';
import type { Profile } from '../model.js';
import { formatPercentage, formatValue } from './format.js';
import { baseName, compareGoStrings } from './internal.js';
import { goGraph, printableName, type GoGraphNode } from './pprof-graph.js';

/** A symbol of a binary: pprof's `plugin.Sym` (`end` is the last byte: address + size - 1). */
export interface ObjectSymbol {
  name: string;
  start: bigint;
  end: bigint;
}

/** A disassembled instruction (object-file address) with its source position when known. */
export interface ObjectInstruction {
  address: bigint;
  text: string;
  function: string;
  file: string;
  line: number;
}

/** One opened binary (pprof `plugin.ObjFile`). */
export interface ObjectFile {
  /** The symbols whose name `matches`, or that contain `address` when it is given. */
  symbols(matches: (name: string) => boolean, address: bigint | undefined): ObjectSymbol[];
  /** The object-file address of a profile (runtime) address. */
  objectAddress(address: bigint): bigint;
  /** The instructions from `start` up to (not including) `end`. */
  disassemble(start: bigint, end: bigint): ObjectInstruction[];
}

/** Opens the binaries a profile's mappings name (pprof `plugin.ObjTool`). */
export interface ObjectTool {
  /** The binary of a mapping, or a reason it cannot be read (reported, the mapping skipped). */
  open(mapping: { file: string; start: bigint; limit: bigint; offset: bigint }): ObjectFile | { error: string };
}

export interface DisasmReportOptions {
  sampleTypeIndex?: number;
  /** The report total (default: of `loaded`; pprof takes it before -focus and the other filters). */
  total?: bigint;
  /** Whether a name is of interest (pprof's symbol regexp, `MatchString`). */
  symbol: (name: string) => boolean;
  /** The regexp as typed: for the "no matches" error, and read as an address when it is one. */
  symbolText: string;
  tool: ObjectTool;
}

export interface DisasmInstruction {
  address: bigint;
  text: string;
  flat: bigint;
  cum: bigint;
  /** The source position shown beside it ('' when unchanged from the previous instruction). */
  location: string;
}

export interface DisasmRoutine {
  name: string;
  file: string;
  flat: bigint;
  cum: bigint;
  instructions: DisasmInstruction[];
}

export interface DisasmReport {
  sampleTypeIndex: number;
  unit: string;
  total: bigint;
  routines: DisasmRoutine[];
  /** Binaries that could not be read. */
  errors: string[];
  text: string;
}

/** Go's `strconv.ParseUint(s, 0, 64)` for the forms a symbol regexp can take as an address. */
function parseAddress(s: string): bigint | undefined {
  const m = /^(?:0[xX]([0-9a-fA-F]+)|0[oO]?([0-7]+)|0[bB]([01]+)|([1-9][0-9]*|0))$/.exec(s);
  if (!m) return undefined;
  const v = m[1] !== undefined ? BigInt('0x' + m[1]) : m[2] !== undefined ? BigInt('0o' + m[2]) : m[3] !== undefined ? BigInt('0b' + m[3]) : BigInt(m[4]!);
  return v < 2n ** 64n ? v : undefined;
}

interface OpenedSymbol {
  symbol: ObjectSymbol;
  file: ObjectFile;
  binary: string;
}

/**
 * pprof `annotateAssembly`: each instruction gets the samples from its address up to the next
 * instruction's, and the function, file and line of the first sample when the disassembler gave
 * none.
 */
function annotate(insts: ObjectInstruction[], nodes: GoGraphNode[], file: ObjectFile): (ObjectInstruction & { flat: bigint; cum: bigint })[] {
  const samples = nodes
    .map((n) => ({ n, at: file.objectAddress(n.info.address) }))
    .sort((a, b) => (a.n.info.address < b.n.info.address ? -1 : a.n.info.address > b.n.info.address ? 1 : compareGoStrings(printableName(a.n.info), printableName(b.n.info))));
  let s = 0;
  return insts.map((inst, i) => {
    const next = i + 1 < insts.length ? insts[i + 1]!.address : 2n ** 64n - 1n;
    const out = { address: inst.address, text: inst.text, flat: 0n, cum: 0n, function: inst.function, file: inst.file === '' ? '' : baseName(inst.file), line: inst.line };
    for (; s < samples.length && samples[s]!.at < next; s++) {
      const n = samples[s]!.n;
      out.flat += n.flat;
      out.cum += n.cum;
      if (n.info.file !== '' && out.file === '') out.file = baseName(n.info.file);
      if (n.info.lineno !== 0 && out.line === 0) out.line = n.info.lineno;
      if (n.info.name !== '' && out.function === '') out.function = n.info.name;
    }
    return out;
  });
}

/** `go tool pprof -disasm REGEX` of a `goPprofLoad` result. */
export function disasmReport(loaded: Profile, options: DisasmReportOptions): DisasmReport {
  const g = goGraph(loaded, { sampleTypeIndex: options.sampleTypeIndex, granularity: 'addresses', inlines: false, objNames: true, total: options.total });
  const address = parseAddress(options.symbolText);
  // Only binaries with a matching node are read (pprof's shortcut), or the one holding `address`.
  // pprof matches the node's printable name only ("0000000000401331 spin_a …"), so `^spin_a`
  // finds nothing there; profkit matches the function name too.
  const withSamples = new Set(
    g.nodes.filter((n) => n.info.objfile !== '' && (options.symbol(printableName(n.info)) || options.symbol(n.info.name))).map((n) => n.info.objfile),
  );
  const m = loaded['.mappings'];
  const symbols: OpenedSymbol[] = [];
  const errors: string[] = [];
  for (let r = 0; r < m.filename.length; r++) {
    const binary = m.filename[r]!;
    if (!withSamples.has(binary) && (address === undefined || address < m.memory_start[r]! || address > m.memory_limit[r]!)) continue;
    const file = options.tool.open({ file: binary, start: m.memory_start[r]!, limit: m.memory_limit[r]!, offset: m.file_offset[r]! });
    if ('error' in file) {
      errors.push(file.error);
      continue;
    }
    for (const symbol of file.symbols(options.symbol, address)) symbols.push({ symbol, file, binary });
  }
  // pprof `nodesPerSymbol`: the nodes inside each symbol that has any (pprof leaves out the
  // symbol's last byte, where a one-byte `ret` is; profkit does not).
  const perSymbol = new Map<OpenedSymbol, GoGraphNode[]>();
  for (const s of symbols) {
    const inside = g.nodes.filter((n) => {
      const at = s.file.objectAddress(n.info.address);
      return at >= s.symbol.start && at <= s.symbol.end;
    });
    if (inside.length > 0) perSymbol.set(s, inside);
  }
  if (perSymbol.size === 0) {
    const unread = errors.length > 0 ? ` (binaries not read: ${errors.join('; ')})` : '';
    throw new ProfkitError(ErrorCodes.USAGE, `no matches found for regexp: ${options.symbolText}${unread}`, { option: 'symbol', rule: 'the regexp must match a symbol with samples in a readable binary' });
  }
  const ordered = [...perSymbol.keys()].sort((a, b) => compareGoStrings(a.symbol.name, b.symbol.name) || (a.symbol.start < b.symbol.start ? -1 : a.symbol.start > b.symbol.start ? 1 : 0));
  const value = (v: bigint) => formatValue(v, g.unit);
  const dot = (v: bigint) => (v === 0n ? '.' : value(v));
  const out: string[] = [`Total: ${value(g.total)}\n`];
  const routines: DisasmRoutine[] = [];
  for (const s of ordered) {
    const nodes = perSymbol.get(s)!;
    const routine: DisasmRoutine = { name: s.symbol.name, file: s.binary, flat: 0n, cum: 0n, instructions: [] };
    for (const n of nodes) {
      routine.flat += n.flat;
      routine.cum += n.cum;
    }
    out.push(`ROUTINE ======================== ${s.symbol.name}\n`);
    out.push(`${value(routine.flat).padStart(10)} ${value(routine.cum).padStart(10)} (flat, cum) ${formatPercentage(routine.cum, g.total)} of Total\n`);
    let last = { function: '', file: '', line: 0 };
    // The whole symbol: pprof stops one byte short, so its listing misses a final one-byte
    // instruction or ends in undecodable bytes.
    for (const inst of annotate(s.file.disassemble(s.symbol.start, s.symbol.end + 1n), nodes, s.file)) {
      let location = '';
      // The position is shown where it changes.
      if (inst.function !== last.function || inst.file !== last.file || inst.line !== last.line) {
        last = inst;
        if (inst.function !== '') location = inst.function + ' ';
        if (inst.file !== '') location += inst.file + (inst.line !== 0 ? `:${inst.line}` : '');
      }
      const columns = `${dot(inst.flat).padStart(10)} ${dot(inst.cum).padStart(10)} ${inst.address.toString(16).padStart(10)}: `;
      if (location === '') out.push(`${columns}${inst.text}\n`);
      else if (inst.text.length < 40) out.push(`${columns}${inst.text.padEnd(40)};${location}\n`);
      else out.push(`${' '.repeat(74)};${location}\n${columns}${inst.text}\n`);
      routine.instructions.push({ address: inst.address, text: inst.text, flat: inst.flat, cum: inst.cum, location });
    }
    routines.push(routine);
  }
  return { sampleTypeIndex: g.sampleTypeIndex, unit: g.unit, total: g.total, routines, errors, text: out.join('') };
}
