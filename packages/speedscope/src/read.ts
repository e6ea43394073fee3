/**
 * speedscope JSON → profile.
 *
 * - Each speedscope profile is one sample type (its name, made unique; `none` read as `count`),
 *   or only the one named by the `profile` option (its index or name). A sample has its value in
 *   its profile's column and 0 in the others.
 * - Sampled profiles: one sample per entry of `samples`, in order (stacks are root first in
 *   speedscope, innermost first in profkit), the weight as the value.
 * - Evented profiles: replayed; every stretch of time between two events with frames open is a
 *   sample of that stack whose value is the stretch's length. Events must nest: closing a frame
 *   that is not the innermost open one, events out of time order, or frames still open at the
 *   end are `PROFKIT_E_PARSE` errors (speedscope refuses these files too).
 * - Values are whole numbers in profkit: a profile with fractional times is read in whole
 *   nanoseconds; other fractional values are rounded, with a warning.
 * - Kept for the writer in `.extensions.speedscope`: per sample its profile (`profile`) and its
 *   start (`at`, in the profile's unit); the file's name, exporter and activeProfileIndex, and
 *   each profile's name, type, unit, startValue, endValue and scale (`facts.profiles`).
 *
 * `readSpeedscopeBytes` parses the whole input with JSON.parse; the stream reader (read-stream.ts)
 * builds a document whose large arrays are columns. Both go through `speedscopeToProfile`, which
 * reads a profile's samples, weights and events through `StackList`/`WeightList`/`EventList`
 * (streamed.ts) whichever reader parsed them, so the checks, their order and the errors are one code.
 */

import {
  ErrorCodes,
  ProfileBuilder,
  ProfkitError,
  arrayAt,
  StringKeyedMap,
  checkLimit,
  describeJson,
  integerAt,
  limitError,
  limitValue,
  numberAt,
  objectAt,
  parseJsonBytes,
  schemaError,
  stringAt,
  type JsonSource,
  type ReadLimits,
  type ReadResult,
  type Warning,
} from '@profkit/core';
import { ADAPTER_NAME, FORMAT_ID, NANOS_IN, UNITS, type ProfileFacts, type SpeedscopeUnit } from './format.js';
import { StreamedEvents, StreamedFrames, StreamedStacks, StreamedWeights, type EventList, type EventRead, type Frame, type StackList, type WeightList } from './streamed.js';

export interface SpeedscopeReadOptions {
  fileName?: string;
  limits?: ReadLimits;
  /** Read only this profile: its index in `profiles` or its name (default: all, one sample type each). */
  profile?: string | number;
}

/** Builds the samples of one speedscope profile into the shared builder. */
interface Emit {
  (stack: readonly number[], value: number, at: number): void;
}

export function readSpeedscopeBytes(bytes: Uint8Array, options: SpeedscopeReadOptions = {}): ReadResult {
  const src = speedscopeSource(options);
  // The registry bounds what it reads, but this reader is public and its callers' limits must hold too.
  checkLimit(options.limits, 'maxInputBytes', bytes.length, 'input bytes', { file: src.file });
  return speedscopeToProfile(parseJsonBytes(bytes, src), src, options);
}

export function speedscopeSource(options: SpeedscopeReadOptions): JsonSource {
  return { file: options.fileName ?? '', format: 'speedscope' };
}

/**
 * The document → profile: `JSON.parse`'s value (readSpeedscopeBytes), or the stream reader's
 * document whose frames, samples, weights and events are columns (streamed.ts).
 */
