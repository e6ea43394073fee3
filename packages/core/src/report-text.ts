/**
 * The bound on a text report's size (`maxReportBytes`, limits.ts). A report prints some things
 * once per use: a location's inline frames once per sample that has it (traces, folded), a
 * function's name once per location or node. A small crafted profile can therefore ask for text
 * far larger than itself (a 40 KB profile, 2,000 samples over one location of 2,000 inline
 * lines, is 1 GB of `traces`). Each report counts its text as it makes it, and stops with a
 * `PROFKIT_E_LIMIT` error naming `maxReportBytes` instead of using the memory, or failing with
 * a bare RangeError when the text passes the longest string JavaScript makes.
 */

import { utf8Length } from '#native';
import { ErrorCodes, ProfkitError } from './errors.js';
import { limitError, limitValue, type ReadLimits } from './limits.js';

/** The limits a text report honours. */
export type ReportLimits = Pick<ReadLimits, 'maxReportBytes'>;

/** The longest string V8 makes on 64-bit hosts (Node 20: 2^29 - 24 UTF-16 code units). */
export const MAX_STRING_LENGTH = 2 ** 29 - 24;

/** Counts a report's text, piece by piece, against `maxReportBytes`. */
export class ReportTextBudget {
  /** The effective `maxReportBytes`. */
  readonly max: number;
  private bytes = 0;
  private units = 0;

  /**
   * @param report the report's name, for the message (`traces`, `raw`…).
   * @param asOneString the text is joined into one string (then it must also fit a JS string);
   *   false when it is streamed piece by piece.
   */
  constructor(
    readonly report: string,
    limits: ReportLimits | undefined,
    private readonly asOneString: boolean,
  ) {
    this.max = limitValue(limits, 'maxReportBytes');
  }

  /**
   * Checks, before a piece of `units` UTF-16 code units is made, that it fits (its UTF-8 bytes are
   * at least as many): a piece joined from many names is refused before it costs its memory.
   */
  reserve(units: number): void {
    if (this.bytes + units > this.max) {
      throw limitError('maxReportBytes', `the text of the ${this.report} report (over ${this.bytes + units} bytes with the next piece)`, this.max, { rule: 'report text size' });
    }
    if (this.asOneString && this.units + units > MAX_STRING_LENGTH) this.tooLongForAString(this.units + units);
    // One piece is one string, whatever the limit: a single line that long cannot be made.
    if (units > MAX_STRING_LENGTH) {
      throw new ProfkitError(
        ErrorCodes.LIMIT,
        `one line of the ${this.report} report (${units} UTF-16 code units) exceeds the longest string JavaScript makes (${MAX_STRING_LENGTH})`,
        { rule: 'longest JavaScript string', option: 'maxReportBytes', limit: MAX_STRING_LENGTH },
      );
    }
  }

  /** Returns `text` after counting it; throws when the report's text is over the limit. */
  take(text: string): string {
    this.count(utf8Length(text));
    if (this.asOneString) {
      this.units += text.length;
      if (this.units > MAX_STRING_LENGTH) this.tooLongForAString(this.units);
    }
    return text;
  }

  /** Counts `bytes` of text made as UTF-8 (no string); throws when the report's text is over the limit. */
  count(bytes: number): void {
    this.bytes += bytes;
    if (this.bytes > this.max) {
      throw limitError('maxReportBytes', `the text of the ${this.report} report (over ${this.bytes} bytes so far)`, this.max, { rule: 'report text size' });
    }
  }

  private tooLongForAString(units: number): never {
    throw new ProfkitError(
      ErrorCodes.LIMIT,
      `the text of the ${this.report} report (over ${units} UTF-16 code units) exceeds the longest string JavaScript makes (${MAX_STRING_LENGTH}); write it piece by piece (the streamed form of the report) instead`,
      { rule: 'longest JavaScript string', option: 'maxReportBytes', limit: MAX_STRING_LENGTH },
    );
  }
}

/** `pieces` joined into one string, counted against `maxReportBytes` as they come. */
export function joinReportText(report: string, pieces: Iterable<string>, limits: ReportLimits | undefined): string {
  const budget = new ReportTextBudget(report, limits, true);
  const out: string[] = [];
  for (const piece of pieces) out.push(budget.take(piece));
  return out.join('');
}

/** `pieces` as they come, counted against `maxReportBytes`: for a report written as it is made. */
export function* boundedReportText(report: string, pieces: Iterable<string>, limits: ReportLimits | undefined): Generator<string> {
  const budget = new ReportTextBudget(report, limits, false);
  for (const piece of pieces) yield budget.take(piece);
}
