/**
 * speedscope JSON read from a stream of chunks, in memory of the order of the profile rather than
 * of its text. The core tokenizer's events are sorted into a small document: the fields the
 * converter reads, as `JSON.parse` would give them, except that `shared.frames` become the
 * reader's frames and each profile's `samples`, `weights` and `events` become typed columns
 * (streamed.ts), with no object per sample or event. Fields the reader does not use are skipped,
 * not built. The document then goes through the whole-input reader's converter
 * (`speedscopeToProfile`), so both readers give the same profile, warnings and errors.
 *
 * What grows with the input is bounded as it grows, before it is stored: `maxInputBytes`, frames
 * (`maxTableEntries`), profiles (`maxSampleTypes`, or `maxTableEntries` when the `profile` option
 * picks one), samples (`maxSamples`; `maxSampleValues` with the profiles so far), frames per
 * sample (`maxFramesPerStack`), the frames of all samples (`maxTotalFrames`), and events
 * (`maxTableEntries`: 13 bytes each until they are replayed, as many as the file has).
 * Errors of the content (a bad frame, sample or event) are kept and thrown by the converter, in
 * the order the whole-input reader finds them; only limits and JSON syntax stop the stream.
 */

import {
  JsonTokenizer,
  arrayAt,
  checkLimit,
  integerAt,
  limitValue,
  numberAt,
  objectAt,
  tokenizeChunks,
  type JsonScalar,
  type JsonSink,
  type JsonSource,
  type PlatformAbortSignal,
  type ProfkitError,
  type ReadResult,
} from '@profkit/core';
import {
  checkStackLength,
  checkWeight,
  frameIndex,
  isFraction,
  profileIndexOption,
  readFrame,
  speedscopeSource,
  speedscopeToProfile,
  tooManyFrames,
  tooManyProfiles,
  tooManySamples,
  tooManyValues,
  type SpeedscopeReadOptions,
} from './read.js';
import { EVENT_CLOSE, EVENT_OPEN, EVENT_OTHER, MAX_STORED_FRAME_INDEX, StreamedEvents, StreamedFrames, StreamedStacks, StreamedWeights } from './streamed.js';

export interface SpeedscopeStreamOptions extends SpeedscopeReadOptions {
  signal?: PlatformAbortSignal;
}

const OBJECT = 1;
const ARRAY = 2;
type Kind = typeof OBJECT | typeof ARRAY;

/** What to do with the members of one open object or array. */
interface Container {
  key(name: string): void;
  scalar(v: JsonScalar): void;
  /** A member object or array starts: the container of its members. */
  open(kind: Kind): Container;
  close(): void;
}

/** A value the reader does not use: nothing kept. */
const SKIP: Container = { key() {}, scalar() {}, open: () => SKIP, close() {} };

/**
 * A value the converter only names in an error (`expected a string, got an array of 3`): kept as
 * an empty object, or an empty array of the same length (a length costs no memory).
 */
class Shape implements Container {
  private members = 0;
  constructor(
    private readonly kind: Kind,
    private readonly done: (standIn: unknown) => void,
  ) {}
  key(): void {}
  scalar(): void {
    this.members++;
  }
  open(): Container {
    this.members++;
    return SKIP;
  }
  close(): void {
    if (this.kind === OBJECT) return this.done({});
    const standIn: unknown[] = [];
    standIn.length = this.members;
    this.done(standIn);
  }
}

/** The error `check` throws, as a value (kept for the converter to throw in its turn). */
function errorOf(check: () => unknown): ProfkitError {
  try {
    check();
  } catch (e) {
    return e as ProfkitError;
  }
  throw new Error('errorOf: the check passed');
}

