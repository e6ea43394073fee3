/**
 * The grammar of one Rprof line, as R's profiler writes it (R `src/main/eval.c`):
 *
 * ```
 * header  := ("memory profiling: " | "GC profiling: " | "line profiling: ")* "sample.interval=" digits
 * file    := "#File " digits ": " path
 * trace   := [":" digits ":" digits ":" digits ":" digits ":"] ['"<GC>" '] [srcref " "] (name-token [" " srcref] " ")*
 * name    := '"' chars '"'          (chars may contain spaces and '"', e.g. x[["a"]])
 * srcref  := digits "#" digits      (file number as written in #File, line)
 * ```
 *
 * A srcref belongs to the name that FOLLOWS it: it is a line in that function's body (the
 * leading one is the current line of the innermost frame; the others are call sites of the
 * previous, inner, function). A name ends at the first `" ` that is followed by the end of the
 * line, another `"`, or a srcref followed by a space.
 */

import { ErrorCodes, ProfkitError, limitError } from '@profkit/core';

export const HEADER_RE = /^((?:memory profiling: |GC profiling: |line profiling: )*)sample\.interval=(\d+)[ \t]*$/;
export const FILE_RE = /^#File (\d+): (.*)$/;

export interface Header {
  memory: boolean;
  gc: boolean;
  line: boolean;
  intervalUs: number;
  text: string;
}

export function parseHeader(text: string): Header | undefined {
  const m = HEADER_RE.exec(text);
  if (!m) return undefined;
  const flags = m[1]!;
  return {
    memory: flags.includes('memory profiling: '),
    gc: flags.includes('GC profiling: '),
    line: flags.includes('line profiling: '),
    intervalUs: Number(m[2]!),
    text,
  };
}

/** Result of parsing a trace line; arrays are reused between calls (copy what you keep). */
export interface TraceLine {
  hasMemory: boolean;
  small: number;
  big: number;
  nodes: number;
  dups: number;
  gc: boolean;
  /** Frame names, innermost first. */
  names: string[];
  /** File number of each frame's srcref (0 = none). */
  fileNos: number[];
  /** Line of each frame's srcref (0 = none). */
  lineNos: number[];
  /** Set when the line ends in a cut-off frame or a dangling srcref (dropped). */
  truncated: string | undefined;
}

export function newTraceLine(): TraceLine {
  return { hasMemory: false, small: 0, big: 0, nodes: 0, dups: 0, gc: false, names: [], fileNos: [], lineNos: [], truncated: undefined };
}

const QUOTE = 34;
const SPACE = 32;
const HASH = 35;
const COLON = 58;

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/**
 * Length of `digits#digits ` at `i` (including the space), or of a cut-off srcref that runs to
 * the end of the line (`5`, `5#`, `5#1`), or 0.
 */
function srcrefSpaceAt(s: string, i: number): number {
  const n = s.length;
  let j = i;
  while (j < n && isDigit(s.charCodeAt(j))) j++;
  if (j === i) return 0;
  if (j === n) return j - i;
  if (s.charCodeAt(j) !== HASH) return 0;
  const k = j + 1;
  j = k;
  while (j < n && isDigit(s.charCodeAt(j))) j++;
  if (j === n) return j - i;
  if (j === k || s.charCodeAt(j) !== SPACE) return 0;
  return j + 1 - i;
}

function parseError(message: string, file: string | undefined, line: number, column: number, rule: string): ProfkitError {
  return new ProfkitError(ErrorCodes.PARSE, `${message} (line ${line}, column ${column + 1})`, { file, line, column: column + 1, rule });
}

function toInt(s: string, what: string, file: string | undefined, line: number, column: number): number {
  const v = Number(s);
  if (!Number.isSafeInteger(v)) throw parseError(`${what} ${s} is not a safe integer`, file, line, column, 'Rprof numbers are integers below 2^53');
  return v;
}

/**
 * Parses one trace line into `out`. Throws `PROFKIT_E_PARSE` for content R cannot have written;
 * reports a cut-off end of line (a name without its closing `" `, a srcref without the name it
 * belongs to) in `out.truncated` and drops that part. Stops with the `maxFramesPerStack` limit
 * error at frame `maxFrames + 1`, so a huge line costs no more than a legal one (the frames of a
 * line cost about 40 bytes each until they are interned).
 */
