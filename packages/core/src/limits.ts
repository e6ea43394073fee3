/**
 * Resource limits of readers, as options with safe defaults. `DEFAULT_LIMITS` (io.ts) bounds the
 * bytes read and inflated; `READ_LIMITS` adds the limits that readers enforce while parsing.
 * Every limit is raised by passing the option of the same name in `ReadOptions.limits` (the
 * registry passes `RegistryReadOptions.limits` through unchanged); exceeding one is a
 * `PROFKIT_E_LIMIT` error whose `detail.option` and message name that option.
 */

import { ErrorCodes, ProfkitError, type ErrorDetail } from './errors.js';
import { DEFAULT_LIMITS, type Limits } from './io.js';

export const READ_LIMITS: Readonly<Required<ReadLimits>> = {
  ...DEFAULT_LIMITS,
  /** Frames (locations) in one stack or sample (`maxFramesPerStack`). */
  maxFramesPerStack: 1_000_000,
  /** Bytes of one string: a function or file name, a text line, a string-table entry (`maxStringLength`). */
  maxStringLength: 64 * 1024 * 1024,
  /** Samples (stack records) in one profile (`maxSamples`). */
  maxSamples: 5_000_000,
  /**
   * Frames of all samples' stacks together, the length of the profile's location column
   * (`maxTotalFrames`): 4 bytes each in the profile, however the input repeats or compresses them.
   */
  maxTotalFrames: 32_000_000,
  /**
   * UTF-16 code units of one line of text, Rprof and folded (`maxLineLength`): 16 Mi is far above
   * any line R writes (1M frames of `"FUN" ` are 6 Mi) and costs about 100 MB while decoded.
   */
  maxLineLength: 16 * 1024 * 1024,
  /**
   * Header and `#File` lines of one Rprof file (`maxRunLines`): each is an object in the
   * profile's facts (about 200 bytes), and a repeated one compresses to nothing.
   */
  maxRunLines: 100_000,
  /**
   * Entries of a pprof profile's tables together: string-table entries, mappings, locations,
   * their lines, functions, the labels of all samples, comments (`maxTableEntries`). Each costs
   * columns (up to ~50 bytes) even when it is 2 bytes of input; real profiles have well under 1M.
   */
  maxTableEntries: 10_000_000,
  /** Sample types (value columns) of one profile (`maxSampleTypes`). */
  maxSampleTypes: 10_000,
  /**
   * Values of all samples together, samples × sample types (`maxSampleValues`): every sample
   * stores one 8-byte value per type, so 2,000 speedscope profiles or perf events over 20,000
   * samples of a 323 KB file would be 40M values (320 MiB, ~800 MB RSS while built). 32M values
   * are 256 MiB of int64 columns; real profiles have a few types (5M samples × 6 types fits).
   */
  maxSampleValues: 32_000_000,
  /** Labels of one sample (`maxLabelsPerSample`). */
  maxLabelsPerSample: 1_000_000,
  /**
   * Bytes of one top-level field of a pprof profile other than a string-table entry: a sample,
   * location, function, mapping, packed comment list or unknown field (`maxMessageBytes`). The
   * streamed decoder holds one field whole, so this bounds its window (a sample of 1M frames is
   * about 5 MB).
   */
  maxMessageBytes: 64 * 1024 * 1024,
  /**
   * UTF-8 bytes of one text report (`maxReportBytes`): traces, raw, folded, callgrind, tree, top…,
   * counted as the text is made. Not a read limit (it is here so that `--limit` and `limitValue`
   * know it): a report can print a string or a run of inline frames once per sample, so a 40 KB
   * profile can ask for gigabytes of text. 512 MiB is about the longest string JavaScript makes
   * (2^29 - 24 UTF-16 units), which a report returned as one string cannot pass anyway; a
   * streamed report (the CLI's) can be raised past it.
   */
  maxReportBytes: 512 * 1024 * 1024,
  /**
   * Frames one flame graph draws (`maxFlameFrames`): `renderFlameGraph`, `cutFlameTree`. Not a
   * read limit (here for `--limit` and `limitValue`, as `maxReportBytes`): a stack entry draws one
   * frame per inline line of its location, so a 1.9 KB profile (1,000 entries of one 2,000-line
   * location) asks for 2M frames, a 27 MB page and 208 MB RSS, and 20 KB for 4×10^8. Real
   * profiles draw far fewer: the shared fixtures at most 425k with no min width, the 600k inline
   * lines of the CLI's memory test; 4M frames are a 58 MB page, 465 MB RSS.
   */
  maxFlameFrames: 4_000_000,
  /**
   * Levels of one flame graph, the root's included (`maxFlameDepth`): `renderFlameGraph`,
   * `cutFlameTree`, `boundedFlameTree`. Not a read limit (as `maxFlameFrames`). A chain of frames
   * as wide as the root is drawn whatever the min width (flamegraph.pl cuts by width only, pprof's
   * web flame graph not at all; neither caps the depth): 1,000 entries of one 2,000-line location (a 7.5 KB pprof) drew 2M levels, a
   * 437 MB SVG 32M pixels tall (26 s, 227 MB RSS). Recorders keep far fewer (perf 127 frames, Go
   * 128, V8 255, async-profiler 2,048; inline frames a few per entry), a folded file or a runaway
   * recursion more (the CLI's tests draw 20,000); 65,536 levels are a 1M-pixel-tall image, at most
   * a 14 MB SVG for a chain, and each level past it would cost a stack entry or inline line.
   */
  maxFlameDepth: 65_536,
  /**
   * Steps of one flame graph's walk (`maxFlameWalkSteps`; a step is one sample's stack, or one
   * stack row, moved a frame down): the frames drawn by `renderFlameGraph`/`cutFlameTree`, every
   * frame of `boundedFlameTree`/`flameTree` (whose counts are exact). Not a read limit (as
   * `maxFlameFrames`). The value here is the floor of the default, which grows with the profile:
   * unless the option is given, the walk may take this plus 16 steps per stack entry, inline line,
   * location and sample (`flameWalkBudget`). Stacks through inline frames of the same functions
   * cut into locations at other boundaries are walked a frame at a time, members × frames: 1,000
   * samples through 60 such entries took 60M steps (2 s) for 91k entries, bounded only by
   * `maxFlameDepth`. Real profiles take under 2 steps per entry.
   */
  maxFlameWalkSteps: 4_000_000,
};