/** An object whose fields named in `fields` are kept (scalars as they are, objects and arrays as `Shape`s) unless `special` reads them. */
abstract class Fields implements Container {
  readonly value: Record<string, unknown> = {};
  protected current = '';
  constructor(private readonly fields: ReadonlySet<string>) {}
  key(name: string): void {
    this.current = name;
  }
  scalar(v: JsonScalar): void {
    if (this.fields.has(this.current)) this.value[this.current] = v;
  }
  open(kind: Kind): Container {
    const special = this.special(this.current, kind);
    if (special) return special;
    if (!this.fields.has(this.current)) return SKIP;
    const k = this.current;
    return new Shape(kind, (v) => (this.value[k] = v));
  }
  protected special(_key: string, _kind: Kind): Container | undefined {
    return undefined;
  }
  abstract close(): void;
}

/**
 * An array of entries that are each an object or each an array (`entryKind`, read by `entry`);
 * an entry of another kind is kept as the converter's error of it (`bad`). `next` counts an entry
 * against its limit before it is read.
 */
abstract class EntryList<T> implements Container {
  constructor(
    private readonly entryKind: Kind,
    protected readonly list: T,
    private readonly done: (v: T) => void,
  ) {}
  key(): void {}
  scalar(v: JsonScalar): void {
    this.bad(this.next(), v);
  }
  open(kind: Kind): Container {
    const j = this.next();
    if (kind === this.entryKind) return this.entry(j);
    return new Shape(kind, (v) => this.bad(j, v));
  }
  close(): void {
    this.done(this.list);
  }
  protected abstract next(): number;
  protected abstract entry(j: number): Container;
  protected abstract bad(j: number, v: unknown): void;
}

/** The state of one read: the options, the limits and what all profiles hold so far. */
class StreamState {
  readonly maxSamples: number;
  readonly maxValues: number;
  readonly maxTotalFrames: number;
  readonly maxDepth: number;
  readonly maxTableEntries: number;
  readonly maxSampleTypes: number;
  /** The `profile` option: its index, -1 when it names a profile, undefined when all are read. */
  readonly chosenIndex: number | undefined;
  /** A profile named by the `profile` option was found (only the first one is read). */
  nameFound = false;
  samples = 0;
  totalFrames = 0;
  events = 0;
  /** Profiles read so far (each is a value column of every sample). */
  columns = 0;
  document: unknown = undefined;

  constructor(
    readonly src: JsonSource,
    readonly options: SpeedscopeReadOptions,
  ) {
    const limits = options.limits;
    this.maxSamples = limitValue(limits, 'maxSamples');
    this.maxValues = limitValue(limits, 'maxSampleValues');
    this.maxTotalFrames = limitValue(limits, 'maxTotalFrames');
    this.maxDepth = limitValue(limits, 'maxFramesPerStack');
    this.maxTableEntries = limitValue(limits, 'maxTableEntries');
    this.maxSampleTypes = limitValue(limits, 'maxSampleTypes');
    this.chosenIndex = options.profile === undefined ? undefined : profileIndexOption(options.profile);
  }

  tableEntry(n: number, what: string, path: string): void {
    if (n > this.maxTableEntries) checkLimit(this.options.limits, 'maxTableEntries', n, what, { file: this.src.file, path });
  }
}

class Root implements Container {
  constructor(private readonly state: StreamState) {}
  key(): void {}
  scalar(v: JsonScalar): void {
    this.state.document = v;
  }
  open(kind: Kind): Container {
    if (kind === OBJECT) return new DocumentFields(this.state);
    return new Shape(kind, (v) => (this.state.document = v));
  }
  close(): void {}
}

const DOCUMENT_FIELDS = new Set(['shared', 'profiles', 'name', 'exporter', 'activeProfileIndex']);

class DocumentFields extends Fields {
  constructor(private readonly state: StreamState) {
    super(DOCUMENT_FIELDS);
  }
  protected override special(key: string, kind: Kind): Container | undefined {
    if (key === 'shared' && kind === OBJECT) return new SharedFields(this.state, (v) => (this.value.shared = v));
    if (key === 'profiles' && kind === ARRAY) return new ProfileList(this.state, (v) => (this.value.profiles = v));
    return undefined;
  }
  close(): void {
    this.state.document = this.value;
  }
}

