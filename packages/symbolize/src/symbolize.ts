/**
 * `symbolize(profile, options)`: turns the addresses of a profile into functions, files and lines.
 *
 * Per mapping (google/pprof's `internal/symbolizer` flow): skip mappings that are already
 * symbolized (unless `force`) or cannot be (pseudo files, URLs); find the binary (see
 * `locate.ts`); check its build id against the mapping's; compute the base address (`base.ts`);
 * ask one long-running symbolizer process per binary for every address at once (batched); turn
 * each frame list into the location's lines (innermost first, inline callers into
 * `.inline_lines`), with functions deduplicated by (name, system name, file, start line); demangle
 * C++ names (system names stay mangled); set the mapping's has_* flags.
 *
 * Nothing is guessed silently: a mapping whose binary is missing, whose build id differs, or whose
 * base address cannot be computed is reported (with a hint) and its locations stay addresses.
 * Optionally the `/pprof/symbol` protocol names what is left (`remote`).
 */

import {
  ErrorCodes,
  ProfkitError,
  isProfkitError,
  type Profile,
  type Warning,
} from '@profkit/core/node';
import { getBase } from './base.js';
import { displayName, demangleAll, type DemangleMode, DEMANGLE_MODES } from './demangle.js';
import { elfTypeName, readElf, type ElfFile } from './elf.js';
import { candidateBinaries, defaultSearchPath, splitSearchPath, unsymbolizableReason } from './locate.js';
import { symbolizeRemoteAddresses, symbolzURL, type RemoteOptions } from './remote.js';
import { Addr2Line, LlvmSymbolizer, NmSymbolizer, findTool, loadNm, type Frame, type Symbolizer, type ToolPaths } from './tools.js';

export type SymbolizeMode = 'full' | 'names';
export type SymbolizerTool = 'auto' | 'llvm-symbolizer' | 'addr2line';

export interface SymbolizeOptions {
  /** `full` (functions, files, lines, inline frames; default) or `names` (nm, names only). */
  mode?: SymbolizeMode;
  /**
   * The main binary: symbolizes the first mapping, whose file becomes this path in the result,
   * as pprof's command-line binary does (`locateBinaries`: `p.Mapping[0].File = execName`).
   */
  binary?: string;
  /** Directories to search (array, or a `:`-separated string); default `$PPROF_BINARY_PATH` or `$HOME/pprof/binaries`. */
  searchPath?: string[] | string;
  /** Which line symbolizer: `auto` (llvm-symbolizer when found, else addr2line), or force one. */
  tool?: SymbolizerTool;
  /** C++ demangling (default `default`: no parameters, no template arguments). */
  demangle?: DemangleMode;
  /** Symbolize again locations and mappings that already have symbols. */
  force?: boolean;
  /** Do local symbolization (default true). */
  local?: boolean;
  /** A profile source URL or symbol endpoint: names what local symbolization left, with `/pprof/symbol`. */
  remote?: string;
  remoteOptions?: RemoteOptions;
  /** Paths of the tools (default: looked up on `$PATH` and `$PPROF_TOOLS`). */
  tools?: ToolPaths;
  /** Inactivity timeout for each tool reply, ms (default 60000). */
  timeoutMs?: number;
  /** Addresses per pipelined batch (default 4096). */
  batchSize?: number;
  signal?: AbortSignal;
  /** Environment for the default search path (default `process.env`). */
  env?: NodeJS.ProcessEnv;
}

export type MappingStatus =
  | 'symbolized'
  | 'already-symbolized'
  | 'no-addresses'
  | 'unsymbolizable'
  | 'missing-binary'
  | 'build-id-mismatch'
  | 'bad-binary'
  | 'tool-failed'
  | 'remote'
  | 'remote-failed';

export interface MappingReport {
  /** 0 for locations without a mapping (remote only). */
  mappingId: number;
  filename: string;
  buildId: string;
  status: MappingStatus;
  /** The binary used or rejected. */
  binary?: string;
  binaryBuildId?: string;
  /** The tool that answered (`llvm-symbolizer`, `addr2line`, `nm`, `remote`). */
  tool?: string;
  /** The base address subtracted from runtime addresses. */
  base?: bigint;
  /** Addresses that needed symbols. */
  addresses: number;
  /** Addresses that got at least one frame. */
  symbolized: number;
  message: string;
  hint?: string;
  /** Candidate files examined (for missing/mismatched binaries). */
  tried?: string[];
}

