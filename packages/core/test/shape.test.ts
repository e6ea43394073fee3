/**
 * The hand-written shapes that replaced zod/mini (`src/shape.ts`): the adapter contract, the
 * profile tables and the config file report the same issues, with the same codes, paths and
 * messages, as the zod schemas did. The expected lists are what zod/mini 4 with its English
 * messages reported for these values (compared over 84 listed and 20,000 random values while
 * replacing it), so a message that drifts fails here.
 */

import { describe, expect, it } from 'vitest';
import {
  ExtensionsSchema,
  LocationsTableSchema,
  MetaTableSchema,
  ProfileFactsSchema,
  SamplesTableSchema,
  adapterSchema,
  checkAdapter,
  columnSchema,
  commandOptionSchema,
  type Shape,
  type ShapeIssue,
} from '../src/index.js';
import { receivedType } from '../src/shape.js';

const fn = () => 0;
const good = { apiVersion: 1, name: 'a', formats: [{ id: 'x', extensions: ['.x'], binary: true }], sniff: fn, read: fn };

/** The issues as zod listed them (path, message; code and params where they matter). */
function issues(shape: Shape<unknown>, value: unknown): Partial<ShapeIssue>[] | 'OK' {
  const r = shape.safeParse(value);
  return r.success ? 'OK' : r.error.issues.map((i) => ({ code: i.code, path: i.path, message: i.message, ...(i.params ? { params: i.params } : {}) }));
}

