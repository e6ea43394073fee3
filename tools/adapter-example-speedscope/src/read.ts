/**
 * Reading speedscope JSON into a profkit profile.
 *
 * - Every speedscope profile becomes one sample type (`type` = the profile's name, `unit` = its
 *   unit, `none` read as `count`).
 * - Sampled profiles: each `samples[i]` (frame indices, ROOT FIRST) with `weights[i]` becomes a
 *   sample whose stack is reversed to profkit's innermost-first order. When every sampled
 *   profile lists the same stacks in the same order (as this adapter writes several sample types),
 *   they are read back as ONE set of samples with one value per type; otherwise each profile's
 *   samples are appended with 0 in the other types.
 * - Evented profiles are replayed: `O`/`C` events open and close frames, and the time between two
 *   events is added to the stack that was open (aggregated per distinct stack).
 * - Values must be integers in profkit: fractional time values are converted to nanoseconds
 *   (rounded, with a warning when rounding changed a value); other fractional values are rounded
 *   with a warning.
 */

import { ErrorCodes, ProfileBuilder, ProfkitError, jsonSyntaxErrorAt, type ReadInput, type ReadResult, type Warning } from '@profkit/core';
import { NANOS_PER_UNIT, VALUE_UNITS, type ValueUnit } from './file-format.js';

export const ADAPTER_NAME = 'speedscope-example';

/** Largest input handed to JSON.parse (V8's string length limit, in bytes of ASCII). */
export const MAX_JSON_BYTES = 2 ** 29 - 24;

interface Frame {
  name: string;
  file: string;
  line: number;
  col: number;
}

/** One speedscope profile reduced to stacks (innermost first, frame indices) and raw weights. */
interface Series {
  name: string;
  unit: ValueUnit;
  kind: 'sampled' | 'evented';
  stacks: number[][];
  weights: number[];
  startValue: number;
  endValue: number;
  /** The profile's `samples` as given (to recognize profiles listing the same stacks). */
  rawSamples?: number[][];
}

function parseError(file: string, path: string, message: string, rule: string, extra: Record<string, unknown> = {}): ProfkitError {
  return new ProfkitError(ErrorCodes.PARSE, `${path}: ${message}`, { file, rule, path, ...extra });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Parses speedscope JSON text; errors are `PROFKIT_E_PARSE` (with line) or `PROFKIT_E_TRUNCATED`. */
export function parseSpeedscopeJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    if (text.trim() === '') throw new ProfkitError(ErrorCodes.EMPTY_INPUT, 'the input is empty', { file, rule: 'speedscope files are JSON' });
    const at = jsonSyntaxErrorAt(text);
    if (at && at.offset >= text.trimEnd().length) {
      throw new ProfkitError(ErrorCodes.TRUNCATED, `the JSON ends early (expected ${at.expected})`, { file, offset: at.offset, rule: 'speedscope files are JSON' });
    }
    throw new ProfkitError(ErrorCodes.PARSE, at ? `not valid JSON: expected ${at.expected} at column ${at.column}` : `not valid JSON: ${(e as Error).message}`, {
      file,
      line: at?.line,
      rule: 'speedscope files are JSON',
    });
  }
}

function num(v: unknown, file: string, path: string, what: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw parseError(file, path, `${what} must be a finite number, got ${JSON.stringify(v)}`, 'speedscope schema: number');
  return v;
}

function frameIndex(v: unknown, nFrames: number, file: string, path: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v >= nFrames) {
    throw parseError(file, path, `frame index ${JSON.stringify(v)} is not an index into shared.frames (which has ${nFrames} frames)`, 'speedscope schema: frame index in range');
  }
  return v;
}

