/**
 * Web platform types that profkit's main entries name in their API: `Blob`, `ReadableStream`,
 * `AbortSignal`, `URLSearchParams`.
 *
 * No ES lib declares them: the DOM lib does, and so does @types/node. Naming the globals in a
 * main entry's types would make every consumer compile with one of the two (a worker, Deno, or a
 * library built with `"lib": ["es2022"]` could not), so the API names these instead:
 *
 * - inputs (what a caller hands in) are structural: any object with the members core uses, which
 *   the platform's `Blob`, `File` and `ReadableStream` are;
 * - objects core hands out (the `signal` of a context) have the platform's own type when its lib
 *   declares one (`PlatformAbortSignal` is the DOM's or Node's `AbortSignal` there), else the
 *   structural part.
 *
 * tools/release-check/test/types.test.ts compiles the main entries with and without these libs.
 */

/** A stream of `T` read through a reader, as a web `ReadableStream<T>` is. */
export interface ReadableStreamLike<T> {
  getReader(): { read(): Promise<{ done: false; value: T } | { done: true; value?: T }>; releaseLock(): void };
}

/** A `Blob` (or `File`): its size, and its bytes whole or as a stream. */
export interface BlobLike {
  readonly size: number;
  arrayBuffer(): Promise<ArrayBuffer>;
  slice(start?: number, end?: number): BlobLike;
  stream(): ReadableStreamLike<Uint8Array>;
}

/** The part of an `AbortSignal` that works the same everywhere. */
export interface AbortSignalLike {
  readonly aborted: boolean;
  readonly reason: unknown;
  throwIfAborted(): void;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** The platform's `AbortSignal` where its lib declares one (DOM, @types/node), else `AbortSignalLike`. */
export type PlatformAbortSignal = typeof globalThis extends { AbortSignal: { prototype: infer S } } ? S : AbortSignalLike;

/** The part of `URLSearchParams` that works the same everywhere. */
export interface URLSearchParamsLike {
  get(name: string): string | null;
  getAll(name: string): string[];
  has(name: string): boolean;
  forEach(callback: (value: string, key: string) => void): void;
}

/** The platform's `URLSearchParams` where its lib declares one (DOM, @types/node), else `URLSearchParamsLike`. */
export type PlatformURLSearchParams = typeof globalThis extends { URLSearchParams: { prototype: infer P } } ? P : URLSearchParamsLike;

/** True for a `Blob`/`File` (or an object with their members; not a `ReadableStream`). */
export function isBlobLike(v: unknown): v is BlobLike {
  if (typeof v !== 'object' || v === null) return false;
  const b = v as Partial<Record<keyof BlobLike, unknown>>;
  return typeof b.size === 'number' && typeof b.arrayBuffer === 'function' && typeof b.slice === 'function' && typeof b.stream === 'function';
}