export interface SymbolizeResult {
  profile: Profile;
  reports: MappingReport[];
  warnings: Warning[];
}

/** Symbolizer processes per binary, reused across mappings of the same binary and closed at the end. */
class ToolPool {
  private readonly procs = new Map<string, Symbolizer>();
  private llvm: string | undefined | null = null;
  private a2l: string | undefined | null = null;
  private nmPath: string | undefined | null = null;
  private readonly nmCache = new Map<string, Promise<import('./tools.js').NmSymbols>>();

  constructor(
    private readonly paths: ToolPaths,
    private readonly timeoutMs: number,
    private readonly batchSize: number,
    private readonly signal: AbortSignal | undefined,
  ) {}

  private resolve(which: 'llvm' | 'a2l' | 'nm'): string | undefined {
    if (which === 'llvm') return this.llvm === null ? (this.llvm = findTool(this.paths.llvmSymbolizer ? [this.paths.llvmSymbolizer] : ['llvm-symbolizer'])) : this.llvm;
    if (which === 'a2l') return this.a2l === null ? (this.a2l = findTool(this.paths.addr2line ? [this.paths.addr2line] : ['addr2line', 'gaddr2line'])) : this.a2l;
    return this.nmPath === null ? (this.nmPath = findTool(this.paths.nm ? [this.paths.nm] : ['nm', 'llvm-nm', 'gnm'])) : this.nmPath;
  }

  private opts() {
    return { timeoutMs: this.timeoutMs, batchSize: this.batchSize, signal: this.signal };
  }

  nm(file: string) {
    let p = this.nmCache.get(file);
    if (!p) {
      const nm = this.resolve('nm');
      if (!nm) return Promise.reject(new ProfkitError('PROFKIT_E_SYMBOLIZE_TOOL', 'nm was not found on $PATH (install binutils)', { tool: 'nm', rule: 'names mode needs nm' }));
      p = loadNm(nm, file, this.opts());
      this.nmCache.set(file, p);
    }
    return p;
  }

  /** The symbolizer for `file` in `mode` (one process per binary and tool). */
  async get(file: string, mode: SymbolizeMode, tool: SymbolizerTool): Promise<Symbolizer> {
    const key = `${mode}\u0000${tool}\u0000${file}`;
    const have = this.procs.get(key);
    if (have) return have;
    let s: Symbolizer;
    if (mode === 'names') s = new NmSymbolizer(await this.nm(file));
    else {
      const llvm = tool === 'addr2line' ? undefined : this.resolve('llvm');
      if (tool === 'llvm-symbolizer' && !llvm) throw new ProfkitError('PROFKIT_E_SYMBOLIZE_TOOL', 'llvm-symbolizer was not found on $PATH (apt-get install llvm)', { tool: 'llvm-symbolizer', rule: 'tool must be installed' });
      if (llvm) s = new LlvmSymbolizer(llvm, file, this.opts());
      else {
        const a2l = this.resolve('a2l');
        if (!a2l) {
          throw new ProfkitError('PROFKIT_E_SYMBOLIZE_TOOL', 'neither llvm-symbolizer nor addr2line was found on $PATH (apt-get install binutils, or llvm)', { tool: 'addr2line', rule: 'tool must be installed' });
        }
        const a = new Addr2Line(a2l, file, this.opts());
        a.nm = await this.nm(file).catch(() => undefined);
        s = a;
      }
    }
    this.procs.set(key, s);
    return s;
  }

  /** Replaces a failed llvm-symbolizer by addr2line (old LLVM without JSON output, crashes). */
  async fallback(file: string): Promise<Symbolizer | undefined> {
    const key = `full\u0000auto\u0000${file}`;
    const old = this.procs.get(key);
    if (!old || old.tool !== 'llvm-symbolizer') return undefined;
    await old.close().catch(() => undefined);
    this.procs.delete(key);
    const a2l = this.resolve('a2l');
    if (!a2l) return undefined;
    const a = new Addr2Line(a2l, file, this.opts());
    a.nm = await this.nm(file).catch(() => undefined);
    this.procs.set(key, a);
    return a;
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.procs.values()].map((p) => p.close().catch(() => undefined)));
    this.procs.clear();
  }
}