export type LimitName = keyof typeof READ_LIMITS;

/** All limits a reader honours; unknown adapter-specific limits ride along as numbers. */
export interface ReadLimits extends Limits {
  maxFramesPerStack?: number;
  maxStringLength?: number;
  maxSamples?: number;
  maxTotalFrames?: number;
  maxLineLength?: number;
  maxRunLines?: number;
  maxTableEntries?: number;
  maxSampleTypes?: number;
  maxSampleValues?: number;
  maxLabelsPerSample?: number;
  maxMessageBytes?: number;
  maxReportBytes?: number;
  maxFlameFrames?: number;
  maxFlameDepth?: number;
  maxFlameWalkSteps?: number;
}

type AnyLimits = ReadLimits | undefined;

/** The effective value of a limit: the option when given (a positive number), else the default. */
export function limitValue(limits: AnyLimits, name: LimitName): number {
  const v = (limits as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'number' && v > 0 ? v : READ_LIMITS[name];
}

/** The `PROFKIT_E_LIMIT` error for `name`, saying how to raise it. */
export function limitError(name: string, what: string, max: number, detail: ErrorDetail = {}): ProfkitError {
  return new ProfkitError(ErrorCodes.LIMIT, `${what} exceeds the limit of ${max} (raise it with the option limits.${name})`, {
    rule: `${name} limit`,
    ...detail,
    option: name,
    limit: max,
  });
}

/** Throws the `PROFKIT_E_LIMIT` error of `name` when `value` is above the effective limit. */
export function checkLimit(limits: AnyLimits, name: LimitName, value: number, what: string, detail: ErrorDetail = {}): void {
  const max = limitValue(limits, name);
  if (value > max) throw limitError(name, `${what} (${value})`, max, detail);
}

const SIZE_SUFFIX: Record<string, number> = { '': 1, k: 1e3, m: 1e6, g: 1e9, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3 };

/**
 * Command-line `--limit NAME=N` values (N may be `1e9`, `512MiB`, `4GiB`, `2M`) as read limits:
 * the CLI's global option, and adapter commands that read inputs themselves. A malformed pair,
 * an unknown name or a value that is not a positive whole number is a `PROFKIT_E_USAGE` error.
 */
export function parseLimitArgs(raw: unknown): ReadLimits & Record<string, number> {
  const out: Record<string, number> = {};
  const list = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  const usage = (message: string) => new ProfkitError(ErrorCodes.USAGE, message, { option: 'limit', rule: 'command-line usage' });
  for (const item of list) {
    const m = /^([A-Za-z]+)=([0-9]+(?:\.[0-9]+)?(?:e[0-9]+)?)\s*([a-zA-Z]*)$/.exec(String(item));
    const suffix = m?.[3]?.toLowerCase() ?? '';
    // Own keys only: `in` would also accept Object.prototype's (`constructor`, `toString`).
    if (!m || !Object.hasOwn(SIZE_SUFFIX, suffix)) throw usage(`--limit takes NAME=N (e.g. maxSamples=1e9, maxDecompressedBytes=8GiB), got "${String(item)}"`);
    const name = m[1]!;
    if (!Object.hasOwn(READ_LIMITS, name)) throw usage(`--limit ${name}: unknown limit (limits: ${Object.keys(READ_LIMITS).join(', ')})`);
    const value = Math.floor(Number(m[2]) * SIZE_SUFFIX[suffix]!);
    if (!Number.isSafeInteger(value) || value < 1) throw usage(`--limit ${name}=${m[2]}${m[3]}: expected a positive whole number`);
    out[name] = value;
  }
  return out;
}
