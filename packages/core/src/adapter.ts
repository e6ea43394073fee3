/**
 * The adapter contract, version 1. An adapter is a plain object made by `defineAdapter`; the
 * registry (`registry.ts`) detects formats with `sniff` and calls `read`/`write`.
 *
 * `ADAPTER_API_VERSION` is versioned separately from the npm version of @profkit/core: it
 * changes only when this contract breaks. New optional fields do not change it.
 */

import type { Limits } from './io.js';
import type { Warning } from './errors.js';
import type { Profile } from './model.js';
import type { AdapterTransform, TransformResult, TransformValues } from './transform.js';
import type { PlatformAbortSignal } from './web-types.js';

export const ADAPTER_API_VERSION = 1;
/** Contract versions this core can load. */
export const SUPPORTED_ADAPTER_API_VERSIONS: readonly number[] = [1];

/** A file format an adapter handles. */
export interface FormatInfo {
  /** Unique across adapters, e.g. `pprof`, `rprof`, `folded`. Used by `--from`/`--to`. */
  id: string;
  /** Human title, e.g. "pprof profile.proto". */
  title?: string;
  /** File name endings, with the dot, most specific first: `['.pb.gz', '.pprof']`. */
  extensions: string[];
  /** Binary (true) or text (false) format. */
  binary: boolean;
  /** Whether the adapter can read / write this format (defaults: read true, write = adapter has `write`). */
  read?: boolean;
  write?: boolean;
  mediaTypes?: string[];
}

export interface SniffHints {
  fileName?: string;
  /** Size of the whole input in bytes, when known. */
  size?: number;
  /** `gzip` when the head was gunzipped before sniffing. */
  encoding?: 'gzip' | null;
}

/** Result of `sniff`: a score in [0, 1], optionally naming which of the adapter's formats. */
export type SniffResult = number | { score: number; format?: string; reason?: string };

/**
 * The input handed to `read`: the bytes are produced lazily so an adapter can choose between the
 * whole (decompressed) buffer and a stream of (decompressed) chunks.
 */
export interface ReadInput {
  /** File name or `-`; for messages. */
  fileName: string;
  /** True when the source was gzip-compressed (already inflated by the methods below). */
  gzipped: boolean;
  /**
   * The source's size as stored (compressed when `gzipped`), when known before reading (a regular
   * file, bytes, a Blob; not a stream). A hint for choosing how to read (inflated data is rarely
   * smaller than its gzip), never a limit.
   */
  storedBytes?: number;
  /** The whole decompressed input, bounded by `limits.maxDecompressedBytes`. */
  bytes(): Promise<Uint8Array>;
  /** The decompressed input as a stream of chunks (memory independent of the file size). */
  chunks(): AsyncIterable<Uint8Array>;
}

export interface ReadOptions {
  /** Which of the adapter's formats, when the caller or the sniffer knows. */
  format?: string;
  limits?: Limits & Record<string, number | undefined>;
  /** Format-specific options (documented per adapter). */
  options?: Record<string, unknown>;
  /** Called with progress (bytes consumed so far, total when known). */
  onProgress?: (done: number, total?: number) => void;
  signal?: PlatformAbortSignal;
  /** The write that will follow this read, when the caller knows it (see `PlannedWrite`). */
  plannedWrite?: PlannedWrite;
  /**
   * The caller only sums values over samples (a report such as top or a flame graph): a codec
   * may read samples with equal stacks and labels as one sample with their summed values (the
   * pprof codec then aggregates, unless its `aggregate` read option says otherwise). Only a
   * hint: what the caller prints must come out the same with or without it.
   */
  samplesSummed?: boolean;
}

/**
 * The write a caller will do with the profile it reads (`profkit convert` knows its output before
 * reading). Only a hint: a codec may start preparing that write while it reads (the pprof codec
 * deflates the bytes it read, for a pprof output that encodes to the same bytes), and the write
 * must come out the same with or without it.
 */