export function parseTraceLine(s: string, out: TraceLine, file: string | undefined, lineNo: number, maxFrames = Infinity): void {
  out.hasMemory = false;
  out.gc = false;
  out.names.length = 0;
  out.fileNos.length = 0;
  out.lineNos.length = 0;
  out.truncated = undefined;
  const n = s.length;
  let i = 0;
  if (n > 0 && s.charCodeAt(0) === COLON) {
    const m = /^:(\d+):(\d+):(\d+):(\d+):/.exec(s);
    if (!m) {
      if (/^[:0-9]*$/.test(s) && s.split(':').length <= 6) {
        out.truncated = 'memory prefix cut off';
        return;
      }
      throw parseError('malformed memory prefix, expected :small:big:nodes:dups:', file, lineNo, 0, 'memory prefix');
    }
    out.hasMemory = true;
    out.small = toInt(m[1]!, 'small vector heap', file, lineNo, 1);
    out.big = toInt(m[2]!, 'large vector heap', file, lineNo, 1);
    out.nodes = toInt(m[3]!, 'nodes', file, lineNo, 1);
    out.dups = toInt(m[4]!, 'duplications', file, lineNo, 1);
    i = m[0].length;
  }
  if (s.startsWith('"<GC>" ', i)) {
    out.gc = true;
    i += 7;
  } else if (i + 6 === n && s.endsWith('"<GC>"')) {
    out.gc = true;
    out.truncated = 'missing space after "<GC>"';
    return;
  }
  let pendingFile = 0;
  let pendingLine = 0;
  let pendingAt = -1;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c === QUOTE) {
      // Find the closing quote: `"` + space followed by end, `"` or `digits#digits `.
      let j = i + 1;
      let end = -1;
      for (;;) {
        j = s.indexOf('" ', j);
        if (j === -1) break;
        const after = j + 2;
        if (after === n || s.charCodeAt(after) === QUOTE || srcrefSpaceAt(s, after) > 0) {
          end = j;
          break;
        }
        j += 1;
      }
      if (end === -1) {
        const bad = s.indexOf('" ', i + 1);
        if (bad !== -1) {
          throw parseError(`unexpected text after the function name ${JSON.stringify(s.slice(i, bad + 1))}`, file, lineNo, bad + 2, 'a name is followed by a space and another name, a srcref or the end of the line');
        }
        out.truncated = s.charCodeAt(n - 1) === QUOTE && n - 1 > i ? 'last frame has no trailing space' : 'last frame name cut off';
        break;
      }
      const name = s.slice(i + 1, end);
      if (name.length === 0) throw parseError('empty function name ""', file, lineNo, i, 'function names are non-empty');
      if (out.names.length >= maxFrames) {
        throw limitError('maxFramesPerStack', `line ${lineNo}: a stack of more than ${maxFrames} frames`, maxFrames, { file, line: lineNo, column: i + 1 });
      }
      out.names.push(name);
      out.fileNos.push(pendingFile);
      out.lineNos.push(pendingLine);
      pendingFile = 0;
      pendingLine = 0;
      pendingAt = -1;
      i = end + 2;
    } else if (isDigit(c)) {
      if (pendingAt >= 0) throw parseError('two source references in a row', file, lineNo, i, 'a srcref is followed by a function name');
      let j = i;
      while (j < n && isDigit(s.charCodeAt(j))) j++;
      if (j === n) {
        out.truncated = 'source reference cut off';
        break;
      }
      if (s.charCodeAt(j) !== HASH) throw parseError(`unexpected character ${JSON.stringify(s[j])} in source reference`, file, lineNo, j, 'srcref := file#line');
      const k = j + 1;
      let e = k;
      while (e < n && isDigit(s.charCodeAt(e))) e++;
      if (e === k || e === n) {
        out.truncated = 'source reference cut off';
        break;
      }
      if (s.charCodeAt(e) !== SPACE) throw parseError(`unexpected character ${JSON.stringify(s[e])} after source reference`, file, lineNo, e, 'srcref := file#line');
      pendingFile = toInt(s.slice(i, j), 'file number', file, lineNo, i);
      pendingLine = toInt(s.slice(k, e), 'line number', file, lineNo, k);
      if (pendingFile === 0) throw parseError('file number 0 in source reference', file, lineNo, i, '#File numbers start at 1');
      pendingAt = i;
      i = e + 1;
    } else {
      throw parseError(`unexpected character ${JSON.stringify(s[i])}, expected a quoted function name or a source reference`, file, lineNo, i, 'trace line grammar');
    }
  }
  if (pendingAt >= 0 && out.truncated === undefined) out.truncated = 'source reference without the function it belongs to';
}