const SHARED_FIELDS = new Set(['frames']);

class SharedFields extends Fields {
  constructor(
    private readonly state: StreamState,
    private readonly done: (v: unknown) => void,
  ) {
    super(SHARED_FIELDS);
  }
  protected override special(key: string, kind: Kind): Container | undefined {
    return key === 'frames' && kind === ARRAY ? new FrameList(this.state, (v) => (this.value.frames = v)) : undefined;
  }
  close(): void {
    this.done(this.value);
  }
}

/** `shared.frames`: each frame checked as it ends (`readFrame`, as the converter would) and kept as a `Frame`. */
class FrameList extends EntryList<StreamedFrames> {
  private readonly fields = new FrameFields(this);
  constructor(
    private readonly state: StreamState,
    done: (v: StreamedFrames) => void,
  ) {
    super(OBJECT, new StreamedFrames(), done);
  }
  protected next(): number {
    this.state.tableEntry(++this.list.length, 'frames', 'shared.frames');
    return this.list.length - 1;
  }
  protected entry(i: number): Container {
    return this.list.fault ? SKIP : this.fields.start(i);
  }
  protected bad(i: number, v: unknown): void {
    this.frame(i, v);
  }
  /** Frame `i`, an object of its fields or any other value: stored, or kept as the converter's error. */
  frame(i: number, v: unknown): void {
    if (this.list.fault) return;
    try {
      this.list.frames.push(readFrame(this.state.src, v, `shared.frames[${i}]`, this.state.options.limits));
    } catch (e) {
      this.list.fault = e as ProfkitError;
    }
  }
}

/** The fields of an entry of a list, one instance reused for each entry: those named by `has` are kept by `set`, the others skipped. */
abstract class EntryFields implements Container {
  protected index = 0;
  private current = '';
  start(i: number): this {
    this.index = i;
    this.reset();
    return this;
  }
  key(name: string): void {
    this.current = name;
  }
  scalar(v: JsonScalar): void {
    this.set(this.current, v);
  }
  open(kind: Kind): Container {
    const k = this.current;
    return this.has(k) ? new Shape(kind, (v) => this.set(k, v)) : SKIP;
  }
  abstract close(): void;
  protected abstract reset(): void;
  protected abstract has(key: string): boolean;
  protected abstract set(key: string, v: unknown): void;
}

/** The fields of one frame: `name`, `file`, `line` and `col`. */
class FrameFields extends EntryFields {
  private fields: { name?: unknown; file?: unknown; line?: unknown; col?: unknown } = {};
  constructor(private readonly list: FrameList) {
    super();
  }
  close(): void {
    this.list.frame(this.index, this.fields);
  }
  protected reset(): void {
    this.fields = {};
  }
  protected has(k: string): boolean {
    return k === 'name' || k === 'file' || k === 'line' || k === 'col';
  }
  protected set(k: string, v: unknown): void {
    if (k === 'name') this.fields.name = v;
    else if (k === 'file') this.fields.file = v;
    else if (k === 'line') this.fields.line = v;
    else if (k === 'col') this.fields.col = v;
  }
}

/** `profiles`: the heads of all, the columns of those the `profile` option reads. */
class ProfileList extends EntryList<unknown[]> {
  constructor(
    private readonly state: StreamState,
    done: (v: unknown[]) => void,
  ) {
    super(OBJECT, [], done);
  }
  protected next(): number {
    const n = this.list.length + 1;
    // Read all, each profile is a value column of every sample; read one, the others are only their heads.
    if (this.state.chosenIndex === undefined) {
      if (n > this.state.maxSampleTypes) throw tooManyProfiles(this.state.src, n, this.state.maxSampleTypes);
    } else this.state.tableEntry(n, 'profiles', 'profiles');
    return n - 1;
  }
  protected entry(i: number): Container {
    return new ProfileFields(this.state, i, (v) => this.list.push(v));
  }
  /** Not an object: the converter says so if it reads this profile. */
  protected bad(_i: number, v: unknown): void {
    this.list.push(v);
  }
}

