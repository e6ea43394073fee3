/**
 * The page's regular expressions: the flame search (`q=`) and the filters (focus, ignore, hide,
 * show, tagfocus, tagignore), in pprof's syntax (Go's RE2: `(?i)`, `\pL`, `(?U)`; no
 * backreferences or look-around), matched by re2js in time linear in the text. They come from a
 * link anyone can craft, and JavaScript's backtracking `RegExp` never returns on `(a+)+$` against
 * a long name, hanging the tab (the search runs on the page's thread). Imported statically by the
 * page and by the worker: each bundle carries re2js (~150 KB minified) once.
 *
 * Linear is still costly for a large program: re2js's program (its instructions) grows with
 * counted repeats (`[^a]{1000}` is 1,002 instructions in 10 characters) and a match costs up to
 * program size × text length (`\pL{1000}`: ~110 ms per 2,000-character name; 400 repeats of
 * `[^a]{1000}`, 4 KB: 400,002 instructions, 0.6 s and ~100 MB to compile). So what a view's
 * patterns may be is capped (`PATTERN_LIMITS`), far above what anyone types.
 */

import * as re2js from 're2js';
import { ErrorCodes, ProfkitError, goPatternCompiler, type PatternCompiler, type PatternMatcher } from '@profkit/core';

/** The caps on a view's patterns (docs/web.md); past one, `PROFKIT_E_LIMIT` naming the option. */
export const PATTERN_LIMITS = {
  /** UTF-16 code units of one option's value (a tag filter's whole comma-separated list). */
  maxPatternLength: 4 * 1024,
  /** UTF-16 code units of all of a view's filters together (the flame search, on the page, counts on its own). */
  maxTotalPatternLength: 16 * 1024,
  /** re2js program size (instructions) of one compiled expression: a 4 KiB literal is 4,002. */
  maxPatternProgram: 5_000,
  /** re2js program size of all of a view's compiled filter expressions together (~100 bytes each; the search on its own). */
  maxTotalPatternProgram: 20_000,
} as const;

const compileGo = goPatternCompiler(re2js);

function patternLimitError(option: string, what: string, value: number, max: number): ProfkitError {
  return new ProfkitError(ErrorCodes.LIMIT, `the ${option} pattern: ${what} (${value}) exceeds the limit of ${max} of the page`, {
    option,
    rule: `a view's patterns are at most ${PATTERN_LIMITS.maxPatternLength} characters each, ${PATTERN_LIMITS.maxTotalPatternLength} together, and compile to at most ${PATTERN_LIMITS.maxPatternProgram} instructions each, ${PATTERN_LIMITS.maxTotalPatternProgram} together`,
    limit: max,
  });
}

/**
 * Checks the length caps of one view's pattern options (`{ search: 'q', tagFocus: 'a,b' }`)
 * before anything is compiled: the first option too long, or the one that makes the total too
 * long, is a `PROFKIT_E_LIMIT` error naming it.
 */
export function checkPatternLengths(options: Record<string, string | undefined>): void {
  let total = 0;
  for (const [option, pattern] of Object.entries(options)) {
    if (pattern === undefined) continue;
    if (pattern.length > PATTERN_LIMITS.maxPatternLength) throw patternLimitError(option, 'length', pattern.length, PATTERN_LIMITS.maxPatternLength);
    total += pattern.length;
    if (total > PATTERN_LIMITS.maxTotalPatternLength) throw patternLimitError(option, 'length of all patterns of the view', total, PATTERN_LIMITS.maxTotalPatternLength);
  }
}

/**
 * A compiler for one view's patterns, in pprof's syntax with re2js; invalid: `PROFKIT_E_USAGE`
 * naming the option. It holds the view's budget: each expression it compiles (every piece of a
 * comma-separated tag filter is one) counts its program size against `maxPatternProgram` and,
 * with the others, `maxTotalPatternProgram`; past either, `PROFKIT_E_LIMIT` naming the option.
 * An expression asked for again is the compiled one (counted once).
 */