const hex = (v: bigint) => '0x' + v.toString(16);

/** Rows of locations that need symbols in mapping `mappingId`. */
function locationsToSymbolize(p: Profile, mappingId: number, force: boolean): number[] {
  const l = p.locations;
  const out: number[] = [];
  for (let r = 0; r < l.location_id.length; r++) {
    if (l['.mapping_id'][r] !== mappingId || l['.address'][r] === 0n) continue;
    const hasLines = l.function_id[r] !== 0 || l['.inline_offsets'][r + 1]! > l['.inline_offsets'][r]!;
    if (hasLines && !force) continue;
    out.push(r);
  }
  return out;
}

interface PendingLines {
  /** Location row → frames (innermost first); system names not yet demangled. */
  frames: Map<number, Frame[]>;
}

function pickBinary(
  m: { filename: string; buildId: string },
  candidates: string[],
): { elf?: ElfFile; mismatched: { path: string; id: string }[]; broken: { path: string; why: string }[] } {
  const mismatched: { path: string; id: string }[] = [];
  const broken: { path: string; why: string }[] = [];
  for (const c of candidates) {
    let elf: ElfFile;
    try {
      elf = readElf(c);
    } catch (e) {
      broken.push({ path: c, why: isProfkitError(e) ? e.message : String(e) });
      continue;
    }
    if (m.buildId && elf.buildId && elf.buildId.toLowerCase() !== m.buildId.toLowerCase()) {
      mismatched.push({ path: c, id: elf.buildId });
      continue;
    }
    return { elf, mismatched, broken };
  }
  return { mismatched, broken };
}