const PROFILE_FIELDS = new Set(['type', 'name', 'unit', 'startValue', 'endValue', 'samples', 'weights', 'events']);

/** One profile: its head, and its samples, weights and events as columns when it is read. */
class ProfileFields extends Fields {
  private readonly path: string;
  /** Read (its columns kept): chosen by the `profile` option, or perhaps chosen (its name not seen yet). */
  private read: boolean;
  private nameSeen = false;
  // What this profile's columns add to the file's totals (taken back if it turns out not to be read).
  samples = 0;
  frames = 0;
  events = 0;

  constructor(
    readonly state: StreamState,
    readonly index: number,
    private readonly done: (v: unknown) => void,
  ) {
    super(PROFILE_FIELDS);
    this.path = `profiles[${index}]`;
    const chosen = state.chosenIndex;
    this.read = chosen === undefined || chosen === index || (chosen < 0 && !state.nameFound);
    if (this.read) state.columns++;
  }

  override scalar(v: JsonScalar): void {
    if (this.current === 'name' && !this.nameSeen) this.named(v);
    if (!this.read && (this.current === 'samples' || this.current === 'weights' || this.current === 'events')) return;
    super.scalar(v);
  }

  protected override special(key: string, kind: Kind): Container | undefined {
    if (key === 'name' && !this.nameSeen) this.named(undefined);
    const data = key === 'samples' || key === 'weights' || key === 'events';
    if (!data) return undefined;
    // A profile not read, or data its type does not use (when the type came first), is skipped.
    const type = this.value.type;
    if (!this.read || (key === 'events' ? type === 'sampled' : type === 'evented')) return SKIP;
    if (kind !== ARRAY) return undefined;
    if (key === 'samples') return new SampleList(this, (v) => (this.value.samples = v));
    if (key === 'weights') return new WeightValues(this, (v) => (this.value.weights = v));
    return new EventList(this, (v) => (this.value.events = v));
  }

  /** The first `name` decides whether a profile chosen by its name is this one. */
  private named(v: unknown): void {
    this.nameSeen = true;
    const chosen = this.state.chosenIndex;
    if (chosen === undefined || chosen >= 0 || !this.read) return;
    if (v === this.state.options.profile) this.state.nameFound = true;
    else this.drop();
  }

  /** Not read after all: its columns are freed and taken out of the totals. */
  private drop(): void {
    this.read = false;
    this.state.columns--;
    this.state.samples -= this.samples;
    this.state.totalFrames -= this.frames;
    this.state.events -= this.events;
    delete this.value.samples;
    delete this.value.weights;
    delete this.value.events;
  }

  close(): void {
    if (this.read && this.state.chosenIndex === -1 && !this.nameSeen) this.drop();
    this.done(this.value);
  }

  pathOf(rest: string): string {
    return this.path + rest;
  }
}

/** A profile's `samples`: frame indices into one column, where each stack starts into another. */
class SampleList extends EntryList<StreamedStacks> {
  private readonly frames = new SampleFrames(this);
  constructor(
    readonly profile: ProfileFields,
    done: (v: StreamedStacks) => void,
  ) {
    super(ARRAY, new StreamedStacks(profile.state.src, profile.pathOf(''), frameIndex), done);
  }
  get stacks(): StreamedStacks {
    return this.list;
  }
  /** Counts the next sample against maxSamples and maxSampleValues (with the profiles so far) before it is read. */
  protected next(): number {
    const { state } = this.profile;
    const n = ++state.samples;
    this.profile.samples++;
    if (n > state.maxSamples) throw tooManySamples(state.src, this.profile.pathOf(''), n, state.maxSamples);
    if (n * state.columns > state.maxValues) throw tooManyValues(state.src, this.profile.pathOf(''), n, state.columns, state.maxValues);
    return this.list.length++;
  }
  protected entry(j: number): Container {
    return this.frames.start(j);
  }
  protected bad(j: number, v: unknown): void {
    const stacks = this.list;
    if (stacks.fault) return;
    const error = errorOf(() => arrayAt(this.profile.state.src, v, this.profile.pathOf(`.samples[${j}]`)));
    stacks.fault = { index: j, storedFrames: stacks.frames.length, error: () => error };
  }
}

