/**
 * Regular expressions given to operations as strings, in pprof's (Go RE2) spelling as far as
 * JavaScript can follow it: a leading flag group `(?i)`, `(?s)`, `(?m)` (or a combination) becomes
 * JavaScript flags, `(?P<name>` becomes `(?<name>`, `\A` / `\z` become `^` / `$`. Everything else
 * is JavaScript `RegExp` syntax. An invalid expression is a `PROFKIT_E_USAGE` error naming the
 * option.
 */

import { ErrorCodes, ProfkitError } from '../errors.js';

/** A pattern: a string in pprof spelling or a ready `RegExp` (used as is, without the `g`/`y` flags). */
export type Pattern = string | RegExp;

/** Rewrites `(?P<`, `\A` and `\z` outside escapes (an escaped backslash is left alone). */
function translateGoSyntax(src: string): string {
  let out = '';
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === '\\' && i + 1 < src.length) {
      const d = src[i + 1]!;
      out += d === 'A' ? '^' : d === 'z' ? '$' : c + d;
      i++;
    } else if (c === '(' && src.startsWith('(?P<', i)) {
      out += '(?<';
      i += 3;
    } else out += c;
  }
  return out;
}

/**
 * Compiles `pattern` for `option`. With `fullMatch`, a string pattern `x` is compiled as
 * `^(x)$` (pprof's drop_frames/keep_frames rule); `RegExp` values are never rewritten.
 */
export function compilePattern(pattern: Pattern, option: string, fullMatch = false): RegExp {
  if (pattern instanceof RegExp) {
    return pattern.global || pattern.sticky ? new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, '')) : pattern;
  }
  let src = pattern;
  let flags = '';
  const m = /^\(\?([ism]+)\)/.exec(src);
  if (m) {
    flags = [...new Set(m[1]!.split(''))].join('');
    src = src.slice(m[0].length);
  }
  src = translateGoSyntax(src);
  if (fullMatch) src = `^(${src})$`;
  try {
    return new RegExp(src, flags);
  } catch (e) {
    throw new ProfkitError(ErrorCodes.USAGE, `invalid regular expression for ${option}: ${JSON.stringify(pattern)} (${(e as Error).message})`, {
      option,
      rule: 'the option must be a valid regular expression',
    });
  }
}

/** A compiled pattern as operations use it. */
export interface PatternMatcher {
  /** Whether the pattern matches somewhere in `s` (Go's `MatchString`). */
  test(s: string): boolean;
}

/**
 * Compiles the string patterns of an option (`focus`, `tagFocus`, …), what the filter operations
 * take as `compile`: by default they use `compilePattern` (JavaScript `RegExp`); a viewer that
 * runs patterns from a link or a page passes `goPatternCompiler(re2js)` (linear time). With
 * `fullMatch` the pattern is matched against the whole text. Throws `PROFKIT_E_USAGE` naming
 * `option` for an invalid expression.
 */
export type PatternCompiler = (pattern: string, option: string, fullMatch?: boolean) => PatternMatcher;

/** The part of the `re2js` module `goPatternCompiler` uses (`import * as re2js from 're2js'`). */
export type Re2jsModule = Pick<typeof import('re2js'), 'RE2JS'>;

/**
 * A `PatternCompiler` with re2js, a port of Go's RE2: exactly Go's syntax and semantics (pprof
 * compiles its patterns with Go's `regexp`: `(?i)`, `(?U)`, `\pL`, no backreferences or
 * look-around), and matching in time linear in the input, so a hostile pattern cannot hang a
 * view the way a backtracking `RegExp` can (`(a+)+$` against a long name). The module is the
 * caller's (imported statically by a bundle that wants it synchronously, or `compileGoPattern`'s
 * dynamic import), so core's main entry does not carry re2js's ~150 KB.
 */
export function goPatternCompiler(re2js: Re2jsModule): PatternCompiler {
  return (pattern, option, fullMatch = false) => {
    const src = fullMatch ? `^(${pattern})$` : pattern;
    try {
      return re2js.RE2JS.compile(src);
    } catch (e) {
      throw new ProfkitError(ErrorCodes.USAGE, `invalid regular expression for ${option}: ${JSON.stringify(pattern)} (${(e as Error).message})`, {
        option,
        rule: 'the option must be a valid (Go RE2) regular expression',
      });
    }
  };
}

/**
 * Compiles a pattern that comes from a profile (`drop_frames`, `keep_frames`) with re2js (see
 * `goPatternCompiler`), loaded on first use (most profiles have no patterns). With `fullMatch`
 * the pattern is wrapped `^(…)$` as pprof does. An invalid expression (for Go) is a
 * `PROFKIT_E_USAGE` error naming `option`.
 */
export async function compileGoPattern(pattern: string, option: string, fullMatch = false): Promise<PatternMatcher> {
  return goPatternCompiler(await import('re2js'))(pattern, option, fullMatch);
}

/**
 * What a filter operation matches with: a string pattern through `compile` when the caller gave
 * one, `compilePattern` otherwise (and for `RegExp` values, used as they are).
 */
export function compileMatcher(pattern: Pattern, option: string, compile: PatternCompiler | undefined, fullMatch = false): PatternMatcher {
  return typeof pattern === 'string' && compile ? compile(pattern, option, fullMatch) : compilePattern(pattern, option, fullMatch);
}
