/**
 * Builds a JSON value from tokenizer events keeping only the parts a reader uses, described by a
 * `JsonShape`: object keys not in the shape are skipped (never built, however large), and a
 * container where the shape has a scalar is kept as an empty stand-in (`{}`, or an array of the
 * same length holding nothing) so that the reader's check reports it as the whole-input reader
 * does (`describeJson` says "an object" / "an array of N") without its contents being held. So
 * the memory kept follows the fields the reader reads, not the JSON text.
 *
 * Kept strings can be interned (one copy of a URL shared by all the nodes naming it), and objects
 * of a shape marked `intern` too (the nodes of one function share one `callFrame` object).
 */

import type { JsonScalar, JsonSink, StringKeyedMap } from '@profkit/core';

/** A scalar is kept; a container in its place becomes an empty stand-in. */
export const SCALAR = 'scalar';

export type JsonShape = typeof SCALAR | ObjectShape | ArrayShape;

export interface ObjectShape {
  kind: 'object';
  /** The keys kept, each with the shape of its value; other keys are skipped. */
  fields: ReadonlyMap<string, JsonShape>;
  /** Objects equal in their kept scalar fields are one object (never mutate what is built). */
  intern?: boolean;
}

export interface ArrayShape {
  kind: 'array';
  of: JsonShape;
}

export function objectShape(fields: Record<string, JsonShape>, intern = false): ObjectShape {
  return { kind: 'object', fields: new Map(Object.entries(fields)), intern };
}

export function arrayShape(of: JsonShape): ArrayShape {
  return { kind: 'array', of };
}

/** An open container: built per its shape, or a stand-in (`shape` undefined) counting its elements. */
interface Open {
  value: Record<string, unknown> | unknown[];
  shape: ObjectShape | ArrayShape | undefined;
  /** The key this container is the value of, in its parent object. */
  key: string;
  elements: number;
}

export class PrunedValueBuilder implements JsonSink {
  private readonly stack: Open[] = [];
  /** Containers open inside a skipped value (0 when nothing is being skipped). */
  private skipDepth = 0;
  private pendingKey = '';
  result: unknown = undefined;
  done = false;

  constructor(
    private readonly shape: JsonShape,
    private readonly strings?: StringKeyedMap<string>,
    private readonly objects?: StringKeyedMap<Record<string, unknown>>,
  ) {}

  /** Containers open (0 before the value and once it is complete), skipped ones included. */
  get depth(): number {
    return this.stack.length + this.skipDepth;
  }

  startObject(): void {
    this.open(false);
  }
  startArray(): void {
    this.open(true);
  }
  endObject(): void {
    this.close();
  }
  endArray(): void {
    this.close();
  }
  key(name: string): void {
    if (this.skipDepth === 0) this.pendingKey = name;
  }
  value(v: JsonScalar): void {
    if (this.skipDepth > 0) return;
    const shape = this.nextShape();
    if (shape === undefined) return;
    this.add(typeof v === 'string' && this.strings ? this.intern(v) : v);
  }

  /**
   * The shape of the value starting now, after counting it in a stand-in parent; undefined when
   * it is skipped (a key the shape does not keep, an element of a stand-in).
   */
  private nextShape(): JsonShape | undefined {
    const parent = this.stack[this.stack.length - 1];
    if (parent === undefined) return this.done ? undefined : this.shape;
    parent.elements++;
    if (parent.shape === undefined) return undefined;
    if (parent.shape.kind === 'array') return parent.shape.of;
    return parent.shape.fields.get(this.pendingKey);
  }

  private open(isArray: boolean): void {
    if (this.skipDepth > 0) {
      this.skipDepth++;
      return;
    }
    const key = this.pendingKey;
    const shape = this.nextShape();
    const parent = this.stack[this.stack.length - 1];
    if (shape === undefined && parent !== undefined) {
      // A skipped key's value, or an element of a stand-in: its contents are not looked at.
      this.skipDepth = 1;
      return;
    }
    const kept = shape !== undefined && shape !== SCALAR && (shape.kind === 'array') === isArray ? shape : undefined;
    this.stack.push({ value: isArray ? [] : {}, shape: kept, key, elements: 0 });
  }

  private close(): void {
    if (this.skipDepth > 0) {
      this.skipDepth--;
      return;
    }
    const open = this.stack.pop()!;
    this.pendingKey = open.key;
    let value = open.value;
    if (open.shape === undefined && Array.isArray(value)) value.length = open.elements;
    // An array grown by push has room for more (17 elements after the first): copied to its size,
    // the `children` of a node cost 8 bytes per child rather than ~150 bytes each list.
    else if (Array.isArray(value)) value = value.slice();
    else if (open.shape?.kind === 'object' && open.shape.intern && this.objects) value = this.internObject(value as Record<string, unknown>);
    this.add(value);
  }

  private add(v: unknown): void {
    const parent = this.stack[this.stack.length - 1];
    if (parent === undefined) {
      this.result = v;
      this.done = true;
    } else if (Array.isArray(parent.value)) parent.value.push(v);
    // The keys set are the shape's own names (never `__proto__`): an assignment is safe, and keeps
    // the object in V8's fast mode. A repeated key keeps its last value, as with JSON.parse.
    else parent.value[this.pendingKey] = v;
  }

  private intern(s: string): string {
    const seen = this.strings!.get(s);
    if (seen !== undefined) return seen;
    this.strings!.set(s, s);
    return s;
  }

  /** One object per distinct set of scalar fields (an object holding a stand-in is kept as is). */
  private internObject(o: Record<string, unknown>): Record<string, unknown> {
    const parts: unknown[] = [];
    for (const k in o) {
      const v = o[k];
      if (typeof v === 'object' && v !== null) return o;
      parts.push(k, typeof v, v);
    }
    // One flat string (a key built with += is a tree of cons strings, ~500 bytes per call frame kept as the Map key).
    const key = parts.join('\u0000');
    const seen = this.objects!.get(key);
    if (seen !== undefined) return seen;
    this.objects!.set(key, o);
    return o;
  }
}