/** The frames of one sample (reused for each). */
class SampleFrames implements Container {
  private sample = 0;
  private depth = 0;
  constructor(private readonly list: SampleList) {}
  start(j: number): this {
    this.sample = j;
    this.depth = 0;
    return this;
  }
  key(): void {}
  scalar(v: JsonScalar): void {
    const d = this.next();
    const { stacks } = this.list;
    if (stacks.fault) return;
    if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_STORED_FRAME_INDEX) stacks.frames.push(v);
    else this.badFrame(d, v);
  }
  open(kind: Kind): Container {
    const d = this.next();
    return new Shape(kind, (v) => this.badFrame(d, v));
  }
  close(): void {
    const { stacks } = this.list;
    if (!stacks.fault) stacks.offsets.push(stacks.frames.length);
  }
  /** Counts the next frame of the sample against maxFramesPerStack and maxTotalFrames before it is stored. */
  private next(): number {
    const { profile } = this.list;
    const { state } = profile;
    const d = this.depth++;
    if (this.depth > state.maxDepth) checkStackLength(state.src, profile.pathOf(`.samples[${this.sample}]`), this.depth, state.maxDepth);
    profile.frames++;
    if (++state.totalFrames > state.maxTotalFrames) throw tooManyFrames(state.src, profile.pathOf(''), state.totalFrames, state.maxTotalFrames);
    return d;
  }
  /** A frame index the converter refuses (not a whole number ≥ 0, or beyond any frame list): kept as its error. */
  private badFrame(d: number, v: unknown): void {
    const { stacks, profile } = this.list;
    if (stacks.fault) return;
    const path = profile.pathOf(`.samples[${this.sample}][${d}]`);
    const src = profile.state.src;
    stacks.fault = { index: this.sample, storedFrames: stacks.frames.length, error: (nFrames) => errorOf(() => frameIndex(src, v, path, nFrames)) };
  }
}

/** A profile's `weights`, into a column of doubles. */
class WeightValues implements Container {
  private readonly weights = new StreamedWeights();
  constructor(
    private readonly profile: ProfileFields,
    private readonly done: (v: StreamedWeights) => void,
  ) {}
  key(): void {}
  scalar(v: JsonScalar): void {
    const { weights } = this;
    const j = weights.length++;
    if (isFraction(v)) weights.fractional = true;
    if (weights.fault) return;
    // JSON's 1e999 is Infinity: not finite, the converter's error (checkWeight), as the whole-input reader's.
    if (typeof v === 'number' && v >= 0 && v !== Infinity) {
      // More weights than maxSamples allows samples: only their count matters (it differs from the samples', or the samples are refused).
      if (j < this.profile.state.maxSamples) weights.values.push(v);
    } else this.bad(j, v);
  }
  open(kind: Kind): Container {
    const j = this.weights.length++;
    return new Shape(kind, (v) => this.bad(j, v));
  }
  close(): void {
    this.done(this.weights);
  }
  private bad(j: number, v: unknown): void {
    if (this.weights.fault) return;
    const error = errorOf(() => checkWeight(this.profile.state.src, v, this.profile.pathOf(`.weights[${j}]`)));
    this.weights.fault = { index: j, error: () => error };
  }
}

/** A profile's `events`, into columns of times, frames and types. */
class EventList extends EntryList<StreamedEvents> {
  private readonly fields = new EventFields(this);
  constructor(
    readonly profile: ProfileFields,
    done: (v: StreamedEvents) => void,
  ) {
    super(OBJECT, new StreamedEvents(profile.state.src, profile.pathOf(''), frameIndex), done);
  }
  /** Counts the next event against maxTableEntries before it is read. */
  protected next(): number {
    const { state } = this.profile;
    this.profile.events++;
    state.tableEntry(++state.events, 'events', this.profile.pathOf('.events'));
    return this.list.length++;
  }
  protected entry(j: number): Container {
    return this.fields.start(j);
  }
  /** An event that is not an object: kept as the converter's error. */
  protected bad(j: number, v: unknown): void {
    if (this.list.fault) return;
    const error = errorOf(() => objectAt(this.profile.state.src, v, this.profile.pathOf(`.events[${j}]`)));
    this.list.fault = { index: j, error: () => error };
  }

