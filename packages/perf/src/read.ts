/**
 * Reading `perf script` text into a profile, streaming: memory grows with the samples kept (their
 * stacks and values) and the distinct frames, never with the size of the text.
 *
 * - One sample per event line; its stack is the call chain under it (innermost first, as perf
 *   prints it). The value is the period when perf printed one, else 1.
 * - One sample type per event (`cycles`, `cpu-clock:u`, ...), in order of first appearance; a
 *   sample has its value in its event's column and 0 in the others. The first event is the
 *   default sample type (what stackcollapse-perf.pl shows).
 * - Frames: a location per distinct frame (address, symbol, DSO); DSOs are mappings (by path,
 *   `[kernel.kallsyms]` included), `[unknown]` symbols are locations with an address and no
 *   function, frames perf marks `(inlined)` become inline lines of the location they are inlined
 *   into, and `-F +srcline` lines give the file and line.
 * - comm, pid and tid are sample labels; the time (ns, perf's clock) and the cpu are per-sample
 *   columns in `.extensions.perf.samples` (`time_ns`, `cpu`); `#` header lines are comments.
 */

import {
  ErrorCodes,
  GrowableBigInt64,
  GrowableFloat64,
  GrowableUint32,
  LineSplitter,
  ProfileBuilder,
  ProfkitError,
  StringKeyedMap,
  limitError,
  limitValue,
  type LabelInput,
  type LineInput,
  type Profile,
  type ReadLimits,
  type Warning,
} from '@profkit/core';
import { ADAPTER_NAME, FORMAT_ID } from './format.js';
import { parseEventLine, parseFrame, parseSrcLine, type EventLine, type FrameLine, type SrcLine } from './grammar.js';

export interface PerfReadOptions {
  fileName?: string;
  limits?: ReadLimits;
  /** Called after each chunk with the bytes consumed so far. */
  onProgress?: (done: number) => void;
  signal?: { aborted: boolean; reason?: unknown };
}

export interface PerfReadResult {
  profile: Profile;
  warnings: Warning[];
  format: string;
}

/** Header (`#`) lines kept as profile comments; more are counted in a warning. */
export const MAX_HEADER_COMMENTS = 1000;

const MAX_INT64 = (1n << 63n) - 1n;

/** Events whose period perf counts in nanoseconds (software clocks); others count events. */
const NANOSECOND_EVENTS = /^(cpu-clock|task-clock)(:[a-zA-Z]+)?$/;

interface PendingFrame {
  frame: FrameLine;
  src?: SrcLine;
  /** The frame's lines as printed (its cache key part). */
  text: string;
}

interface EventType {
  index: number;
  hasPeriod: boolean;
}

/** The parser: feed it lines (it is a `LineSink`), then call `finish()`. */
export class PerfScriptParser {
  private readonly builder = new ProfileBuilder({ sampleTypes: [{ type: 'value', unit: 'count' }] });
  private readonly warnings: Warning[] = [];
  private readonly file: string | undefined;
  private readonly maxSamples: number;
  private readonly maxFramesPerStack: number;
  private readonly maxTotalFrames: number;
  private readonly maxStringLength: number;
  /** Each event is a value column of every sample: N events of one sample each would cost N² values. */
  private readonly maxSampleTypes: number;
  private readonly maxSampleValues: number;
  /**
   * New locations and their inline lines (`maxTableEntries`): a sample's inlined frames make one
   * stack entry (what `maxTotalFrames` counts) but each new location keeps all of them, and a run
   * of identical inlined lines compresses to nothing.
   */
  private readonly maxTableEntries: number;
  private tableEntries = 0;
  private totalFrames = 0;

  private readonly events = new Map<string, EventType>();
  private readonly eventOfSample = new GrowableUint32(1024);
  private readonly timeNs = new GrowableBigInt64(1024);
  private readonly cpu = new GrowableFloat64(1024);
  private anyTime = false;
  private anyCpu = false;
  private periodMismatch = 0;
  private comments: string[] = [];
  private droppedComments = 0;

  /** Location id of a frame group's printed text (most frames repeat; parsing them once is the fast path). */
  // Frame texts can be longer than V8 hashes (see core's StringKeyedMap).
  private readonly locationOfText = new StringKeyedMap<number>();
  // DSO paths and comms come from the input too: as long as it likes.
  private readonly mappingOfDso = new StringKeyedMap<number>();
  /** Each distinct comm, as its own value (one string per comm, not per sample). */
  private readonly comms = new StringKeyedMap<string>();

  private current: { event: EventLine; line: number } | undefined;
  private frames: PendingFrame[] = [];
  private readonly stack: number[] = [];

