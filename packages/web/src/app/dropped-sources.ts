/**
 * The source files the user dropped for the source view, kept by the worker for the profile: each
 * text crosses from the page once and is split into lines once. Bounded: a file's text by the
 * page (MAX_SOURCE_FILE_BYTES, before it is read), its lines by MAX_SOURCE_FILE_LINES
 * (`sourceLinesOf`), and all of them by `maxChars`: past it the files dropped first are forgotten
 * (their listing shows no text again until they are dropped again).
 */

import type { SourceLines } from '@profkit/core';
import { linesOf, sourceLinesOf } from './engine.js';

/** Text kept, in UTF-16 code units: two of the largest file the page reads (256 MiB). */
export const MAX_DROPPED_SOURCE_CHARS = 512 << 20;

export class DroppedSources {
  /** Lines and text length of each file, by the listing's file name, in the order dropped. */
  private readonly files = new Map<string, { lines: SourceLines; chars: number }>();
  private chars = 0;

  constructor(private readonly maxChars = MAX_DROPPED_SOURCE_CHARS) {}

  get(file: string): SourceLines | undefined {
    return this.files.get(file)?.lines;
  }

  /** Keeps `text` as the source of `file` (replacing a text dropped before), the newest. */
  add(file: string, text: string): void {
    this.forget(file);
    this.files.set(file, { lines: sourceLinesOf(file, linesOf(text)), chars: text.length });
    this.chars += text.length;
    for (const oldest of this.files.keys()) {
      if (this.chars <= this.maxChars || oldest === file) break;
      this.forget(oldest);
    }
  }

  private forget(file: string): void {
    this.chars -= this.files.get(file)?.chars ?? 0;
    this.files.delete(file);
  }
}