function readFrames(doc: Record<string, unknown>, file: string): Frame[] {
  const shared = doc.shared;
  if (!isObject(shared) || !Array.isArray(shared.frames)) throw parseError(file, 'shared.frames', 'missing or not an array', 'speedscope schema: shared.frames');
  return shared.frames.map((f, i) => {
    const path = `shared.frames[${i}]`;
    if (!isObject(f)) throw parseError(file, path, 'a frame must be an object', 'speedscope schema: frame');
    if (typeof f.name !== 'string') throw parseError(file, `${path}.name`, 'a frame needs a string name', 'speedscope schema: frame name');
    if (f.file !== undefined && typeof f.file !== 'string') throw parseError(file, `${path}.file`, 'must be a string', 'speedscope schema: frame file');
    const pos = (k: 'line' | 'col') => {
      const v = f[k];
      if (v === undefined || v === null) return 0;
      if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw parseError(file, `${path}.${k}`, `must be a non-negative integer, got ${JSON.stringify(v)}`, `speedscope schema: frame ${k}`);
      return v;
    };
    return { name: f.name === '' ? '(anonymous)' : f.name, file: f.file ?? '', line: pos('line'), col: pos('col') };
  });
}

function readSampled(p: Record<string, unknown>, i: number, nFrames: number, file: string, base: Omit<Series, 'kind' | 'stacks' | 'weights'>): Series {
  const path = `profiles[${i}]`;
  if (!Array.isArray(p.samples)) throw parseError(file, `${path}.samples`, 'missing or not an array', 'speedscope schema: sampled profile');
  if (!Array.isArray(p.weights)) throw parseError(file, `${path}.weights`, 'missing or not an array', 'speedscope schema: sampled profile');
  if (p.weights.length !== p.samples.length) {
    throw parseError(file, `${path}.weights`, `has ${p.weights.length} entries but samples has ${p.samples.length}`, 'speedscope schema: one weight per sample');
  }
  const stacks: number[][] = [];
  const weights: number[] = [];
  const rawWeights = p.weights as unknown[];
  (p.samples as unknown[]).forEach((s, j) => {
    if (!Array.isArray(s)) throw parseError(file, `${path}.samples[${j}]`, 'a sample must be an array of frame indices', 'speedscope schema: sampled stack');
    const stack = new Array<number>(s.length);
    for (let k = 0; k < s.length; k++) stack[s.length - 1 - k] = frameIndex(s[k], nFrames, file, `${path}.samples[${j}][${k}]`);
    stacks.push(stack);
    weights.push(num(rawWeights[j], file, `${path}.weights[${j}]`, 'a weight'));
  });
  return { ...base, kind: 'sampled', stacks, weights, rawSamples: p.samples as number[][] };
}

function readEvented(p: Record<string, unknown>, i: number, nFrames: number, file: string, base: Omit<Series, 'kind' | 'stacks' | 'weights'>): Series {
  const path = `profiles[${i}]`;
  if (!Array.isArray(p.events)) throw parseError(file, `${path}.events`, 'missing or not an array', 'speedscope schema: evented profile');
  const open: number[] = [];
  const byStack = new Map<string, number>();
  const stacks: number[][] = [];
  const weights: number[] = [];
  let last = base.startValue;
  const add = (until: number) => {
    const dt = until - last;
    if (open.length > 0 && dt > 0) {
      const stack = open.slice().reverse();
      const key = stack.join(',');
      let idx = byStack.get(key);
      if (idx === undefined) {
        idx = stacks.length;
        byStack.set(key, idx);
        stacks.push(stack);
        weights.push(0);
      }
      weights[idx]! += dt;
    }
  };
  p.events.forEach((ev, j) => {
    const ep = `${path}.events[${j}]`;
    if (!isObject(ev)) throw parseError(file, ep, 'an event must be an object', 'speedscope schema: event');
    const at = num(ev.at, file, `${ep}.at`, 'event time');
    const frame = frameIndex(ev.frame, nFrames, file, `${ep}.frame`);
    if (at < last) throw parseError(file, `${ep}.at`, `event time ${at} is before the previous event (${last}); events must be in time order`, 'speedscope schema: events ordered by time');
    add(at);
    last = at;
    if (ev.type === 'O') open.push(frame);
    else if (ev.type === 'C') {
      const top = open[open.length - 1];
      if (top === undefined) throw parseError(file, ep, `closes frame ${frame} but no frame is open`, 'speedscope schema: balanced events');
      if (top !== frame) throw parseError(file, ep, `closes frame ${frame} but the innermost open frame is ${top}`, 'speedscope schema: balanced events');
      open.pop();
    } else {
      throw parseError(file, `${ep}.type`, `must be "O" or "C", got ${JSON.stringify(ev.type)}`, 'speedscope schema: event type');
    }
  });
  if (open.length > 0) {
    // speedscope closes frames left open at endValue; do the same.
    add(Math.max(last, base.endValue));
  }
  return { ...base, kind: 'evented', stacks, weights };
}