  constructor(options: PerfReadOptions = {}) {
    this.file = options.fileName;
    this.maxSamples = limitValue(options.limits, 'maxSamples');
    this.maxFramesPerStack = limitValue(options.limits, 'maxFramesPerStack');
    this.maxTotalFrames = limitValue(options.limits, 'maxTotalFrames');
    this.maxStringLength = limitValue(options.limits, 'maxStringLength');
    this.maxSampleTypes = limitValue(options.limits, 'maxSampleTypes');
    this.maxSampleValues = limitValue(options.limits, 'maxSampleValues');
    this.maxTableEntries = limitValue(options.limits, 'maxTableEntries');
  }

  line(text: string, lineNo: number): void {
    if (text.length === 0) {
      this.endSample();
      return;
    }
    const c = text.charCodeAt(0);
    if (c === 32 || c === 9) {
      this.frameOrSource(text, lineNo);
      return;
    }
    if (c === 35 /* # */ && this.current === undefined) {
      if (this.comments.length < MAX_HEADER_COMMENTS) this.comments.push(text);
      else this.droppedComments++;
      return;
    }
    const event = parseEventLine(text);
    if (!event && this.current !== undefined && parseFrame(text)) {
      // perf 3.x printed the call chain without indentation.
      this.frameOrSource(text, lineNo);
      return;
    }
    if (!event) {
      throw new ProfkitError(ErrorCodes.PARSE, `line ${lineNo}: expected an event line "comm pid/tid [cpu] time: period event:" or an indented frame`, {
        file: this.file,
        line: lineNo,
        rule: 'perf script: event line := comm pid[/tid] [cpu] secs.usecs: [period] event:',
      });
    }
    this.endSample();
    if (event.oversized !== undefined || (event.timeNs ?? 0n) > MAX_INT64 || (event.period ?? 0n) > MAX_INT64) {
      throw new ProfkitError(ErrorCodes.RANGE, `line ${lineNo}: ${event.oversized ?? 'the time or period'} does not fit in int64`, { file: this.file, line: lineNo, rule: 'int64 values (time in ns, period)' });
    }
    if (text.length > this.maxStringLength) throw limitError('maxStringLength', `line ${lineNo}: an event line of ${text.length} characters`, this.maxStringLength, { file: this.file, line: lineNo });
    if (this.eventOfSample.length >= this.maxSamples) throw limitError('maxSamples', `sample ${this.eventOfSample.length + 1}`, this.maxSamples, { file: this.file, line: lineNo });
    this.current = { event, line: lineNo };
    // Without a call graph perf prints the sampled ip on the event line itself.
    if (event.trailer !== '') {
      const f = parseFrame(event.trailer);
      if (f && (f.dso !== '' || f.inlined)) this.frames.push({ frame: f, text: event.trailer });
    }
  }

  private frameOrSource(text: string, lineNo: number): void {
    if (this.current === undefined) {
      throw new ProfkitError(ErrorCodes.PARSE, `line ${lineNo}: a frame line before any event line`, { file: this.file, line: lineNo, rule: 'perf script: frames follow their event line' });
    }
    // A frame's symbol, DSO or file is at most its line: bounding the line bounds them.
    if (text.length > this.maxStringLength) throw limitError('maxStringLength', `line ${lineNo}: a frame line of ${text.length} characters`, this.maxStringLength, { file: this.file, line: lineNo });
    const frame = parseFrame(text);
    if (frame) {
      if (this.frames.length >= this.maxFramesPerStack) {
        throw limitError('maxFramesPerStack', `line ${lineNo}: the stack of the sample at line ${this.current.line}`, this.maxFramesPerStack, { file: this.file, line: lineNo });
      }
      this.frames.push({ frame, text });
      return;
    }
    const last = this.frames[this.frames.length - 1];
    if (last === undefined || last.src !== undefined || last.text.includes('\n')) {
      throw new ProfkitError(ErrorCodes.PARSE, `line ${lineNo}: expected a frame "address symbol (dso)"`, { file: this.file, line: lineNo, rule: 'perf script: frame := hex-address symbol[+0xoffset] (dso)' });
    }
    // A -F +srcline line belongs to the frame above it.
    last.text += '\n' + text;
    const src = parseSrcLine(text);
    if (src) last.src = src;
    // With srcline, perf marks an inlined frame on its source line (`file.c:2 (inlined)`), not as its DSO.
    if (text.trimEnd().endsWith(' (inlined)')) last.frame.inlined = true;
  }