export function viewPatternCompiler(): PatternCompiler {
  const compiled = new Map<string, PatternMatcher>();
  let totalProgram = 0;
  return (pattern, option, fullMatch = false) => {
    const key = `${fullMatch ? 'F' : 'P'}${pattern}`;
    const known = compiled.get(key);
    if (known) return known;
    // A piece longer than the cap can only come from a caller that skipped checkPatternLengths.
    if (pattern.length > PATTERN_LIMITS.maxPatternLength) throw patternLimitError(option, 'length', pattern.length, PATTERN_LIMITS.maxPatternLength);
    // Refused before compiling when its counts alone pass the cap: 409 × `[^a]{1000}` (4 KiB) took
    // 0.9 s and ~80 MB to compile into 409,002 instructions only to be refused.
    const repeats = countedRepeatTotal(pattern);
    if (repeats > PATTERN_LIMITS.maxPatternProgram) throw patternLimitError(option, 'size with its counted repeats ({n,m}), at least', repeats, PATTERN_LIMITS.maxPatternProgram);
    const re = compileGo(pattern, option, fullMatch) as re2js.RE2JS;
    const program = re.programSize();
    if (program > PATTERN_LIMITS.maxPatternProgram) throw patternLimitError(option, 'compiled program size', program, PATTERN_LIMITS.maxPatternProgram);
    totalProgram += program;
    if (totalProgram > PATTERN_LIMITS.maxTotalPatternProgram) throw patternLimitError(option, 'compiled program size of all patterns of the view', totalProgram, PATTERN_LIMITS.maxTotalPatternProgram);
    compiled.set(key, re);
    return re;
  };
}

const COUNTED_REPEAT = /\{(\d+)(?:,(\d*))?\}/y;
const GROUP_HEAD = /\?[^:)>]*[:)>]/y;

/**
 * What a pattern's counted repeats make of it, in copies of its atoms (`x{n}`, `x{n,}`: n copies
 * of x; `x{n,m}`: m): re2js compiles a repeat into that many copies of what it repeats, a group
 * with all it holds, so `([^a]{1000 times}){1000}` counts 1,000,000 (it compiled to 1,002,002
 * instructions: 2 s, ~160 MB). Braces escaped, in a class or in `\Q…\E` are literal text; a count
 * past Go's 1,000 is left to re2js, which refuses it as invalid. A scan of the text: what is
 * refused before re2js builds the program. Stops counting once past `maxPatternProgram`.
 */
export function countedRepeatTotal(pattern: string): number {
  const outer: number[] = []; // the size of each group around this one, up to its `(`
  let size = 0; // of the group being read, up to here
  let last = 0; // of the atom a repeat here would repeat
  for (let i = 0; i < pattern.length && size <= PATTERN_LIMITS.maxPatternProgram; i++) {
    const c = pattern[i];
    let atom = 1;
    if (c === '\\') {
      if (pattern[i + 1] === 'Q') {
        const end = pattern.indexOf('\\E', i + 2);
        const text = (end < 0 ? pattern.length : end) - (i + 2);
        i = end < 0 ? pattern.length : end + 1;
        if (text === 0) continue; // `\Q\E` is nothing: a repeat after it repeats what is before
        size += text - 1; // a repeat after `\Q…\E` repeats its last character
      } else if ('xpP'.includes(pattern[i + 1] ?? '') && pattern[i + 2] === '{') {
        const end = pattern.indexOf('}', i + 3); // `\x{41}`, `\p{Greek}`: one atom
        i = end < 0 ? pattern.length : end;
      } else i += pattern[i + 1] === 'x' ? 3 : 'pP'.includes(pattern[i + 1] ?? '') ? 2 : 1; // `\x41`, `\pL`: one atom
    } else if (c === '[') {
      i = classEnd(pattern, i);
    } else if (c === '(') {
      // `(?i)` sets flags (no group); `(?i:`, `(?P<name>`, `(?<name>` open one: not atoms.
      GROUP_HEAD.lastIndex = i + 1;
      const head = GROUP_HEAD.exec(pattern);
      if (head) {
        i += head[0].length;
        if (head[0].endsWith(')')) continue;
      }
      outer.push(size);
      size = 0;
      continue;
    } else if (c === ')') {
      atom = size + 1; // an empty group too: `(){1000}` is 3,002 instructions
      size = outer.pop() ?? 0;
    } else if (c === '|') {
      last = 0;
      continue;
    } else if (c === '*' || c === '+' || c === '?') {
      atom = last + 1; // what it repeats, and a `{n}` after a flag group `(?i)` repeats it all again
      size -= last;
    } else if (c === '{') {
      COUNTED_REPEAT.lastIndex = i;
      const m = COUNTED_REPEAT.exec(pattern);
      const count = m ? Number(m[2] ? m[2] : m[1]) : 0;
      if (m && count <= 1000) {
        i += m[0].length - 1;
        size += last * (Math.max(count, 1) - 1);
        last *= Math.max(count, 1);
        continue;
      }
    }
    size += atom;
    last = atom;
  }
  return size + outer.reduce((a, b) => a + b, 0);
}