export interface PlannedWrite {
  /** The adapter and format that will write (as `registry.writerFor` picks them). */
  adapter: string;
  format: string;
  /** The output's file name, and the writer's options. */
  fileName?: string;
  options?: Record<string, unknown>;
}

export interface ReadResult {
  profile: Profile;
  warnings: Warning[];
  /** The format actually read. */
  format?: string;
}

export interface WriteOptions {
  /** Which of the adapter's formats to write. */
  format?: string;
  /** Target file name, a hint for e.g. compression by extension. */
  fileName?: string;
  /**
   * True when the caller writes `data` out as it comes (the registry writing a file or stdout):
   * a writer may then return an `AsyncIterable` so that its whole output is never in memory.
   * Otherwise (e.g. `registry.serialize`) callers expect, but must not rely on, one `Uint8Array`.
   */
  streaming?: boolean;
  options?: Record<string, unknown>;
  onProgress?: (done: number, total?: number) => void;
  signal?: PlatformAbortSignal;
}

export interface WriteResult {
  data: Uint8Array | AsyncIterable<Uint8Array>;
  /** Information the format cannot represent, said instead of silently dropped. */
  warnings: Warning[];
}

export interface AdapterCodec {
  read(input: ReadInput, options: ReadOptions): Promise<ReadResult>;
  write?(profile: Profile, options: WriteOptions): Promise<WriteResult>;
}

export interface AdapterDefinition {
  /** The contract version this adapter targets. */
  apiVersion: number;
  /** Unique name, e.g. `pprof`. */
  name: string;
  /** npm package and version, for messages and `profkit formats`. */
  packageName?: string;
  version?: string;
  description?: string;
  formats: FormatInfo[];
  /** Cheap, synchronous, never throws (an exception counts as 0). */
  sniff(head: Uint8Array, hints: SniffHints): SniffResult;
  /** Read; absent when `load` supplies it lazily. */
  read?: AdapterCodec['read'];
  write?: AdapterCodec['write'];
  /** Loads the heavy codec on first use (keeps CLI start-up fast). */
  load?(): Promise<AdapterCodec>;
  /** Tie-breaker in detection; higher wins. Default 0. */
  priority?: number;
  /**
   * Extra CLI commands the adapter contributes (e.g. `fetch`, `serve`,
   * `fuchsia-sampler serve`). The CLI lists and dispatches them without knowing the format.
   */
  commands?: AdapterCommand[];
  /**
   * Profile → profile steps the adapter contributes (e.g. `symbolize`), applied by name between
   * read and write (`profkit convert --symbolize`). See `transform.ts`.
   */
  transforms?: AdapterTransform[];
}

/** A command-line option of an adapter command (the shape of node:util `parseArgs`). */
export interface CommandOption {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  description: string;
  /** Placeholder shown in help, e.g. `N` for `--seconds N`. */
  valueName?: string;
}

/**
 * Where a command writes (the `write` of Node's `process.stdout`/`stderr`, by shape, so the
 * contract needs no Node types). The callback, when given, is called once the chunk is out.
 */
export interface OutputStream {
  write(chunk: string | Uint8Array, callback?: (err?: Error | null) => void): unknown;
}

