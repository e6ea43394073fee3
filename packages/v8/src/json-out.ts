/**
 * JSON output in chunks of about 1 MiB, so that writing a large profile never holds one huge
 * string (V8 strings stop at 2^29 characters) and, when the registry streams, never the whole
 * output either.
 */

import { concatBytes } from '@profkit/core';

const CHUNK_CHARS = 1 << 20;

export class JsonChunks {
  private parts: string[] = [];
  private length = 0;
  private readonly encoder = new TextEncoder();
  readonly chunks: Uint8Array[] = [];

  push(text: string): void {
    this.parts.push(text);
    this.length += text.length;
    if (this.length >= CHUNK_CHARS) this.flush();
  }

  flush(): void {
    if (this.parts.length === 0) return;
    this.chunks.push(this.encoder.encode(this.parts.join('')));
    this.parts = [];
    this.length = 0;
  }

  /** The output: one buffer, or the chunks as an async iterable when the caller streams. */
  result(streaming: boolean | undefined): Uint8Array | AsyncIterable<Uint8Array> {
    this.flush();
    const chunks = this.chunks;
    if (streaming) {
      return (async function* () {
        for (const c of chunks) yield c;
      })();
    }
    return concatBytes(chunks);
  }
}

/** A call frame as V8 writes it (same key order). */
export function callFrameJson(cf: { functionName: string; scriptId: string; url: string; lineNumber: number; columnNumber: number }): string {
  return `{"functionName":${JSON.stringify(cf.functionName)},"scriptId":${JSON.stringify(cf.scriptId)},"url":${JSON.stringify(cf.url)},"lineNumber":${cf.lineNumber},"columnNumber":${cf.columnNumber}}`;
}