describe('adapter contract shape', () => {
  it('accepts a minimal adapter and extra fields, and returns the value itself', () => {
    expect(issues(adapterSchema, good)).toBe('OK');
    expect(issues(adapterSchema, { ...good, extra: 1, packageName: undefined })).toBe('OK');
    const r = adapterSchema.safeParse(good);
    expect(r.success && r.data).toBe(good);
  });

  it('names each wrong field with zod\'s message, in field order', () => {
    expect(issues(adapterSchema, { ...good, apiVersion: 1.5, name: 'bad name', formats: [{ id: '', extensions: ['x', 3], binary: 'yes', read: 1, mediaTypes: [1] }], sniff: 1, priority: 'x', description: 3 })).toEqual([
      { code: 'invalid_type', path: ['apiVersion'], message: 'Invalid input: expected int, received number' },
      { code: 'invalid_format', path: ['name'], message: 'adapter name: letters, digits, ".", "_" or "-"' },
      { code: 'invalid_type', path: ['description'], message: 'Invalid input: expected string, received number' },
      { code: 'invalid_format', path: ['formats', 0, 'id'], message: 'format id: letters, digits, ".", "_" or "-"' },
      { code: 'invalid_format', path: ['formats', 0, 'extensions', 0], message: 'extension must start with "." and contain no slash or space' },
      { code: 'invalid_type', path: ['formats', 0, 'extensions', 1], message: 'Invalid input: expected string, received number' },
      { code: 'invalid_type', path: ['formats', 0, 'binary'], message: 'Invalid input: expected boolean, received string' },
      { code: 'invalid_type', path: ['formats', 0, 'read'], message: 'Invalid input: expected boolean, received number' },
      { code: 'invalid_type', path: ['formats', 0, 'mediaTypes', 0], message: 'Invalid input: expected string, received number' },
      { code: 'custom', path: ['sniff'], message: 'expected a function' },
      { code: 'invalid_type', path: ['priority'], message: 'Invalid input: expected number, received string' },
    ]);
  });

  it('checks commands, their options and transforms (option names as record keys)', () => {
    expect(issues(adapterSchema, { ...good, commands: [{ name: 'Go', summary: 1, usage: 'u', options: { x: { type: 'num', description: 'd', short: 'ab', multiple: 1 } }, run: 2 }, 5] })).toEqual([
      { code: 'invalid_format', path: ['commands', 0, 'name'], message: 'command name: lower-case words separated by single spaces' },
      { code: 'invalid_type', path: ['commands', 0, 'summary'], message: 'Invalid input: expected string, received number' },
      { code: 'invalid_value', path: ['commands', 0, 'options', 'x', 'type'], message: 'Invalid option: expected one of "string"|"boolean"' },
      { code: 'too_big', path: ['commands', 0, 'options', 'x', 'short'], message: 'Too big: expected string to have exactly 1 characters' },
      { code: 'invalid_type', path: ['commands', 0, 'options', 'x', 'multiple'], message: 'Invalid input: expected boolean, received number' },
      { code: 'custom', path: ['commands', 0, 'run'], message: 'expected a function' },
      { code: 'invalid_type', path: ['commands', 1], message: 'Invalid input: expected object, received number' },
    ]);
    expect(issues(adapterSchema, { ...good, transforms: [{ name: 'Up', summary: 's', apply: 1, options: { 'A b': { type: 'string', description: 'd' } } }] })).toEqual([
      { code: 'invalid_format', path: ['transforms', 0, 'name'], message: 'transform name: a lower-case word (letters, digits, "-")' },
      { code: 'invalid_key', path: ['transforms', 0, 'options', 'A b'], message: 'Invalid key in record' },
      { code: 'custom', path: ['transforms', 0, 'apply'], message: 'expected a function' },
    ]);
    expect(issues(adapterSchema, { ...good, commands: [{ name: 'go', summary: '', usage: '', options: [], run: fn }] })).toEqual([
      { code: 'invalid_type', path: ['commands', 0, 'options'], message: 'Invalid input: expected record, received array' },
    ]);
    expect(issues(commandOptionSchema, { type: 'string', description: '', short: '' })).toEqual([{ code: 'too_small', path: ['short'], message: 'Too small: expected string to have exactly 1 characters' }]);
  });

  it('reports "needs read, write or load" after a bad pattern or size, not after a wrong type', () => {
    expect(issues(adapterSchema, { ...good, read: undefined })).toEqual([{ code: 'custom', path: [], message: 'an adapter needs read, write or load' }]);
    expect(issues(adapterSchema, { ...good, name: 'bad name', formats: [], read: undefined })).toEqual([
      { code: 'invalid_format', path: ['name'], message: 'adapter name: letters, digits, ".", "_" or "-"' },
      { code: 'too_small', path: ['formats'], message: 'an adapter needs at least one format' },
      { code: 'custom', path: [], message: 'an adapter needs read, write or load' },
    ]);
    expect(issues(adapterSchema, { ...good, sniff: 1, read: undefined })).toEqual([{ code: 'custom', path: ['sniff'], message: 'expected a function' }]);
    expect(issues(adapterSchema, { ...good, commands: [{ name: 'x y', summary: 1, usage: '', run: fn }], read: undefined })).toEqual([
      { code: 'invalid_type', path: ['commands', 0, 'summary'], message: 'Invalid input: expected string, received number' },
    ]);
  });

  it('names received types as zod did (null, array, NaN, Infinity, bigint, class names)', () => {
    expect(issues(adapterSchema, null)).toEqual([{ code: 'invalid_type', path: [], message: 'Invalid input: expected object, received null' }]);
    expect(issues(adapterSchema, [])).toEqual([{ code: 'invalid_type', path: [], message: 'Invalid input: expected object, received array' }]);
    expect(issues(adapterSchema, { ...good, apiVersion: NaN, priority: -Infinity })).toEqual([
      { code: 'invalid_type', path: ['apiVersion'], message: 'Invalid input: expected number, received NaN' },
      { code: 'invalid_type', path: ['priority'], message: 'Invalid input: expected number, received -Infinity' },
    ]);
    expect(issues(adapterSchema, { ...good, apiVersion: 1n })).toEqual([{ code: 'invalid_type', path: ['apiVersion'], message: 'Invalid input: expected number, received bigint' }]);
    expect(issues(adapterSchema, { ...good, apiVersion: 2 ** 60 })).toEqual([{ code: 'too_big', path: ['apiVersion'], message: 'Too big: expected int to be <=9007199254740991' }]);
    expect([receivedType(new Date()), receivedType(Object.create(null)), receivedType(new Float64Array(1)), receivedType(undefined)]).toEqual(['Date', 'object', 'Float64Array', 'undefined']);
  });

  it('checkAdapter puts the issues in its PROFKIT_E_ADAPTER_SHAPE message and detail', () => {
    let e: unknown;
    try {
      checkAdapter({ ...good, sniff: 1, formats: [{ id: 'x', extensions: ['x'], binary: true }] }, 'm.js');
    } catch (err) {
      e = err;
    }
    expect(e).toMatchObject({
      code: 'PROFKIT_E_ADAPTER_SHAPE',
      message: 'adapter a (from m.js) does not follow the adapter contract: formats.0.extensions.0: extension must start with "." and contain no slash or space; sniff: expected a function',
      detail: { rule: 'adapter contract', adapter: 'a', source: 'm.js', issues: ['formats.0.extensions.0: extension must start with "." and contain no slash or space', 'sniff: expected a function'] },
    });
  });
});