/** Symbolizes a profile; see the module comment. The input profile is not modified. */
export async function symbolize(input: Profile, options: SymbolizeOptions = {}): Promise<SymbolizeResult> {
  const mode = options.mode ?? 'full';
  if (mode !== 'full' && mode !== 'names') throw new ProfkitError(ErrorCodes.USAGE, `unknown symbolization mode "${String(mode)}" (full or names)`, { option: 'mode' });
  const tool = options.tool ?? 'auto';
  if (!['auto', 'llvm-symbolizer', 'addr2line'].includes(tool)) throw new ProfkitError(ErrorCodes.USAGE, `unknown tool "${tool}" (auto, llvm-symbolizer or addr2line)`, { option: 'tool' });
  const demangleMode = options.demangle ?? 'default';
  if (!DEMANGLE_MODES.includes(demangleMode)) throw new ProfkitError(ErrorCodes.USAGE, `unknown demangle mode "${demangleMode}" (${DEMANGLE_MODES.join(', ')})`, { option: 'demangle' });
  const searchPath = options.searchPath === undefined ? defaultSearchPath(options.env) : typeof options.searchPath === 'string' ? splitSearchPath(options.searchPath) : options.searchPath;
  const force = options.force === true;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const batchSize = options.batchSize ?? 4096;
  if (!Number.isSafeInteger(batchSize) || batchSize < 1) throw new ProfkitError(ErrorCodes.USAGE, `batchSize must be a positive integer, got ${batchSize}`, { option: 'batchSize' });
  if (!(timeoutMs > 0)) throw new ProfkitError(ErrorCodes.USAGE, `timeoutMs must be positive, got ${timeoutMs}`, { option: 'timeoutMs' });

  let p = cloneForSymbolization(input);
  const reports: MappingReport[] = [];
  const warnings: Warning[] = [];
  const maps = p['.mappings'];

  // The file names the profile recorded (reports and the --binary name check use them).
  const profiledNames = maps.filename.slice();
  // No mappings but a binary: a fake mapping covering everything (pprof does the same).
  if (maps.mapping_id.length === 0 && options.binary !== undefined && p.locations.location_id.length > 0) {
    p = withFakeMapping(p, options.binary);
  } else if (options.binary !== undefined && maps.mapping_id.length > 0) {
    // pprof: "Assumes the executable is the first Mapping entry" and names it after the binary.
    p = { ...p, '.mappings': { ...maps, filename: [options.binary, ...maps.filename.slice(1)] } };
  }

  const pending: PendingLines = { frames: new Map() };
  const pool = new ToolPool(options.tools ?? {}, timeoutMs, batchSize, options.signal);
  const flagUpdates = new Map<number, { fn: boolean; file: boolean; line: boolean; inline: boolean }>();
  try {
    if (options.local !== false) {
      const mm = p['.mappings'];
      for (let i = 0; i < mm.mapping_id.length; i++) {
        const id = mm.mapping_id[i]!;
        const filename = mm.filename[i]!;
        const buildId = mm.build_id[i]!;
        const rep: MappingReport = { mappingId: id, filename: profiledNames[i] ?? filename, buildId, status: 'symbolized', addresses: 0, symbolized: 0, message: '' };
        reports.push(rep);
        const complete = mm.has_functions[i] && mm.has_filenames[i] && mm.has_line_numbers[i];
        const rows = locationsToSymbolize(p, id, force);
        rep.addresses = rows.length;
        if (rows.length === 0) {
          rep.status = complete ? 'already-symbolized' : 'no-addresses';
          rep.message = complete ? 'already symbolized' : 'no location of this mapping needs symbols';
          continue;
        }
        if (complete && !force) {
          rep.status = 'already-symbolized';
          rep.message = `the mapping is marked symbolized; ${rows.length} address(es) without lines left as they are`;
          rep.hint = 'use --force to symbolize it again';
          continue;
        }
        const why = unsymbolizableReason(filename, buildId);
        if (why) {
          rep.status = 'unsymbolizable';
          rep.message = `cannot symbolize: ${why}`;
          continue;
        }
        const candidates = i === 0 && options.binary !== undefined ? [options.binary] : candidateBinaries({ filename, buildId }, searchPath);
        rep.tried = candidates;
        const picked = pickBinary({ filename, buildId }, candidates);
        if (!picked.elf) {
          if (picked.mismatched.length > 0) {
            rep.status = 'build-id-mismatch';
            rep.binary = picked.mismatched[0]!.path;
            rep.binaryBuildId = picked.mismatched[0]!.id;
            rep.message = `build id mismatch: the profile recorded ${buildId} but ${picked.mismatched.map((x) => `${x.path} has ${x.id}`).join(', ')}; ${rows.length} address(es) left unsymbolized`;
            rep.hint = `provide the binary that ran (build id ${buildId}) with --binary, or put it (or its debug file) in a --search-path directory as DIR/${buildId}/${basenameOf(filename) || 'FILE'} or DIR/${buildId.slice(0, 2)}/${buildId.slice(2)}.debug`;
          } else if (picked.broken.length > 0) {
            rep.status = 'bad-binary';
            rep.binary = picked.broken[0]!.path;
            rep.message = `cannot read the binary: ${picked.broken.map((x) => x.why).join('; ')}; ${rows.length} address(es) left unsymbolized`;
            rep.hint = 'point --binary or --search-path at the ELF file that ran';
          } else {
            rep.status = 'missing-binary';
            rep.message = `${filename ? `binary ${filename}` : `no binary with build id ${buildId}`} not found${searchPath.length ? ` (searched ${searchPath.join(', ')})` : ''}; ${rows.length} address(es) left unsymbolized`;
            rep.hint = filename
              ? `give the binary with --binary (main binary) or set --search-path / PPROF_BINARY_PATH to a directory holding ${basenameOf(filename)}${buildId ? ` or DIR/${buildId.slice(0, 2)}/${buildId.slice(2)}.debug` : ''}`
              : `the mapping has no file name: put the binary (or its debug file) in a --search-path / PPROF_BINARY_PATH directory as DIR/.build-id/${buildId.slice(0, 2)}/${buildId.slice(2)}.debug, DIR/${buildId.slice(0, 2)}/${buildId.slice(2)}.debug or DIR/${buildId}/FILE`;
          }
          continue;
        }
        const elf = picked.elf;
        rep.binary = elf.file;
        rep.binaryBuildId = elf.buildId;
        const profiled = profiledNames[i];
        if (i === 0 && options.binary !== undefined && profiled && basenameOf(profiled) !== basenameOf(options.binary) && !(buildId && elf.buildId)) {
          warnings.push({
            code: 'PROFKIT_W_SYMBOLIZE_UNVERIFIED_BINARY',
            message: `mapping ${id}: --binary ${options.binary} has another name than the profiled ${profiled} and no build id can confirm it is the same program`,
            detail: { file: options.binary },
          });
        }
        if (buildId && !elf.buildId) warnings.push({ code: 'PROFKIT_W_SYMBOLIZE_NO_BUILD_ID', message: `mapping ${id}: ${elf.file} has no build id, so it cannot be checked against ${buildId}`, detail: { file: elf.file } });
        let base: bigint;
        try {
          base = getBase(elf, { start: mm.memory_start[i]!, limit: mm.memory_limit[i]!, offset: mm.file_offset[i]! });
        } catch (e) {
          rep.status = 'bad-binary';
          rep.message = `${(e as Error).message}; ${rows.length} address(es) left unsymbolized`;
          rep.hint = `the mapping's range and offset do not match the ${elfTypeName(elf.type)} file's segments: is it the right binary?`;
          continue;
        }
        rep.base = base;
        const addrs = rows.map((r) => (p.locations['.address'][r]! - base) & 0xffffffffffffffffn);
        let frames: Frame[][];
        try {
          let s = await pool.get(elf.file, mode, tool);
          try {
            frames = await s.lookup(addrs);
          } catch (e) {
            const fb = tool === 'auto' && s.tool === 'llvm-symbolizer' ? await pool.fallback(elf.file) : undefined;
            if (!fb) throw e;
            warnings.push({ code: 'PROFKIT_W_SYMBOLIZE_FALLBACK', message: `llvm-symbolizer failed on ${elf.file} (${(e as Error).message}); used addr2line instead` });
            s = fb;
            frames = await s.lookup(addrs);
          }
          rep.tool = s.tool;
        } catch (e) {
          if (isProfkitError(e) && e.code === ErrorCodes.TIMEOUT && options.signal?.aborted) throw e;
          rep.status = 'tool-failed';
          rep.message = `symbolizing with ${mode === 'names' ? 'nm' : tool} failed: ${(e as Error).message}`;
          rep.hint = mode === 'names' ? 'install binutils (nm)' : 'install binutils (addr2line) or llvm (llvm-symbolizer), or try --tool addr2line';
          continue;
        }
        const f = { fn: false, file: false, line: false, inline: false };
        rows.forEach((r, k) => {
          const fr = frames[k]!;
          if (fr.length === 0) return;
          pending.frames.set(r, fr);
          rep.symbolized++;
          for (const x of fr) {
            if (x.func) f.fn = true;
            if (x.file) f.file = true;
            if (x.line) f.line = true;
          }
        });
        f.inline = mode === 'full' && rep.symbolized > 0;
        flagUpdates.set(i, f);
        const verified = buildId && elf.buildId ? `build id ${elf.buildId} verified` : buildId ? 'the binary has no build id to verify' : 'no build id recorded, binary not verified';
        rep.message = `${rep.symbolized} of ${rows.length} address(es) symbolized with ${rep.tool} from ${elf.file} (${elfTypeName(elf.type)}, base ${hex(base)}, ${verified})`;
        if (rep.symbolized < rows.length) rep.hint = 'addresses without symbols are outside the functions the binary describes (or it has no symbols/debug info)';
      }
    }
  } finally {
    await pool.closeAll();
  }

  // Remote: names for what is still unsymbolized.
  if (options.remote !== undefined) {
    const endpoint = symbolzURL(options.remote);
    const mm = p['.mappings'];
    const rowOfMapping = new Map<number, number>();
    for (let i = 0; i < mm.mapping_id.length; i++) rowOfMapping.set(mm.mapping_id[i]!, i);
    const byMapping = new Map<number, number[]>();
    const l = p.locations;
    for (let r = 0; r < l.location_id.length; r++) {
      if (l['.address'][r] === 0n || pending.frames.has(r)) continue;
      const hasLines = l.function_id[r] !== 0 || l['.inline_offsets'][r + 1]! > l['.inline_offsets'][r]!;
      if (hasLines && !force) continue;
      const mid = l['.mapping_id'][r]!;
      const mi = rowOfMapping.get(mid);
      if (mi !== undefined && mm.has_functions[mi] && !force) continue;
      let list = byMapping.get(mid);
      if (!list) byMapping.set(mid, (list = []));
      list.push(r);
    }
    for (const [mid, rows] of byMapping) {
      const mi = rowOfMapping.get(mid);
      const rep: MappingReport = { mappingId: mid, filename: mi !== undefined ? mm.filename[mi]! : '', buildId: mi !== undefined ? mm.build_id[mi]! : '', status: 'remote', tool: 'remote', addresses: rows.length, symbolized: 0, message: '' };
      reports.push(rep);
      try {
        const names = await symbolizeRemoteAddresses(endpoint, rows.map((r) => l['.address'][r]!), { timeoutMs, signal: options.signal, ...(options.remoteOptions ?? {}) });
        for (const r of rows) {
          const n = names.get(l['.address'][r]!);
          if (n === undefined) continue;
          pending.frames.set(r, [{ func: n, file: '', line: 0, column: 0, startLine: 0 }]);
          rep.symbolized++;
        }
        if (mi !== undefined && rep.symbolized > 0) {
          const f = flagUpdates.get(mi) ?? { fn: false, file: false, line: false, inline: false };
          f.fn = true;
          flagUpdates.set(mi, f);
        }
        rep.message = `${rep.symbolized} of ${rows.length} address(es) named by ${endpoint}`;
      } catch (e) {
        rep.status = 'remote-failed';
        rep.message = `remote symbolization with ${endpoint} failed: ${isProfkitError(e) ? e.message : String(e)}`;
        rep.hint = 'check the URL (the server must answer POST /pprof/symbol)';
      }
    }
  }

  // Demangle the new names, then write lines and flags into the profile.
  const systemNames = new Set<string>();
  for (const fr of pending.frames.values()) for (const x of fr) if (x.func) systemNames.add(x.func);
  let demangled = new Map<string, string>();
  if (demangleMode !== 'none' && systemNames.size > 0) {
    const cxxfilt = findTool(options.tools?.cxxfilt ? [options.tools.cxxfilt] : ['c++filt', 'llvm-cxxfilt']);
    const anyMangled = [...systemNames].some((n) => /^_{1,2}Z/.test(n));
    if (anyMangled && !cxxfilt) warnings.push({ code: 'PROFKIT_W_SYMBOLIZE_NO_DEMANGLER', message: 'c++filt was not found on $PATH: C++ names are left mangled (install binutils)' });
    else if (anyMangled && cxxfilt) {
      try {
        demangled = await demangleAll(cxxfilt, systemNames, { timeoutMs, signal: options.signal });
      } catch (e) {
        warnings.push({ code: 'PROFKIT_W_SYMBOLIZE_DEMANGLE_FAILED', message: `demangling with ${cxxfilt} failed: ${(e as Error).message}; C++ names are left mangled` });
      }
    }
  }
  return { profile: applyFrames(p, pending, flagUpdates, (sys) => displayName(sys, demangled.get(sys), demangleMode)), reports, warnings };
}

