/**
 * JSON parsing and field checks shared by the readers of JSON formats (`.cpuprofile`,
 * `.heapprofile`, speedscope). Every
 * error names the file, where (a JSON path such as `nodes[12].children[3]`, or the line of a
 * syntax error) and the rule of the format that was broken.
 */

import { ErrorCodes, ProfkitError } from './errors.js';
import { checkLimit, type ReadLimits } from './limits.js';
import { jsonSyntaxErrorAt } from './sniff-util.js';
import { utf8Decoder } from '#native';

/** Largest input handed to `JSON.parse` (V8's string length limit, in bytes of ASCII). */
export const MAX_JSON_BYTES = 2 ** 29 - 24;

/** Where errors are reported: the file, and the format's name for the `rule`. */
export interface JsonSource {
  file: string;
  /** e.g. `.cpuprofile`; prefixes every rule. */
  format: string;
}

export function schemaError(src: JsonSource, path: string, message: string, rule: string): ProfkitError {
  return new ProfkitError(ErrorCodes.PARSE, `${path}: ${message}`, { file: src.file, path, rule: `${src.format}: ${rule}` });
}

/**
 * Decodes and parses the whole input (already bounded by `maxDecompressedBytes`/`maxInputBytes`);
 * syntax errors carry the line, a cut file is TRUNCATED.
 */
export function parseJsonBytes(bytes: Uint8Array, src: JsonSource): unknown {
  if (bytes.length > MAX_JSON_BYTES) {
    throw new ProfkitError(ErrorCodes.LIMIT, `the JSON input (${bytes.length} bytes) is larger than a JavaScript string can hold (${MAX_JSON_BYTES} bytes)`, {
      file: src.file,
      rule: 'JSON.parse input size',
    });
  }
  const text = utf8Decoder(bytes)(0, bytes.length);
  if (text.trim() === '') throw new ProfkitError(ErrorCodes.EMPTY_INPUT, 'the input is empty', { file: src.file, rule: `${src.format} files are JSON` });
  try {
    return JSON.parse(text);
  } catch (e) {
    const at = jsonSyntaxErrorAt(text);
    if (at && at.offset >= text.trimEnd().length) {
      throw new ProfkitError(ErrorCodes.TRUNCATED, `the JSON ends early (expected ${at.expected})`, { file: src.file, offset: at.offset, rule: `${src.format} files are JSON` });
    }
    throw new ProfkitError(ErrorCodes.PARSE, at ? `not valid JSON: expected ${at.expected} at column ${at.column}` : `not valid JSON: ${(e as Error).message}`, {
      file: src.file,
      line: at?.line,
      rule: `${src.format} files are JSON`,
    });
  }
}

export function isJsonObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function objectAt(src: JsonSource, v: unknown, path: string): Record<string, unknown> {
  if (!isJsonObject(v)) throw schemaError(src, path, `expected an object, got ${describeJson(v)}`, 'structure');
  return v;
}

export function arrayAt(src: JsonSource, v: unknown, path: string): unknown[] {
  if (!Array.isArray(v)) throw schemaError(src, path, `expected an array, got ${describeJson(v)}`, 'structure');
  return v;
}

/** A finite number (V8 writes times as numbers of microseconds). */
export function numberAt(src: JsonSource, v: unknown, path: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw schemaError(src, path, `expected a finite number, got ${describeJson(v)}`, 'numbers are finite');
  return v;
}

/** A whole number ≥ `min` (ids, counts, sizes, line numbers). */
export function integerAt(src: JsonSource, v: unknown, path: string, min: number): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) {
    throw schemaError(src, path, `expected a whole number ≥ ${min}, got ${describeJson(v)}`, `whole numbers ≥ ${min}`);
  }
  return v;
}

/** A string no longer than `maxStringLength`. */
export function stringAt(src: JsonSource, v: unknown, path: string, limits: ReadLimits | undefined): string {
  if (typeof v !== 'string') throw schemaError(src, path, `expected a string, got ${describeJson(v)}`, 'strings');
  checkLimit(limits, 'maxStringLength', v.length, `string length at ${path}`, { file: src.file, path });
  return v;
}

/** A short description of a JSON value for messages (never the whole value). */
export function describeJson(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return `an array of ${v.length}`;
  if (typeof v === 'object') return 'an object';
  const s = JSON.stringify(v);
  return s.length > 40 ? s.slice(0, 37) + '...' : s;
}