function sameStacks(a: number[][], b: number[][]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x.length !== y.length) return false;
    for (let j = 0; j < x.length; j++) if (x[j] !== y[j]) return false;
  }
  return true;
}

/** Integer values for one series: fractional time becomes nanoseconds; rounding is reported. */
function integerValues(s: Series, file: string, warnings: Warning[]): { unit: string; values: bigint[]; factor: number } {
  const whole = s.weights.every((w) => Number.isInteger(w));
  let factor = 1;
  let unit: string = s.unit === 'none' ? 'count' : s.unit;
  if (!whole) {
    const perUnit = NANOS_PER_UNIT[s.unit];
    if (perUnit !== undefined) {
      factor = perUnit;
      unit = 'nanoseconds';
    }
  }
  let rounded = 0;
  const values = s.weights.map((w) => {
    const x = w * factor;
    const r = Math.round(x);
    if (Math.abs(r - x) > 1e-6 * Math.max(1, Math.abs(x))) rounded++;
    if (!Number.isSafeInteger(r)) {
      throw new ProfkitError(ErrorCodes.RANGE, `profile "${s.name}": value ${w} ${s.unit} is beyond 2^53 after conversion to ${unit}`, { file, rule: 'exact integer values' });
    }
    return BigInt(r);
  });
  if (factor !== 1) {
    warnings.push({ code: 'PROFKIT_W_SPEEDSCOPE_UNIT_CONVERTED', message: `profile "${s.name}": fractional ${s.unit} values converted to integer nanoseconds`, detail: { file } });
  }
  if (rounded > 0) {
    warnings.push({ code: 'PROFKIT_W_SPEEDSCOPE_ROUNDED', message: `profile "${s.name}": ${rounded} value${rounded > 1 ? 's' : ''} rounded to whole ${unit}`, detail: { file } });
  }
  return { unit, values, factor };
}