function basenameOf(f: string): string {
  const i = f.lastIndexOf('/');
  return i >= 0 ? f.slice(i + 1) : f;
}

/** A shallow copy whose mutable parts (mapping flags) are fresh arrays. */
function cloneForSymbolization(p: Profile): Profile {
  const m = p['.mappings'];
  return {
    ...p,
    '.mappings': {
      ...m,
      has_functions: m.has_functions.slice(),
      has_filenames: m.has_filenames.slice(),
      has_line_numbers: m.has_line_numbers.slice(),
      has_inline_frames: m.has_inline_frames.slice(),
    },
  };
}

function withFakeMapping(p: Profile, binary: string): Profile {
  const n = p.locations.location_id.length;
  const mapping = new Uint32Array(n);
  for (let r = 0; r < n; r++) if (p.locations['.address'][r] !== 0n) mapping[r] = 1;
  return {
    ...p,
    locations: { ...p.locations, '.mapping_id': mapping },
    '.mappings': {
      mapping_id: Uint32Array.of(1),
      memory_start: BigUint64Array.of(0n),
      memory_limit: BigUint64Array.of(0n),
      file_offset: BigUint64Array.of(0n),
      filename: [binary],
      build_id: [''],
      has_functions: Uint8Array.of(0),
      has_filenames: Uint8Array.of(0),
      has_line_numbers: Uint8Array.of(0),
      has_inline_frames: Uint8Array.of(0),
    },
  };
}