  /** Ends the sample in progress (at a blank line, the next event line or the end of input). */
  private endSample(): void {
    const cur = this.current;
    if (cur === undefined) return;
    this.current = undefined;
    const stack = this.stack;
    stack.length = 0;
    const frames = this.frames;
    // Frames perf marked (inlined) are gathered until the frame they are inlined into.
    let run = 0;
    for (let i = 0; i < frames.length; i++) {
      if (frames[i]!.frame.inlined && i + 1 < frames.length) {
        run++;
        continue;
      }
      if (run > 0 && frames.slice(i - run, i + 1).some((f) => f.frame.symbol === '[unknown]')) {
        // A location's lines all need a function: an unnamed frame keeps its own location.
        for (let k = i - run; k <= i; k++) stack.push(this.location(frames, k, k, cur.line));
      } else {
        stack.push(this.location(frames, i - run, i, cur.line));
      }
      run = 0;
    }
    this.frames = [];
    this.totalFrames += stack.length;
    if (this.totalFrames > this.maxTotalFrames) {
      throw limitError('maxTotalFrames', `the frames of all samples (${this.totalFrames})`, this.maxTotalFrames, { file: this.file, line: cur.line });
    }
    const ev = cur.event;
    let type = this.events.get(ev.event);
    if (type === undefined) {
      if (this.events.size >= this.maxSampleTypes) {
        throw limitError('maxSampleTypes', `event ${JSON.stringify(ev.event)}: ${this.events.size + 1} distinct events (one sample type each)`, this.maxSampleTypes, { file: this.file, line: cur.line });
      }
      type = { index: this.events.size, hasPeriod: ev.period !== undefined };
      this.events.set(ev.event, type);
    } else if (type.hasPeriod !== (ev.period !== undefined)) this.periodMismatch++;
    // finish() gives every sample a value for every event (8 bytes each): bound samples × events
    // while they grow, as the last sample's check sees both final counts.
    const values = (this.eventOfSample.length + 1) * this.events.size;
    if (values > this.maxSampleValues) {
      throw limitError('maxSampleValues', `sample ${this.eventOfSample.length + 1} × ${this.events.size} events (one value each)`, this.maxSampleValues, { file: this.file, line: cur.line });
    }
    let comm = this.comms.get(ev.comm);
    if (comm === undefined) this.comms.set(ev.comm, (comm = ev.comm)); // one string per distinct comm, not per sample
    const labels: LabelInput[] = [{ key: 'comm', str: comm }];
    if (ev.pid !== undefined) labels.push({ key: 'pid', num: ev.pid });
    if (ev.tid !== undefined) labels.push({ key: 'tid', num: ev.tid });
    this.builder.addSample(stack, [ev.period ?? 1n], labels);
    this.eventOfSample.push(type.index);
    this.timeNs.push(ev.timeNs ?? 0n);
    this.cpu.push(ev.cpu ?? -1);
    if (ev.timeNs !== undefined) this.anyTime = true;
    if (ev.cpu !== undefined) this.anyCpu = true;
  }

  /** The location of frames[from..to] (inlined frames from..to-1, then the frame they are inlined into). */
  private location(frames: PendingFrame[], from: number, to: number, line: number): number {
    let key = frames[from]!.text;
    for (let i = from + 1; i <= to; i++) key += '\n' + frames[i]!.text;
    const known = this.locationOfText.get(key);
    if (known !== undefined) return known;
    this.tableEntries += 1 + to - from;
    if (this.tableEntries > this.maxTableEntries) {
      throw limitError('maxTableEntries', `the locations and inline lines of samples 1 to ${this.eventOfSample.length + 1} (${this.tableEntries})`, this.maxTableEntries, { file: this.file, line });
    }
    const outer = frames[to]!.frame;
    const fn = (p: PendingFrame) => (p.frame.symbol === '[unknown]' ? 0 : this.builder.internFunction({ name: p.frame.symbol, filename: p.src?.file ?? '' }));
    const inlinedInto: LineInput[] = [];
    for (let i = from + 1; i <= to; i++) inlinedInto.push({ functionId: fn(frames[i]!), line: frames[i]!.src?.line ?? 0 });
    const id = this.builder.internLocation({
      functionId: fn(frames[from]!),
      line: frames[from]!.src?.line ?? 0,
      address: outer.address,
      mappingId: this.mapping(outer.dso),
      ...(inlinedInto.length > 0 ? { inlinedInto } : {}),
    });
    this.locationOfText.set(key, id);
    return id;
  }

  private mapping(dso: string): number {
    if (dso === '' || dso === '[unknown]') return 0;
    let id = this.mappingOfDso.get(dso);
    if (id === undefined) {
      // perf symbolized the frames it could: the profile has the functions it will ever have.
      id = this.builder.internMapping({ filename: dso, hasFunctions: true });
      this.mappingOfDso.set(dso, id);
    }
    return id;
  }