/** Converts a parsed speedscope document into a profile. */
export function speedscopeToProfile(doc: unknown, file: string): ReadResult {
  if (!isObject(doc)) throw parseError(file, '(document)', 'a speedscope file is a JSON object', 'speedscope schema: top level');
  const frames = readFrames(doc, file);
  if (!Array.isArray(doc.profiles)) throw parseError(file, 'profiles', 'missing or not an array', 'speedscope schema: profiles');
  if (doc.profiles.length === 0) throw parseError(file, 'profiles', 'the file has no profiles', 'speedscope schema: at least one profile');
  const series: Series[] = doc.profiles.map((p, i) => {
    const path = `profiles[${i}]`;
    if (!isObject(p)) throw parseError(file, path, 'a profile must be an object', 'speedscope schema: profile');
    const unit = p.unit ?? 'none';
    if (typeof unit !== 'string' || !VALUE_UNITS.includes(unit as ValueUnit)) {
      throw parseError(file, `${path}.unit`, `must be one of ${VALUE_UNITS.join(', ')}, got ${JSON.stringify(p.unit)}`, 'speedscope schema: unit');
    }
    const base = {
      name: typeof p.name === 'string' && p.name !== '' ? p.name : `profile ${i + 1}`,
      unit: unit as ValueUnit,
      startValue: p.startValue === undefined ? 0 : num(p.startValue, file, `${path}.startValue`, 'startValue'),
      endValue: p.endValue === undefined ? 0 : num(p.endValue, file, `${path}.endValue`, 'endValue'),
    };
    if (p.type === 'sampled') return readSampled(p, i, frames.length, file, base);
    if (p.type === 'evented') return readEvented(p, i, frames.length, file, base);
    throw parseError(file, `${path}.type`, `must be "sampled" or "evented", got ${JSON.stringify(p.type)}`, 'speedscope schema: profile type');
  });

  const warnings: Warning[] = [];
  // Sample type names must be distinct: suffix repeated names.
  const seen = new Map<string, number>();
  const typeNames = series.map((s) => {
    const n = (seen.get(s.name) ?? 0) + 1;
    seen.set(s.name, n);
    return n === 1 ? s.name : `${s.name} (${n})`;
  });
  const ints = series.map((s) => integerValues(s, file, warnings));

  const b = new ProfileBuilder({ sampleTypes: series.map((_, i) => ({ type: typeNames[i]!, unit: ints[i]!.unit })) });
  const locOf = new Int32Array(frames.length).fill(-1);
  const location = (fi: number): number => {
    if (locOf[fi]! < 0) {
      const f = frames[fi]!;
      const fn = b.internFunction({ name: f.name, filename: f.file });
      locOf[fi] = b.internLocation({ functionId: fn, line: f.line, column: f.col });
    }
    return locOf[fi]!;
  };
  const toIds = (stack: number[]) => stack.map(location);

  const first = series[0]!;
  const aligned = series.length > 1 && series.every((s) => s.kind === 'sampled' && sameStacks(s.rawSamples!, first.rawSamples!));
  if (aligned || series.length === 1) {
    for (let j = 0; j < first.stacks.length; j++) b.addSample(toIds(first.stacks[j]!), ints.map((v) => v.values[j]!));
  } else {
    series.forEach((s, k) => {
      for (let j = 0; j < s.stacks.length; j++) {
        const values = series.map((_, t) => (t === k ? ints[k]!.values[j]! : 0n));
        b.addSample(toIds(s.stacks[j]!), values);
      }
    });
  }

  const active = typeof doc.activeProfileIndex === 'number' && Number.isInteger(doc.activeProfileIndex) ? doc.activeProfileIndex : 0;
  if (active >= 0 && active < series.length) b.facts.default_sample_type = typeNames[active]!;
  // Duration: the longest time-unit profile span.
  let duration = 0;
  series.forEach((s) => {
    const perUnit = NANOS_PER_UNIT[s.unit];
    if (perUnit !== undefined && s.endValue > s.startValue) duration = Math.max(duration, Math.round((s.endValue - s.startValue) * perUnit));
  });
  if (duration > 0 && Number.isSafeInteger(duration)) b.facts.duration_nanos = BigInt(duration);
  const facts: Record<string, string | number> = {};
  if (typeof doc.name === 'string') facts.name = doc.name;
  if (typeof doc.exporter === 'string') facts.exporter = doc.exporter;
  facts.profileKinds = series.map((s) => s.kind).join(',');
  b.extension(ADAPTER_NAME).facts = facts;
  return { profile: b.build(), warnings, format: 'speedscope-example' };
}

/** Reads a speedscope file (the whole decompressed input; speedscope files are one JSON value). */
export async function readSpeedscope(input: ReadInput): Promise<ReadResult> {
  const bytes = await input.bytes();
  // JSON.parse needs the whole document as one string, and V8 strings stop at 2^29 - 24 chars.
  if (bytes.length > MAX_JSON_BYTES) {
    throw new ProfkitError(ErrorCodes.LIMIT, `speedscope files above ${MAX_JSON_BYTES} bytes cannot be parsed (one JSON string); this file has ${bytes.length}`, {
      file: input.fileName,
      rule: 'JSON document fits one string',
    });
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new ProfkitError(ErrorCodes.PARSE, 'not UTF-8 text', { file: input.fileName, rule: 'speedscope files are UTF-8 JSON' });
  }
  return speedscopeToProfile(parseSpeedscopeJson(text, input.fileName), input.fileName);
}