/** The index of the `]` closing the class that opens at `open` (Go's syntax: `[]a]`, `[^]a]`, `[[:alpha:]]`, escapes). */
function classEnd(pattern: string, open: number): number {
  let i = open + 1;
  if (pattern[i] === '^') i++;
  if (pattern[i] === ']') i++;
  for (; i < pattern.length; i++) {
    if (pattern[i] === ']') return i;
    if (pattern[i] === '\\') i++;
    else if (pattern.startsWith('[:', i)) {
      const end = pattern.indexOf(':]', i + 2);
      if (end >= 0) i = end + 1;
    }
  }
  return pattern.length;
}

/**
 * Matcher steps the flame search may spend on one name. re2js's cost of a match is at most its
 * program size × the characters it reads (a step per instruction per character, its DFA building
 * no more), so a name is searched in its first `MAX_SEARCH_STEPS / program size` characters
 * (`searchedLength`): `\pL{1000}` four times and `[0-9]` (4,003 instructions) over one
 * 20,000-character name held the page 2.4 s in one match, and reads 261 characters now. A typical
 * search (20–100 instructions) reads 10,000–50,000 characters: all of any real name. A search for
 * a plain text (`literalOf`) costs a substring search, and reads every name whole.
 */
export const MAX_SEARCH_STEPS = 2 ** 20;

/**
 * How many leading characters (UTF-16 code units) of `name` a search whose program is
 * `programSize` instructions reads: all of it, or `MAX_SEARCH_STEPS / programSize` (one fewer
 * rather than splitting a surrogate pair). The rest is not searched: matched as if the name
 * ended there (docs/web.md).
 */
export function searchedLength(name: string, programSize: number): number {
  const most = Math.floor(MAX_SEARCH_STEPS / Math.max(programSize, 1));
  if (name.length <= most) return name.length;
  const last = name.charCodeAt(most - 1);
  return last >= 0xd800 && last <= 0xdbff ? most - 1 : most;
}

/**
 * The matcher of `pattern` for the first `searchedLength` characters of a name read in part: the
 * pattern and one character more, so that a match counts only when it ends before the cut, where
 * it sees the name's next character as it would in the whole name. Tested as it was, the cut was
 * the name's end: `push_back$` or `\bnew\b` marked a name that went on past the cut.
 */
export function cutNameMatcher(pattern: string): re2js.RE2JS {
  return re2js.RE2JS.compile(`(?:${pattern}${inOpenQuote(pattern) ? '\\E' : ''})(?s:.)`);
}

/** Whether `pattern` ends inside a `\Q…` without its `\E` (quoted to the end: the group's `)` would be text). */
function inOpenQuote(pattern: string): boolean {
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] !== '\\') continue;
    if (pattern[i + 1] !== 'Q') i++;
    else {
      const end = pattern.indexOf('\\E', i + 2);
      if (end < 0) return true;
      i = end + 1;
    }
  }
  return false;
}

/** Characters with a meaning in Go's syntax (RE2), literal when escaped: `\.` is a dot. */
const SPECIAL = /[\\.+*?()|[\]{}^$]/;
/** A pattern of plain characters and escaped punctuation, without surrogates (code units and code points then match alike). */
const PLAIN_TEXT = /^(?:[^\\.+*?()|[\]{}^$\ud800-\udfff]|\\[!-/:-@[-`{-~])*$/;

/**
 * The text `pattern` matches exactly, when it is one (`main\.run`, a name pasted into the
 * search: `main.run`), else undefined. Such a pattern matches a name that contains the text (Go's
 * `MatchString`): `includes`, whatever the name's length, where re2js's program would be a step
 * per character of the text and the name read only in part (`searchedLength`).
 */
export function literalOf(pattern: string): string | undefined {
  if (!PLAIN_TEXT.test(pattern)) return undefined;
  return SPECIAL.test(pattern) ? pattern.replace(/\\(.)/g, '$1') : pattern;
}

/** Compiles one pattern of the page for `option` (`search`, …) within the caps of a view of its own. */
export function compileViewPattern(pattern: string, option: string, fullMatch = false): PatternMatcher & { programSize(): number } {
  checkPatternLengths({ [option]: pattern });
  return viewPatternCompiler()(pattern, option, fullMatch) as re2js.RE2JS;
}
