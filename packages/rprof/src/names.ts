/**
 * What R's function names mean beyond their text: which of them `go tool pprof` would rewrite, and
 * which name a call rather than a function.
 */

/**
 * The model's placeholder for an empty pprof string (R's `read_pprof` uses it too): the pprof
 * writer writes it as `""`, the pprof reader reads `""` as it, so it survives a round trip.
 */
const EMPTY_SYSTEM_NAME = '<?>';

/**
 * Removes the nested `start … end` pairs from `name`, as pprof's `removeMatching` does. pprof
 * cuts each pair out and rescans from the cut, which costs a copy of the name per pair (hours
 * for a 16 Mi-character name of many pairs); this one pass keeps the parts between the pairs.
 */
function removeMatching(name: string, start: string, end: string): string {
  let nesting = 0;
  let first = 0;
  let kept = '';
  let keptFrom = 0;
  for (let i = 0; i < name.length; i++) {
    const c = name[i];
    if (c === start) {
      nesting++;
      if (nesting === 1) first = i;
    } else if (c === end) {
      nesting--;
      if (nesting < 0) break; // mismatch: pprof gives up (with the pairs before it removed)
      if (nesting === 0) {
        kept += name.slice(keptFrom, first);
        keptFrom = i + 1;
      }
    }
  }
  // An unclosed pair stays, as in pprof.
  return kept + name.slice(keptFrom);
}

/**
 * Whether `go tool pprof` would show a different name than `name` for a function whose name and
 * system name are both `name`. pprof "demangles" every such function on load
 * (`internal/symbolizer.Demangle`): names its C++ demangler accepts (`_Z…`, `_GLOBAL_…`; `_R…` in
 * newer versions for Rust) are replaced, and names that look demangled already (any of `<>[]`
 * or `::`, but not `.<`) lose their `(…)` and `<…>` parts — so R's `<Anonymous>` becomes empty,
 * which pprof prints as `<unknown>`. A function whose system name differs from its name is left
 * alone.
 */
export function pprofRewritesName(name: string): boolean {
  if (name.startsWith('_Z') || name.startsWith('_GLOBAL_') || name.startsWith('_R')) return true;
  if (name.includes('.<')) return false;
  if (!/[<>[\]]/.test(name) && !name.includes('::')) return false;
  return removeMatching(removeMatching(name, '(', ')'), '<', '>') !== name;
}

/**
 * The system name of an R function called `name`. R has no mangled names, so it is the name
 * itself, except for the names pprof would rewrite: those get an empty system name (`<?>` in the
 * model), which makes pprof show the name as R wrote it. Other tools (and the Rprof writer) use
 * the name, so nothing is lost.
 */
export function rSystemName(name: string): string {
  return pprofRewritesName(name) ? EMPTY_SYSTEM_NAME : name;
}

/**
 * Names Rprof gives to calls, not to functions, so that frames of one such name are in general
 * different functions: `<Anonymous>` (a call whose function is not a symbol: `(function(x) …)(1)`,
 * `do.call(f, …)`, `Map`, the methods package's dispatch), `FUN` (the apply family's parameter)
 * and `.local` (the body of every S4 method with extra arguments). A frame without srcref must not
 * borrow a file from other frames of such a name.
 */
export const CALL_NAMES: ReadonlySet<string> = new Set(['<Anonymous>', 'FUN', '.local']);
