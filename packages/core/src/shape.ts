/**
 * Small structural checks ("shapes") for what core receives from elsewhere: adapter objects,
 * transforms, the config file and the profile tables' columns.
 *
 * core used zod/mini for this. zod cost ~32 KB of every browser bundle (a third of the budget of
 * core + pprof) and ~70 ms of module loading at every CLI start, for a few dozen checks that fit
 * in this file. The issues keep zod's form and zod's English messages (`code`, `path`,
 * `message`, `params`; "Invalid input: expected string, received number"), so error messages and
 * `PROFKIT_E_*` details read as they did.
 *
 * One rule of zod's is kept because messages depend on it: a wrong type stops the checks of the
 * objects around it (a refinement never sees a column of the wrong type), while a failed pattern,
 * a size or a refinement does not (so "bad name" and "no read or write" are both reported).
 */

/** One problem found, in zod's issue form. */
export interface ShapeIssue {
  code: 'invalid_type' | 'invalid_format' | 'invalid_value' | 'too_small' | 'too_big' | 'invalid_key' | 'invalid_union' | 'unrecognized_keys' | 'custom';
  /** Where in the value: keys and array indexes from the top. */
  path: (string | number)[];
  message: string;
  /** What a refinement attached (the profile tables: `{ code: SCHEMA_*, column }`). */
  params?: Record<string, unknown>;
}

export type ShapeResult<T> = { success: true; data: T } | { success: false; error: { issues: ShapeIssue[] } };

export interface Shape<T> {
  /**
   * Appends the issues of `value` (found at `path`) to `issues`. Returns false when one of them is
   * a wrong type, which stops the refinements of the objects around it.
   */
  readonly run: (value: unknown, path: (string | number)[], issues: ShapeIssue[]) => boolean;
  /** `undefined` (a missing field) is accepted. */
  readonly optional: boolean;
  /** Checks `value`; `data` is `value` itself (nothing is copied or stripped). */
  safeParse(value: unknown): ShapeResult<T>;
  /** Phantom member: the type a passing value has. */
  readonly _type?: T;
}

/** The type a shape accepts. */
export type Infer<S> = S extends Shape<infer T> ? T : never;

type Run = Shape<unknown>['run'];

function makeShape<T>(run: Run, optional = false): Shape<T> {
  return {
    run,
    optional,
    safeParse(value) {
      const issues: ShapeIssue[] = [];
      run(value, [], issues);
      return issues.length === 0 ? { success: true, data: value as T } : { success: false, error: { issues } };
    },
  };
}

/** zod's name of the type of `v` in messages (`null`, `array`, `NaN`, `Infinity`, a class name, `typeof`). */
export function receivedType(v: unknown): string {
  if (typeof v === 'number') return Number.isFinite(v) ? 'number' : Number.isNaN(v) ? 'NaN' : String(v);
  if (typeof v !== 'object') return typeof v;
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (Object.getPrototypeOf(v) !== Object.prototype && 'constructor' in v && typeof v.constructor === 'function' && v.constructor.name) return v.constructor.name;
  return 'object';
}

function wrongType(issues: ShapeIssue[], path: (string | number)[], expected: string, value: unknown): false {
  issues.push({ code: 'invalid_type', path, message: `Invalid input: expected ${expected}, received ${receivedType(value)}` });
  return false;
}

/** A string, optionally matching `pattern` (else `message`, which does not stop other checks). */
export function string(pattern?: RegExp, message?: string): Shape<string> {
  return makeShape((v, path, issues) => {
    if (typeof v !== 'string') return wrongType(issues, path, 'string', v);
    if (pattern && !pattern.test(v)) issues.push({ code: 'invalid_format', path, message: message ?? `Invalid string: must match pattern ${String(pattern)}` });
    return true;
  });
}

/** A string of exactly `n` characters. */
export function stringOfLength(n: number): Shape<string> {
  return makeShape((v, path, issues) => {
    if (typeof v !== 'string') return wrongType(issues, path, 'string', v);
    if (v.length !== n) issues.push({ code: v.length > n ? 'too_big' : 'too_small', path, message: `Too ${v.length > n ? 'big' : 'small'}: expected string to have exactly ${n} characters` });
    return true;
  });
}

export function boolean(): Shape<boolean> {
  return makeShape((v, path, issues) => typeof v === 'boolean' || wrongType(issues, path, 'boolean', v));
}

/** A finite number. */
export function number(): Shape<number> {
  return makeShape((v, path, issues) => (typeof v === 'number' && Number.isFinite(v)) || wrongType(issues, path, 'number', v));
}

/** A safe integer. */
export function int(): Shape<number> {
  return makeShape((v, path, issues) => {
    if (typeof v !== 'number' || !Number.isFinite(v)) return wrongType(issues, path, 'number', v);
    if (!Number.isInteger(v)) return wrongType(issues, path, 'int', v);
    if (v > Number.MAX_SAFE_INTEGER) issues.push({ code: 'too_big', path, message: `Too big: expected int to be <=${Number.MAX_SAFE_INTEGER}` });
    else if (v < Number.MIN_SAFE_INTEGER) issues.push({ code: 'too_small', path, message: `Too small: expected int to be >=${Number.MIN_SAFE_INTEGER}` });
    return true;
  });
}

/** A bigint in `[min, max]`. */
export function bigintIn(min: bigint, max: bigint): Shape<bigint> {
  return makeShape((v, path, issues) => {
    if (typeof v !== 'bigint') return wrongType(issues, path, 'bigint', v);
    if (v < min) issues.push({ code: 'too_small', path, message: `Too small: expected bigint to be >=${min}` });
    if (v > max) issues.push({ code: 'too_big', path, message: `Too big: expected bigint to be <=${max}` });
    return true;
  });
}