export function speedscopeToProfile(value: unknown, src: JsonSource, options: SpeedscopeReadOptions): ReadResult {
  const limits = options.limits;
  const doc = objectAt(src, value, '(document)');
  const shared = objectAt(src, doc.shared, 'shared');
  const frames = readFrames(src, shared.frames, limits);
  const all = arrayAt(src, doc.profiles, 'profiles');
  if (all.length === 0) throw schemaError(src, 'profiles', 'the file has no profiles', 'at least one profile');
  const chosen = selectProfiles(src, all, options.profile);
  // Each profile is a value column of every sample: bound the columns before the samples multiply them.
  const maxSampleTypes = limitValue(limits, 'maxSampleTypes');
  if (chosen.length > maxSampleTypes) throw tooManyProfiles(src, chosen.length, maxSampleTypes);

  const heads = chosen.map((i) => readHead(src, all[i], `profiles[${i}]`, i));
  const warnings: Warning[] = [];
  // Profile names are the input's: keyed through StringKeyedMap (a Map hashes long ones by length alone).
  const seen = new StringKeyedMap<number>();
  const typeNames = heads.map((h) => {
    const n = (seen.get(h.name) ?? 0) + 1;
    seen.set(h.name, n);
    return n === 1 ? h.name : `${h.name} (${n})`;
  });
  const b = new ProfileBuilder({ sampleTypes: heads.map((h, k) => ({ type: typeNames[k]!, unit: h.scale !== 1 ? 'nanoseconds' : h.unit === 'none' ? 'count' : h.unit })) });

  const maxSamples = limitValue(limits, 'maxSamples');
  const maxDepth = limitValue(limits, 'maxFramesPerStack');
  const maxTotal = limitValue(limits, 'maxTotalFrames');
  // Every sample stores a value for every profile (8 bytes each): 2,000 profiles make a
  // 20,000-sample file of 323 KB cost 40M values, so bound samples × profiles as samples grow.
  const maxValues = limitValue(limits, 'maxSampleValues');
  let totalFrames = 0;
  let eventCount = 0;
  const locationOf = new Int32Array(frames.length).fill(-1);
  const location = (fi: number): number => {
    if (locationOf[fi]! < 0) {
      const f = frames[fi]!;
      locationOf[fi] = b.internLocation({ functionId: b.internFunction({ name: f.name, filename: f.file }), line: f.line, column: f.col });
    }
    return locationOf[fi]!;
  };
  const atColumn: number[] = [];
  const profileColumn: number[] = [];
  const values = new Array<bigint>(heads.length).fill(0n);
  const ids: number[] = [];

  heads.forEach((head, k) => {
    const path = `profiles[${chosen[k]}]`;
    let rounded = 0;
    const emit: Emit = (rootFirst, value, at) => {
      if (b.sampleCount >= maxSamples) throw tooManySamples(src, path, b.sampleCount + 1, maxSamples);
      if ((b.sampleCount + 1) * heads.length > maxValues) throw tooManyValues(src, path, b.sampleCount + 1, heads.length, maxValues);
      totalFrames += rootFirst.length;
      if (totalFrames > maxTotal) throw tooManyFrames(src, path, totalFrames, maxTotal);
      ids.length = 0;
      for (let j = rootFirst.length - 1; j >= 0; j--) ids.push(location(rootFirst[j]!));
      const scaled = value * head.scale;
      const whole = Math.round(scaled);
      // A scaled value a float error away from whole is whole (0.3 ms - 0.1 ms is 199999.99999999997 ns).
      if (Math.abs(whole - scaled) > (head.scale === 1 ? 0 : 1e-3)) rounded++;
      if (!Number.isSafeInteger(whole)) throw new ProfkitError(ErrorCodes.RANGE, `${path}: value ${value} ${head.unit} is beyond 2^53 as a whole number`, { file: src.file, path, rule: 'speedscope: values fit a double exactly' });
      values[k] = BigInt(whole);
      b.addSample(ids, values);
      values[k] = 0n;
      atColumn.push(at);
      profileColumn.push(k);
    };
    const p = all[chosen[k]!] as Record<string, unknown>;
    if (head.type === 'sampled') readSampled(src, p, path, frames.length, maxDepth, head, emit);
    else {
      const events = eventsOf(src, p, path);
      // Events are a table of the input (the stream reader holds them as columns until they are replayed).
      eventCount += events.length;
      checkLimit(limits, 'maxTableEntries', eventCount, 'events', { file: src.file, path: `${path}.events` });
      readEvented(src, events, path, frames.length, maxDepth, head, emit);
    }
    // Its samples are in the builder now: the parsed arrays or the stream's columns can go before the profile is built.
    delete p.samples;
    delete p.weights;
    delete p.events;
    if (rounded > 0) warnings.push({ code: 'PROFKIT_W_SPEEDSCOPE_ROUNDED', message: `${path} ("${head.name}"): ${rounded} value(s) rounded to whole ${head.scale === 1 ? head.unit : 'nanoseconds'}`, detail: { file: src.file, path } });
  });

  const profile = b.build();
  const active = typeof doc.activeProfileIndex === 'number' ? chosen.indexOf(doc.activeProfileIndex) : 0;
  profile['.profile'].default_sample_type = typeNames[Math.max(0, active)]!;
  const facts: Record<string, string | number | ProfileFacts[]> = { profiles: heads.map(({ name, type, unit, startValue, endValue, scale }) => ({ name, type, unit, startValue, endValue, scale })) };
  if (typeof doc.name === 'string') facts.name = doc.name;
  if (typeof doc.exporter === 'string') facts.exporter = doc.exporter;
  if (typeof doc.activeProfileIndex === 'number' && active >= 0) facts.activeProfileIndex = active;
  profile['.extensions'][ADAPTER_NAME] = {
    facts: facts as never,
    samples: { profile: Uint32Array.from(profileColumn), at: Float64Array.from(atColumn) },
  };
  return { profile, warnings, format: FORMAT_ID };
}