  /** Checks event `j` as the converter does before replaying it, and stores it or keeps its error. */
  eventFields(j: number, type: unknown, at: unknown, frame: unknown): void {
    const events = this.list;
    if (isFraction(at)) events.fractional = true;
    if (events.fault) return;
    if (typeof at !== 'number' || !Number.isFinite(at) || typeof frame !== 'number' || !Number.isInteger(frame) || frame < 0) {
      // The checks of the converter before it replays an event (frameIndex's range check needs the frames: the converter's).
      const src = this.profile.state.src;
      const path = this.profile.pathOf(`.events[${j}]`);
      const error = errorOf(() => {
        numberAt(src, at, `${path}.at`);
        integerAt(src, frame, `${path}.frame`, 0);
      });
      events.fault = { index: j, error: () => error };
      return;
    }
    if (frame > MAX_STORED_FRAME_INDEX) {
      const src = this.profile.state.src;
      const path = this.profile.pathOf(`.events[${j}].frame`);
      events.fault = { index: j, error: (nFrames) => errorOf(() => frameIndex(src, frame, path, nFrames)) };
      return;
    }
    events.at.push(at);
    events.frame.push(frame);
    const code = type === 'O' ? EVENT_OPEN : type === 'C' ? EVENT_CLOSE : EVENT_OTHER;
    events.type.push(code);
    if (code === EVENT_OTHER) events.fault = { index: j, badType: type };
  }
}

/** The fields of one event: `type`, `at` and `frame`. */
class EventFields extends EntryFields {
  private type: unknown;
  private at: unknown;
  private frame: unknown;
  constructor(private readonly list: EventList) {
    super();
  }
  close(): void {
    this.list.eventFields(this.index, this.type, this.at, this.frame);
  }
  protected reset(): void {
    this.type = this.at = this.frame = undefined;
  }
  protected has(k: string): boolean {
    return k === 'type' || k === 'at' || k === 'frame';
  }
  protected set(k: string, v: unknown): void {
    if (k === 'at') this.at = v;
    else if (k === 'frame') this.frame = v;
    else if (k === 'type') this.type = v;
  }
}

/** Routes the tokenizer's events to the container open at each point. */
class SpeedscopeSink implements JsonSink {
  private readonly stack: Container[];
  constructor(state: StreamState) {
    this.stack = [new Root(state)];
  }
  private get top(): Container {
    return this.stack[this.stack.length - 1]!;
  }
  startObject(): void {
    this.stack.push(this.top.open(OBJECT));
  }
  startArray(): void {
    this.stack.push(this.top.open(ARRAY));
  }
  endObject(): void {
    this.stack.pop()!.close();
  }
  endArray(): void {
    this.stack.pop()!.close();
  }
  key(name: string): void {
    this.top.key(name);
  }
  value(v: JsonScalar): void {
    this.top.scalar(v);
  }
}

/**
 * Reads speedscope JSON from chunks (e.g. `ReadInput.chunks()`), checking `maxInputBytes` as they
 * come; the same result as `readSpeedscopeBytes` on the joined bytes.
 */
export async function readSpeedscopeChunks(chunks: AsyncIterable<Uint8Array>, options: SpeedscopeStreamOptions = {}): Promise<ReadResult> {
  const src = speedscopeSource(options);
  const state = new StreamState(src, options);
  await tokenizeChunks(new JsonTokenizer(new SpeedscopeSink(state), src), chunks, src, options);
  return speedscopeToProfile(state.document, src, options);
}