/** One of `values` (strings). */
export function oneOf<const V extends string>(values: readonly V[]): Shape<V> {
  const expected = values.map((x) => JSON.stringify(x)).join('|');
  return makeShape((v, path, issues) => {
    if ((values as readonly unknown[]).includes(v)) return true;
    issues.push({ code: 'invalid_value', path, message: `Invalid option: expected one of ${expected}` });
    return false;
  });
}

/** An instance of `cls` (the typed-array columns). */
export function instanceOf<T>(cls: abstract new (...args: never[]) => T): Shape<T> {
  return makeShape((v, path, issues) => v instanceof cls || wrongType(issues, path, cls.name, v));
}

/** Anything `test` accepts; `message` otherwise (a wrong type: stops the checks around it). */
export function custom<T>(test: (v: unknown) => boolean, message: string): Shape<T> {
  return makeShape((v, path, issues) => {
    if (test(v)) return true;
    issues.push({ code: 'custom', path, message });
    return false;
  });
}

/** Anything. */
export function unknown(): Shape<unknown> {
  return makeShape(() => true);
}

/** `shape`, or `undefined`. */
export function optional<T>(shape: Shape<T>): Shape<T | undefined> {
  return makeShape(shape.run, true);
}

/** An array of `element`s, with at least `min.length` of them when given (else `min.message`). */
export function array<T>(element: Shape<T>, min?: { length: number; message: string }): Shape<T[]> {
  return makeShape((v, path, issues) => {
    if (!Array.isArray(v)) return wrongType(issues, path, 'array', v);
    let ok = true;
    for (let i = 0; i < v.length; i++) if (!element.run(v[i], [...path, i], issues)) ok = false;
    if (min && v.length < min.length) issues.push({ code: 'too_small', path, message: min.message });
    return ok;
  });
}

/** Any object (not null, not an array), as zod's object check: a class instance passes. */
function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** An object made of `{}` or `Object.create(null)` (zod's test for records). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (!isObject(v)) return false;
  const ctor = (v as { constructor?: unknown }).constructor;
  if (ctor === undefined || typeof ctor !== 'function') return true;
  const proto = (ctor as { prototype?: unknown }).prototype;
  return isObject(proto) && Object.prototype.hasOwnProperty.call(proto, 'isPrototypeOf');
}

type Fields = Record<string, Shape<unknown>>;
type ObjectOf<F extends Fields> = { [K in keyof F]: Infer<F[K]> };

/**
 * An object with `fields` (in their order; optional ones may be missing). Other keys are allowed,
 * unless `strict` (then they are reported, without stopping other checks).
 */
export function object<F extends Fields>(fields: F, options: { strict?: boolean } = {}): Shape<ObjectOf<F>> {
  const names = Object.keys(fields);
  return makeShape((v, path, issues) => {
    if (!isObject(v)) return wrongType(issues, path, 'object', v);
    let ok = true;
    for (const name of names) {
      const field = fields[name]!;
      const value = v[name];
      if (value === undefined && field.optional) continue;
      if (!field.run(value, [...path, name], issues)) ok = false;
    }
    if (options.strict) {
      const extra = Object.keys(v).filter((k) => !Object.prototype.hasOwnProperty.call(fields, k));
      if (extra.length > 0) issues.push({ code: 'unrecognized_keys', path, message: `Unrecognized key${extra.length > 1 ? 's' : ''}: ${extra.map((k) => JSON.stringify(k)).join(', ')}` });
    }
    return ok;
  });
}

/** A plain object whose keys pass `key` ("Invalid key in record" otherwise) and values `value`. */
export function record<T>(value: Shape<T>, key?: Shape<string>): Shape<Record<string, T>> {
  return makeShape((v, path, issues) => {
    if (!isPlainObject(v)) return wrongType(issues, path, 'record', v);
    let ok = true;
    for (const k of Object.keys(v)) {
      if (key && !key.safeParse(k).success) {
        issues.push({ code: 'invalid_key', path: [...path, k], message: 'Invalid key in record' });
        ok = false;
        continue;
      }
      if (!value.run(v[k], [...path, k], issues)) ok = false;
    }
    return ok;
  });
}

/** The first of `options` that `value` passes; "Invalid input" when none does. */
export function union<T>(options: readonly Shape<T>[]): Shape<T> {
  return makeShape((v, path, issues) => {
    for (const o of options) {
      const found: ShapeIssue[] = [];
      o.run(v, path, found);
      if (found.length === 0) return true;
    }
    issues.push({ code: 'invalid_union', path, message: 'Invalid input' });
    return false;
  });
}

/** `first`, then `second` when `first` found nothing. */
export function pipe<T>(first: Shape<unknown>, second: Shape<T>): Shape<T> {
  return makeShape((v, path, issues) => {
    const before = issues.length;
    const ok = first.run(v, path, issues);
    return issues.length > before ? ok : second.run(v, path, issues);
  });
}

/** Reports a refinement's issue at `path` (relative to the refined value). */
export type AddIssue = (issue: { path?: (string | number)[]; message: string; params?: Record<string, unknown> }) => void;

/**
 * `shape`, then `refinement` when `shape` found no wrong type (so it may trust the types). Its
 * issues do not stop other checks.
 */
export function refine<T>(shape: Shape<T>, refinement: (value: T, addIssue: AddIssue) => void): Shape<T> {
  return makeShape((v, path, issues) => {
    if (!shape.run(v, path, issues)) return false;
    refinement(v as T, (i) => issues.push({ code: 'custom', path: [...path, ...(i.path ?? [])], message: i.message, ...(i.params ? { params: i.params } : {}) }));
    return true;
  }, shape.optional);
}