function readFrames(src: JsonSource, v: unknown, limits: ReadLimits | undefined): Frame[] {
  // Each frame is an object of 4 fields however short its JSON (`{"name":"a"}` is 12 bytes).
  const count = (n: number) => checkLimit(limits, 'maxTableEntries', n, 'frames', { file: src.file, path: 'shared.frames' });
  if (v instanceof StreamedFrames) {
    count(v.length);
    if (v.fault) throw v.fault;
    return v.frames;
  }
  const frameValues = arrayAt(src, v, 'shared.frames');
  count(frameValues.length);
  return frameValues.map((f, i) => readFrame(src, f, `shared.frames[${i}]`, limits));
}

export function readFrame(src: JsonSource, v: unknown, path: string, limits: ReadLimits | undefined): Frame {
  const f = objectAt(src, v, path);
  const name = stringAt(src, f.name, `${path}.name`, limits);
  const file = f.file === undefined || f.file === null ? '' : stringAt(src, f.file, `${path}.file`, limits);
  const pos = (k: 'line' | 'col') => (f[k] === undefined || f[k] === null ? 0 : integerAt(src, f[k], `${path}.${k}`, 0));
  return { name: name === '' ? '(anonymous)' : name, file, line: pos('line'), col: pos('col') };
}

/** Profiles listed by name when the `profile` option names none of them. */
const MAX_NAMED_PROFILES = 10;

function selectProfiles(src: JsonSource, all: unknown[], which: string | number | undefined): number[] {
  if (which === undefined) return all.map((_, i) => i);
  const byIndex = profileIndexOption(which);
  const i = byIndex >= 0 ? byIndex : all.findIndex((p) => (p as { name?: unknown } | null)?.name === which);
  if (i < 0 || i >= all.length) {
    // The message names a few profiles, each name cut short: a file may have thousands of any length.
    const nameOf = (p: unknown) => describeJson((p as { name?: unknown } | null)?.name ?? '');
    const shown = all.slice(0, MAX_NAMED_PROFILES).map((p, k) => `${k}: ${nameOf(p)}`);
    const names = shown.join(', ') + (all.length > MAX_NAMED_PROFILES ? ` and ${all.length - MAX_NAMED_PROFILES} more` : '');
    throw new ProfkitError(ErrorCodes.USAGE, `no speedscope profile ${JSON.stringify(which)} (the file has ${names})`, { file: src.file, option: 'profile' });
  }
  return [i];
}

/** The index the `profile` option names, or -1 when it names a profile by its name. */
export function profileIndexOption(which: string | number): number {
  return typeof which === 'number' || /^\d+$/.test(which) ? Number(which) : -1;
}