describe('profile table shapes', () => {
  it('reports column types, lengths and CSR offsets with their SCHEMA_* codes', () => {
    expect(issues(MetaTableSchema, { key: ['a'], value: ['a', 'b'], '.q': 3 })).toEqual([
      { code: 'custom', path: ['value'], message: 'column value has 2 rows but key has 1', params: { code: 'SCHEMA_COLUMN_LENGTH', column: 'value' } },
      { code: 'custom', path: ['.q'], message: 'extension column .q is not a typed array or an array of strings', params: { code: 'SCHEMA_COLUMN_TYPE', column: '.q' } },
    ]);
    // A column of the wrong type stops the length checks (they could not trust the types).
    expect(issues(MetaTableSchema, { key: [1], value: ['a', 'b'] })).toEqual([{ code: 'custom', path: ['key'], message: 'Invalid input: expected an array of strings' }]);
    expect(issues(SamplesTableSchema, { value: new BigInt64Array(2), locations: { offsets: new Uint32Array([1, 1]), location_id: new Uint32Array(2) }, '.values': [] })).toEqual([
      { code: 'custom', path: ['locations', 'offsets'], message: 'offsets column locations.offsets must start at 0, starts at 1', params: { code: 'SCHEMA_CSR_SHAPE', column: 'offsets' } },
      { code: 'custom', path: ['locations', 'offsets'], message: 'offsets column locations.offsets has 2 entries but must have rows + 1 = 3', params: { code: 'SCHEMA_CSR_SHAPE', column: 'locations.offsets' } },
    ]);
    expect(issues(SamplesTableSchema, { value: new Float64Array(1), locations: 5, '.values': [1] })).toEqual([
      { code: 'invalid_type', path: ['value'], message: 'Invalid input: expected BigInt64Array, received Float64Array' },
      { code: 'invalid_type', path: ['locations'], message: 'Invalid input: expected object, received number' },
      { code: 'invalid_type', path: ['.values', 0], message: 'Invalid input: expected BigInt64Array, received number' },
    ]);
    const missing = issues(LocationsTableSchema, { location_id: new Uint32Array(1) });
    expect(missing !== 'OK' && missing.map((i) => i.message)[0]).toBe('Invalid input: expected Uint32Array, received undefined');
    expect(issues(columnSchema, ['a', 1])).toEqual([{ code: 'invalid_union', path: [], message: 'Invalid input' }]);
  });

  it('checks facts (int64 range) and format extensions', () => {
    expect(issues(ProfileFactsSchema, { period: 1, time_nanos: 1n << 64n, duration_nanos: -(1n << 64n), comments: [1], drop_frames: 1, keep_frames: '', default_sample_type: '', doc_url: '', period_type: { type: 1 } })).toEqual([
      { code: 'invalid_type', path: ['period_type', 'type'], message: 'Invalid input: expected string, received number' },
      { code: 'invalid_type', path: ['period_type', 'unit'], message: 'Invalid input: expected string, received undefined' },
      { code: 'invalid_type', path: ['period'], message: 'Invalid input: expected bigint, received number' },
      { code: 'too_big', path: ['time_nanos'], message: 'Too big: expected bigint to be <=9223372036854775807' },
      { code: 'too_small', path: ['duration_nanos'], message: 'Too small: expected bigint to be >=-9223372036854775808' },
      { code: 'custom', path: ['comments'], message: 'Invalid input: expected an array of strings' },
      { code: 'invalid_type', path: ['drop_frames'], message: 'Invalid input: expected string, received number' },
    ]);
    const factMessage = 'Invalid input: expected JSON-compatible data (bigint allowed), finite numbers, no cycles, at most 64 levels';
    const plain = 'Invalid input: a format extension must be a plain object';
    expect(issues(ExtensionsSchema, { '': {}, a: [], b: { facts: { x: NaN }, samples: { s: 5 }, tables: { t: { a: new Uint8Array(1), b: new Uint8Array(2) }, u: 3 } }, d: null, e: new Map() })).toEqual([
      { code: 'invalid_key', path: [''], message: 'Invalid key in record' },
      { code: 'custom', path: ['a'], message: plain },
      { code: 'custom', path: ['b', 'facts', 'x'], message: factMessage },
      { code: 'invalid_union', path: ['b', 'samples', 's'], message: 'Invalid input' },
      { code: 'custom', path: ['b', 'tables', 't', 'b'], message: 'column b has 2 rows but a has 1', params: { code: 'SCHEMA_COLUMN_LENGTH', column: 'b' } },
      { code: 'invalid_type', path: ['b', 'tables', 'u'], message: 'Invalid input: expected record, received number' },
      { code: 'custom', path: ['d'], message: plain },
      { code: 'custom', path: ['e'], message: plain },
    ]);
    expect(issues(ExtensionsSchema, { a: { facts: { x: 1n, y: [1, 'a', null, { z: true }] }, samples: { s: ['a'] }, tables: { t: { a: new Uint8Array(2), b: ['x', 'y'] } } } })).toBe('OK');
  });
});
