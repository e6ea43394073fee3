/**
 * The source files the worker keeps for the profile's source view: those the user dropped (each
 * text crosses from the page once and is split into lines once) and those `profkit web` served
 * (fetched once). Bounded: a file's text by the page (MAX_SOURCE_FILE_BYTES, before it is read)
 * or the server, its lines by MAX_SOURCE_FILE_LINES (`sourceLinesOf`), and all of them by
 * `maxChars`: past it the files kept first are forgotten (a dropped one's listing shows no text
 * again until it is dropped again; a served one is fetched again when a listing needs it).
 */

import type { SourceLines } from '@profkit/core';
import { linesOf, sourceLinesOf } from './engine.js';

/** Text kept, in UTF-16 code units: two of the largest file the page reads (256 MiB). */
export const MAX_KEPT_SOURCE_CHARS = 512 << 20;

/** The characters of a file's lines (with their line ends), as kept. */
export function charsOf(lines: SourceLines): number {
  return 'lines' in lines ? lines.lines.reduce((n, line) => n + line.length + 1, 0) : lines.error.length;
}

export class KeptSources {
  /** Lines and text length of each file, by the listing's file name, in the order kept. */
  private readonly files = new Map<string, { lines: SourceLines; chars: number }>();
  private chars = 0;

  constructor(private readonly maxChars = MAX_KEPT_SOURCE_CHARS) {}

  get(file: string): SourceLines | undefined {
    return this.files.get(file)?.lines;
  }

  /** Keeps `lines` (`chars` characters) as the source of `file` (replacing what it kept for it), the newest. */
  keep(file: string, lines: SourceLines, chars: number = charsOf(lines)): void {
    this.forget(file);
    this.files.set(file, { lines, chars });
    this.chars += chars;
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

/** The source files the user dropped: their text, split into lines once. */
export class DroppedSources extends KeptSources {
  /** Keeps `text` as the source of `file` (replacing a text dropped before), the newest. */
  add(file: string, text: string): void {
    this.keep(file, sourceLinesOf(file, linesOf(text)), text.length);
  }
}