  /** Ends the input and returns the profile. */
  finish(): PerfReadResult {
    this.endSample();
    const b = this.builder;
    b.facts.comments = this.comments;
    if (this.droppedComments > 0) {
      this.warnings.push({ code: 'PROFKIT_W_PERF_HEADER_DROPPED', message: `${this.droppedComments} header line(s) beyond the first ${MAX_HEADER_COMMENTS} not kept as comments`, detail: { file: this.file } });
    }
    if (this.periodMismatch > 0) {
      this.warnings.push({ code: 'PROFKIT_W_PERF_PERIOD_MIXED', message: `${this.periodMismatch} sample(s) print no period where others of their event do (or the reverse): counted as 1`, detail: { file: this.file } });
    }
    const built = mainMappingFirst(b.build(), this.comms.values().next().value);
    const n = this.eventOfSample.length;
    const eventOf = this.eventOfSample.finish();
    const single = built.samples.value;
    // The builder kept one value column; split it into one column per event.
    const events = [...this.events.entries()];
    const columns = events.map(() => new BigInt64Array(n));
    for (let i = 0; i < n; i++) columns[eventOf[i]!]![i] = single[i]!;
    const type = events.map(([name]) => name);
    const unit = events.map(([name, t]) => (!t.hasPeriod ? 'count' : NANOSECOND_EVENTS.test(name) ? 'nanoseconds' : 'events'));
    const ext: Record<string, Float64Array | BigInt64Array> = {};
    if (this.anyTime) ext.time_ns = this.timeNs.finish();
    if (this.anyCpu) ext.cpu = this.cpu.finish();
    const profile: Profile = {
      ...built,
      sample_types: { type, unit },
      samples: { ...built.samples, value: columns[0] ?? new BigInt64Array(0), '.values': columns },
      '.extensions': { [ADAPTER_NAME]: { samples: ext, facts: { events: type.length } } },
    };
    if (type.length > 0) profile['.profile'].default_sample_type = type[0]!;
    if (this.anyTime && n > 0) {
      let lo = ext.time_ns![0] as bigint;
      let hi = lo;
      for (const t of ext.time_ns as BigInt64Array) {
        if (t < lo) lo = t;
        if (t > hi) hi = t;
      }
      profile['.profile'].duration_nanos = hi - lo;
    }
    return { profile, warnings: this.warnings, format: FORMAT_ID };
  }
}

/**
 * The profile with the mapping of the program perf recorded moved to the first row: pprof (and
 * `profkit top`) call the first mapping the main binary (`File:`). It is the DSO named like the
 * first sample's comm (which the kernel cuts to 15 characters); perf lists DSOs in the order
 * samples meet them, often the dynamic loader first.
 */
function mainMappingFirst(p: Profile, comm: string | undefined): Profile {
  const m = p['.mappings'];
  if (comm === undefined || comm === '') return p;
  const main = m.filename.findIndex((f) => {
    const base = f.slice(f.lastIndexOf('/') + 1);
    return base === comm || (comm.length === 15 && base.startsWith(comm));
  });
  if (main <= 0) return p;
  const order = [main, ...m.mapping_id.keys()].filter((r, k) => k === 0 || r !== main);
  const pick = <T extends { length: number }>(c: T): T => {
    const out = Array.isArray(c) ? [] : new (c.constructor as new (n: number) => T)(c.length);
    order.forEach((r, k) => ((out as unknown as unknown[])[k] = (c as unknown as unknown[])[r]));
    return out as T;
  };
  const mappings = Object.fromEntries(Object.entries(m).map(([k, c]) => [k, pick(c as { length: number })])) as unknown as typeof m;
  return { ...p, '.mappings': mappings };
}

/** Reads `perf script` text from a stream of byte chunks (memory independent of the text's size). */
export async function readPerfScriptChunks(chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, options: PerfReadOptions = {}): Promise<PerfReadResult> {
  const parser = new PerfScriptParser(options);
  const splitter = new LineSplitter(parser, { file: options.fileName, maxLineLength: limitValue(options.limits, 'maxLineLength') });
  let done = 0;
  for await (const c of chunks as AsyncIterable<Uint8Array>) {
    if (options.signal?.aborted) throw new ProfkitError(ErrorCodes.ABORTED, 'reading perf script text was aborted', { file: options.fileName });
    splitter.push(c);
    done += c.length;
    options.onProgress?.(done);
  }
  splitter.end();
  return parser.finish();
}

/** Reads `perf script` text held in memory. */
export function readPerfScriptBytes(bytes: Uint8Array, options: PerfReadOptions = {}): Promise<PerfReadResult> {
  return readPerfScriptChunks([bytes], options);
}