/** What the CLI hands an adapter command: parsed arguments and format-neutral services. */
export interface CommandContext {
  positionals: string[];
  values: Record<string, string | boolean | string[] | undefined>;
  /** Reads any profile through the registry (detecting the format unless given). */
  readProfile(path: string, options?: { format?: string }): Promise<ReadResult>;
  /** Reads a profile from bytes already in memory (e.g. fetched over HTTP). */
  readProfileBytes(bytes: Uint8Array, options?: { format?: string; fileName?: string }): Promise<ReadResult>;
  /**
   * Writes a profile by `format` or by the path's extension, atomically; returns warnings.
   * `signal` aborts the write (leaving the old file); default: the command's `signal`. A server
   * that writes its last profiles *because* of SIGTERM passes one of its own.
   */
  writeProfile(profile: Profile, path: string, options?: { format?: string; inputs?: string[]; signal?: PlatformAbortSignal }): Promise<Warning[]>;
  stdout: OutputStream;
  stderr: OutputStream;
  json: boolean;
  quiet: boolean;
  verbose: boolean;
  /** A progress indicator on stderr when it is a TTY (a no-op otherwise or with --quiet/--json). */
  progress(label: string, total?: number): { update(done: number, total?: number): void; done(): void };
  /** Aborted on SIGINT/SIGTERM. */
  signal: PlatformAbortSignal;
  /**
   * Applies a transform contributed by any installed adapter (e.g. `symbolize`), by name; throws
   * `PROFKIT_E_NO_ADAPTER` (with the install command) when none provides it. Absent in CLIs
   * older than transforms.
   */
  transform?(name: string, profile: Profile, values?: TransformValues): Promise<TransformResult>;
}

export interface AdapterCommand {
  /** Words after `profkit`, e.g. `fetch` or `fuchsia-sampler serve`. */
  name: string;
  summary: string;
  /** Usage line(s) and examples for `profkit help <name>`. */
  usage: string;
  options?: Record<string, CommandOption>;
  /**
   * Returns the process exit code (0 ok, 1 invalid profile, 2 usage, 3 I/O, 4 unknown or
   * unsupported format, 5 network). A thrown `ProfkitError` is printed and mapped to its exit
   * code by the CLI, so commands throw rather than print errors.
   */
  run(ctx: CommandContext): Promise<number>;
}

export type Adapter = Readonly<AdapterDefinition>;

/**
 * Declares an adapter. Fills `apiVersion` when omitted (to the version this core implements)
 * and freezes the object; the registry validates the shape when the adapter is registered.
 */
export function defineAdapter(def: Omit<AdapterDefinition, 'apiVersion'> & { apiVersion?: number }): Adapter {
  return Object.freeze({ ...def, apiVersion: def.apiVersion ?? ADAPTER_API_VERSION, formats: def.formats.map((f) => Object.freeze({ ...f })) });
}

/**
 * The first-party adapters, so that a missing one can be named with its install command even
 * when it is not installed.
 */
export const FIRST_PARTY_FORMATS: readonly { format: string; packageName: string; extensions: string[] }[] = [
  { format: 'pprof', packageName: '@profkit/pprof', extensions: ['.pb.gz', '.pprof', '.pb', '.prof'] },
  { format: 'rprof', packageName: '@profkit/rprof', extensions: ['.out', '.rprof'] },
  { format: 'folded', packageName: '@profkit/rprof', extensions: ['.folded', '.collapsed'] },
  { format: 'gperftools-heap', packageName: '@profkit/gperftools-heap', extensions: ['.heap', '.growth'] },
  { format: 'gperftools-cpu', packageName: '@profkit/gperftools-heap', extensions: ['.cpu', '.prof'] },
  { format: 'gperftools-contention', packageName: '@profkit/gperftools-heap', extensions: ['.contention'] },
  { format: 'gperftools-thread', packageName: '@profkit/gperftools-heap', extensions: ['.thread'] },
  { format: 'fuchsia-sampler', packageName: '@profkit/fuchsia-sampler', extensions: ['.fsrec', '.fsrec.jsonl'] },
  { format: 'sqlite', packageName: '@profkit/dm-export', extensions: ['.sqlite', '.db'] },
  { format: 'v8-cpuprofile', packageName: '@profkit/v8', extensions: ['.cpuprofile'] },
  { format: 'v8-heapprofile', packageName: '@profkit/v8', extensions: ['.heapprofile'] },
  { format: 'perf-script', packageName: '@profkit/perf', extensions: ['.perf', '.perf-script', '.perf.txt'] },
  { format: 'speedscope', packageName: '@profkit/speedscope', extensions: ['.speedscope.json'] },
];