/** A profile's head, and the scale that makes its values whole. */
function readHead(src: JsonSource, v: unknown, path: string, index: number): ProfileFacts {
  const p = objectAt(src, v, path);
  if (p.type !== 'sampled' && p.type !== 'evented') throw schemaError(src, `${path}.type`, `must be "sampled" or "evented", got ${describeJson(p.type)}`, 'profile type');
  const unit = (p.unit ?? 'none') as SpeedscopeUnit;
  if (!UNITS.includes(unit)) throw schemaError(src, `${path}.unit`, `must be one of ${UNITS.join(', ')}, got ${describeJson(p.unit)}`, 'unit');
  const startValue = numberAt(src, p.startValue ?? 0, `${path}.startValue`);
  const endValue = numberAt(src, p.endValue ?? 0, `${path}.endValue`);
  const name = typeof p.name === 'string' && p.name !== '' ? p.name : `profile ${index + 1}`;
  // Fractional numbers in a time profile: read it in whole nanoseconds.
  let fractional = !Number.isInteger(startValue);
  if (p.type === 'sampled') fractional ||= p.weights instanceof StreamedWeights ? p.weights.fractional : Array.isArray(p.weights) && p.weights.some(isFraction);
  if (p.type === 'evented') fractional ||= p.events instanceof StreamedEvents ? p.events.fractional : Array.isArray(p.events) && p.events.some((e) => isFraction((e as { at?: unknown } | null)?.at));
  const scale = fractional ? (NANOS_IN[unit] ?? 1) : 1;
  return { name, type: p.type, unit, startValue, endValue, scale };
}

/** A number that is not whole (a weight or time that makes its profile read in nanoseconds). */
export function isFraction(v: unknown): boolean {
  return typeof v === 'number' && !Number.isInteger(v);
}

export function frameIndex(src: JsonSource, v: unknown, path: string, nFrames: number): number {
  const i = integerAt(src, v, path, 0);
  if (i >= nFrames) throw schemaError(src, path, `frame ${i} is not in shared.frames (${nFrames} frames)`, 'frame indices point into shared.frames');
  return i;
}

/** A weight: a finite number, not negative. */
export function checkWeight(src: JsonSource, v: unknown, path: string): number {
  const w = numberAt(src, v, path);
  if (w < 0) throw schemaError(src, path, `weight ${w} is negative`, 'weights are not negative');
  return w;
}

/** A sample's stack: an array of at most `maxDepth` frames (its length is checked before its frames). */
export function checkStackLength(src: JsonSource, path: string, length: number, maxDepth: number): void {
  if (length > maxDepth) throw limitError('maxFramesPerStack', `${path}: a stack of ${length} frames`, maxDepth, { file: src.file, path });
}

// The limits both readers check as samples grow (the stream reader before they are stored, the
// converter as they are added), worded alike.
export function tooManySamples(src: JsonSource, path: string, n: number, max: number): ProfkitError {
  return limitError('maxSamples', `sample ${n}`, max, { file: src.file, path });
}
export function tooManyValues(src: JsonSource, path: string, n: number, profiles: number, max: number): ProfkitError {
  return limitError('maxSampleValues', `sample ${n} × ${profiles} profiles (one value each)`, max, { file: src.file, path });
}
export function tooManyFrames(src: JsonSource, path: string, n: number, max: number): ProfkitError {
  return limitError('maxTotalFrames', `the frames of all samples (${n})`, max, { file: src.file, path });
}
export function tooManyProfiles(src: JsonSource, n: number, max: number): ProfkitError {
  return limitError('maxSampleTypes', `${n} profiles (one sample type each)`, max, { file: src.file, path: 'profiles' });
}

/** `samples` as parsed by JSON.parse. */
class JsonStacks implements StackList {
  constructor(
    private readonly src: JsonSource,
    private readonly samples: unknown[],
    private readonly path: string,
  ) {}
  get length(): number {
    return this.samples.length;
  }
  stack(j: number, out: number[], nFrames: number, maxDepth: number): void {
    const path = `${this.path}.samples[${j}]`;
    const s = arrayAt(this.src, this.samples[j], path);
    checkStackLength(this.src, path, s.length, maxDepth);
    out.length = 0;
    for (let d = 0; d < s.length; d++) out.push(frameIndex(this.src, s[d], `${path}[${d}]`, nFrames));
  }
}

