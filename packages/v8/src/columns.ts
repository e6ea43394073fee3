/** Growing columns of numbers, for the readers that keep a large JSON array's values as they stream in. */

/**
 * A growing array of numbers (doubling, so each number is copied at most once on average). Held
 * as 32-bit integers while every number is one (node ids, V8's integral µs deltas: half the memory
 * of doubles), as doubles from the first number that is not.
 */
export class NumberColumn {
  private data: Int32Array | Float64Array = new Int32Array(1024);
  length = 0;

  push(v: number): void {
    if (this.length === this.data.length) this.data = this.copy(this.data instanceof Int32Array ? Int32Array : Float64Array, this.data.length * 2);
    if (this.data instanceof Int32Array && ((v | 0) !== v || Object.is(v, -0))) this.data = this.copy(Float64Array, this.data.length);
    this.data[this.length++] = v;
  }

  private copy(type: Int32ArrayConstructor | Float64ArrayConstructor, capacity: number): Int32Array | Float64Array {
    const grown = new type(capacity);
    grown.set(this.data);
    return grown;
  }

  at(i: number): number {
    return this.data[i]!;
  }

  /** The numbers (a view: copying out the doubling slack would cost more memory at once than it frees). */
  values(): Int32Array | Float64Array {
    return this.data.subarray(0, this.length);
  }
}

/**
 * A column of JSON values that are nearly always numbers (the fields of `.heapprofile` samples):
 * numbers in a `NumberColumn` (4 or 8 bytes each), an absent value as NaN (JSON has no NaN), any
 * other value (kept for the error message that its check gives) beside them.
 */
export class ValueColumn {
  private readonly numbers = new NumberColumn();
  private readonly others = new Map<number, unknown>();

  get length(): number {
    return this.numbers.length;
  }

  push(v: unknown): void {
    if (typeof v === 'number') this.numbers.push(v);
    else {
      if (v !== undefined) this.others.set(this.numbers.length, v);
      this.numbers.push(NaN);
    }
  }

  at(i: number): unknown {
    const v = this.numbers.at(i);
    if (v === v) return v; // not NaN
    return this.others.get(i);
  }
}
