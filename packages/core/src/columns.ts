/**
 * Growable typed-array columns, for readers and builders that do not know row counts up front.
 * They double their capacity as they grow and hand out an exact-length copy with `finish()`.
 */

import { ErrorCodes, ProfkitError } from './errors.js';

type TypedArrayCtor<T> = { new (length: number): T };

abstract class Growable<T extends { length: number; set(a: ArrayLike<any>, o?: number): void; subarray(b: number, e: number): T; slice(b: number, e: number): T }, V> {
  protected data: T;
  length = 0;
  constructor(
    private readonly ctor: TypedArrayCtor<T>,
    initialCapacity = 16,
  ) {
    this.data = new ctor(Math.max(1, initialCapacity));
  }
  protected grow(minCapacity: number): void {
    let cap = this.data.length * 2;
    while (cap < minCapacity) cap *= 2;
    const next = new this.ctor(cap);
    next.set(this.data);
    this.data = next;
  }
  abstract push(v: V): void;
  /** Exact-length copy of the pushed values. */
  finish(): T {
    return this.data.slice(0, this.length);
  }
  /** A view of the pushed values (shares memory; invalid after the next push). */
  view(): T {
    return this.data.subarray(0, this.length);
  }
}

export class GrowableUint32 extends Growable<Uint32Array, number> {
  constructor(initialCapacity?: number) {
    super(Uint32Array, initialCapacity);
  }
  push(v: number): void {
    if (this.length === this.data.length) this.grow(this.length + 1);
    this.data[this.length++] = v;
  }
  pushAll(values: ArrayLike<number>): void {
    const n = values.length;
    if (this.length + n > this.data.length) this.grow(this.length + n);
    this.data.set(values, this.length);
    this.length += n;
  }
  get(i: number): number {
    return this.data[i]!;
  }
}

export class GrowableFloat64 extends Growable<Float64Array, number> {
  constructor(initialCapacity?: number) {
    super(Float64Array, initialCapacity);
  }
  push(v: number): void {
    if (this.length === this.data.length) this.grow(this.length + 1);
    this.data[this.length++] = v;
  }
  get(i: number): number {
    return this.data[i]!;
  }
}

export class GrowableUint8 extends Growable<Uint8Array, number> {
  constructor(initialCapacity?: number) {
    super(Uint8Array, initialCapacity);
  }
  push(v: number): void {
    if (this.length === this.data.length) this.grow(this.length + 1);
    this.data[this.length++] = v;
  }
  get(i: number): number {
    return this.data[i]!;
  }
}

export class GrowableBigInt64 extends Growable<BigInt64Array, bigint> {
  constructor(initialCapacity?: number) {
    super(BigInt64Array, initialCapacity);
  }
  push(v: bigint): void {
    if (this.length === this.data.length) this.grow(this.length + 1);
    this.data[this.length++] = v;
  }
  get(i: number): bigint {
    return this.data[i]!;
  }
}

export class GrowableBigUint64 extends Growable<BigUint64Array, bigint> {
  constructor(initialCapacity?: number) {
    super(BigUint64Array, initialCapacity);
  }
  push(v: bigint): void {
    if (this.length === this.data.length) this.grow(this.length + 1);
    this.data[this.length++] = v;
  }
  get(i: number): bigint {
    return this.data[i]!;
  }
}

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;
const UINT64_MAX = (1n << 64n) - 1n;
export const MAX_ID = 0xffffffff;

/** Converts a JS number or bigint to an int64 bigint; rejects fractions and overflow. */
export function toInt64(v: number | bigint, what = 'value'): bigint {
  if (typeof v === 'bigint') {
    if (v < INT64_MIN || v > INT64_MAX) throw new ProfkitError(ErrorCodes.RANGE, `${what} ${v} does not fit in int64`);
    return v;
  }
  if (!Number.isInteger(v)) throw new ProfkitError(ErrorCodes.RANGE, `${what} ${v} is not an integer`);
  if (!Number.isSafeInteger(v)) throw new ProfkitError(ErrorCodes.RANGE, `${what} ${v} is beyond 2^53 as a number; pass a bigint`);
  return BigInt(v);
}

/** Converts to a uint64 bigint; rejects negatives, fractions and overflow. */
export function toUint64(v: number | bigint, what = 'value'): bigint {
  const b = typeof v === 'bigint' ? v : toInt64(v, what);
  if (b < 0n || b > UINT64_MAX) throw new ProfkitError(ErrorCodes.RANGE, `${what} ${v} does not fit in uint64`);
  return b;
}

/** Checks an id fits the model's 1..2^32-1 range (0 allowed where `allowZero`). */
export function checkId(v: number, what = 'id', allowZero = false): number {
  if (!Number.isInteger(v) || v < (allowZero ? 0 : 1) || v > MAX_ID) {
    throw new ProfkitError(ErrorCodes.RANGE, `${what} ${v} is not an integer in ${allowZero ? 0 : 1}..${MAX_ID}`);
  }
  return v;
}

/** Checks a line/column/start-line number is a safe non-negative integer. */
export function checkLine(v: number | bigint, what = 'line'): number {
  const n = typeof v === 'bigint' ? Number(v) : v;
  if (typeof v === 'bigint' && BigInt(n) !== v) throw new ProfkitError(ErrorCodes.RANGE, `${what} ${v} is beyond 2^53`);
  if (!Number.isSafeInteger(n)) throw new ProfkitError(ErrorCodes.RANGE, `${what} ${v} is not a safe integer`);
  return n;
}

/** Copies `n` leading elements of a typed array or array. */
export function sliceColumn<T extends { slice(b: number, e: number): T }>(c: T, n: number): T {
  return c.slice(0, n);
}

/** Picks the rows `index` of a column, in that order. */
export function takeRows<C extends import('./model.js').Column>(column: C, index: ArrayLike<number>): C {
  const n = index.length;
  if (Array.isArray(column)) {
    const out: string[] = new Array(n);
    for (let i = 0; i < n; i++) out[i] = column[index[i]!]!;
    return out as C;
  }
  const ctor = (column as unknown as { constructor: new (n: number) => C }).constructor;
  const out = new ctor(n) as unknown as { [i: number]: number | bigint };
  const src = column as unknown as { [i: number]: number | bigint };
  for (let i = 0; i < n; i++) out[i] = src[index[i]!]!;
  return out as unknown as C;
}