/** `weights` as parsed by JSON.parse. */
class JsonWeights implements WeightList {
  constructor(
    private readonly src: JsonSource,
    private readonly weights: unknown[],
    private readonly path: string,
  ) {}
  get length(): number {
    return this.weights.length;
  }
  weight(j: number): number {
    return checkWeight(this.src, this.weights[j], `${this.path}.weights[${j}]`);
  }
}

/** `events` as parsed by JSON.parse. */
class JsonEvents implements EventList {
  private readonly read: EventRead = { at: 0, frame: 0, type: undefined };
  constructor(
    private readonly src: JsonSource,
    private readonly events: unknown[],
    private readonly path: string,
  ) {}
  get length(): number {
    return this.events.length;
  }
  event(j: number, nFrames: number): EventRead {
    const path = `${this.path}.events[${j}]`;
    const e = objectAt(this.src, this.events[j], path);
    this.read.at = numberAt(this.src, e.at, `${path}.at`);
    this.read.frame = frameIndex(this.src, e.frame, `${path}.frame`, nFrames);
    this.read.type = e.type;
    return this.read;
  }
}

function readSampled(src: JsonSource, p: Record<string, unknown>, path: string, nFrames: number, maxDepth: number, head: ProfileFacts, emit: Emit): void {
  const samples = p.samples instanceof StreamedStacks ? p.samples : new JsonStacks(src, arrayAt(src, p.samples, `${path}.samples`), path);
  const weights = p.weights instanceof StreamedWeights ? p.weights : new JsonWeights(src, arrayAt(src, p.weights, `${path}.weights`), path);
  if (weights.length !== samples.length) throw schemaError(src, `${path}.weights`, `has ${weights.length} entries but samples has ${samples.length}`, 'one weight per sample');
  let at = head.startValue;
  const stack: number[] = [];
  for (let j = 0; j < samples.length; j++) {
    samples.stack(j, stack, nFrames, maxDepth);
    const w = weights.weight(j);
    emit(stack, w, at);
    at += w;
  }
}

function eventsOf(src: JsonSource, p: Record<string, unknown>, path: string): EventList {
  return p.events instanceof StreamedEvents ? p.events : new JsonEvents(src, arrayAt(src, p.events, `${path}.events`), path);
}

function readEvented(src: JsonSource, events: EventList, path: string, nFrames: number, maxDepth: number, head: ProfileFacts, emit: Emit): void {
  const open: number[] = [];
  let last = head.startValue;
  for (let j = 0; j < events.length; j++) {
    const ep = () => `${path}.events[${j}]`;
    const { at, frame, type } = events.event(j, nFrames);
    if (at < last) throw schemaError(src, `${ep()}.at`, `${at} is before the previous event (${last})`, 'events are in time order');
    if (open.length > 0 && at > last) emit(open, at - last, last);
    last = at;
    if (type === 'O') {
      if (open.length >= maxDepth) throw limitError('maxFramesPerStack', `${ep()}: ${open.length + 1} frames open`, maxDepth, { file: src.file, path: ep() });
      open.push(frame);
    } else if (type === 'C') {
      const top = open[open.length - 1];
      if (top !== frame) {
        const what = top === undefined ? 'no frame is open' : `the innermost open frame is ${top}`;
        throw schemaError(src, ep(), `closes frame ${frame} but ${what}`, 'evented profiles: events nest (a frame closes after the frames opened in it)');
      }
      open.pop();
    } else {
      throw schemaError(src, `${ep()}.type`, `must be "O" or "C", got ${describeJson(type)}`, 'event type');
    }
  }
  if (open.length > 0) {
    throw schemaError(src, `${path}.events`, `${open.length} frame(s) still open after the last event (innermost: frame ${open[open.length - 1]})`, 'evented profiles: every opened frame is closed');
  }
}