/** Writes the frames into new locations/functions/.inline_lines columns and sets mapping flags. */
function applyFrames(
  p: Profile,
  pending: PendingLines,
  flags: Map<number, { fn: boolean; file: boolean; line: boolean; inline: boolean }>,
  nameOf: (system: string) => string,
): Profile {
  const mm = p['.mappings'];
  for (const [i, f] of flags) {
    if (f.fn) mm.has_functions[i] = 1;
    if (f.file) mm.has_filenames[i] = 1;
    if (f.line) mm.has_line_numbers[i] = 1;
    if (f.inline) mm.has_inline_frames[i] = 1;
  }
  if (pending.frames.size === 0) return p;

  // Functions: keep the existing ones, add new ones deduplicated by (name, system, file, start).
  const fns = p.functions;
  const fnName = fns.name.slice();
  const fnSys = fns.system_name.slice();
  const fnFile = fns.filename.slice();
  const fnStart: number[] = Array.from(fns.start_line);
  const fnIds: number[] = Array.from(fns.function_id);
  let nextId = 1;
  for (const id of fnIds) if (id >= nextId) nextId = id + 1;
  const key = (n: string, s: string, f: string, st: number) => `${n}\u0000${s}\u0000${f}\u0000${st}`;
  const byKey = new Map<string, number>();
  for (let i = 0; i < fnIds.length; i++) byKey.set(key(fnName[i]!, fnSys[i]!, fnFile[i]!, fnStart[i]!), fnIds[i]!);
  const intern = (fr: Frame): number => {
    const sys = fr.func || '??';
    const name = fr.func ? nameOf(fr.func) || sys : sys;
    const k = key(name, sys, fr.file, fr.startLine);
    let id = byKey.get(k);
    if (id === undefined) {
      if (nextId > 0xffffffff) throw new ProfkitError(ErrorCodes.LIMIT, 'more than 2^32-1 functions');
      id = nextId++;
      byKey.set(k, id);
      fnIds.push(id);
      fnName.push(name);
      fnSys.push(sys);
      fnFile.push(fr.file);
      fnStart.push(fr.startLine);
    }
    return id;
  };

  const l = p.locations;
  const n = l.location_id.length;
  const fid = l.function_id.slice();
  const line = l.line.slice();
  const col = l['.column'].slice();
  const inl = p['.inline_lines'];
  const inlF: number[] = [];
  const inlL: number[] = [];
  const inlC: number[] = [];
  const offsets = new Uint32Array(n + 1);
  for (let r = 0; r < n; r++) {
    const fr = pending.frames.get(r);
    if (fr) {
      fid[r] = intern(fr[0]!);
      line[r] = fr[0]!.line;
      col[r] = fr[0]!.column;
      for (let k = 1; k < fr.length; k++) {
        inlF.push(intern(fr[k]!));
        inlL.push(fr[k]!.line);
        inlC.push(fr[k]!.column);
      }
    } else {
      for (let j = l['.inline_offsets'][r]!; j < l['.inline_offsets'][r + 1]!; j++) {
        inlF.push(inl.function_id[j]!);
        inlL.push(inl.line[j]!);
        inlC.push(inl.column[j]!);
      }
    }
    offsets[r + 1] = inlF.length;
  }
  return {
    ...p,
    locations: { ...l, function_id: fid, line, '.column': col, '.inline_offsets': offsets },
    functions: { function_id: Uint32Array.from(fnIds), name: fnName, system_name: fnSys, filename: fnFile, start_line: Float64Array.from(fnStart) },
    '.inline_lines': { function_id: Uint32Array.from(inlF), line: Float64Array.from(inlL), column: Float64Array.from(inlC) },
  };
}
