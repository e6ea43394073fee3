/**
 * The page's regular expressions: the flame search (`q=`) and the filters (focus, ignore, hide,
 * show, tagfocus, tagignore), in pprof's syntax (Go's RE2: `(?i)`, `\pL`, `(?U)`; no
 * backreferences or look-around), matched by re2js in time linear in the text. They come from a
 * link anyone can craft, and JavaScript's backtracking `RegExp` never returns on `(a+)+$` against
 * a long name, hanging the tab (the search runs on the page's thread). Imported statically by the
 * page and by the worker: each bundle carries re2js (~150 KB minified) once.
 */

import * as re2js from 're2js';
import { goPatternCompiler } from '@profkit/core';

/** Compiles a pattern of the page for `option` (`search`, `focus`, …); invalid: `PROFKIT_E_USAGE` naming it. */
export const compileViewPattern = goPatternCompiler(re2js);
