/**
 * C++ demangling through `c++filt` (one process per batch of names), then simplification in the
 * modes google/pprof offers (`-symbolize=demangle=…`):
 *
 * - `none`: names stay mangled;
 * - `full`: the complete demangled name, minus GCC clone suffixes (` [clone .cold]`);
 * - `templates`: parameters (and enclosing functions' parameters) and qualifiers removed,
 *   template arguments kept: `ns::Vec<int>::push`;
 * - `default`: also template arguments removed: `ns::Vec::push`.
 *
 * The system name always stays the mangled one. Names that are not mangled but look like C++
 * (`::`) are simplified the same way; other names (C, Go, Rust v0 …) are left alone.
 */

import { runLines } from './process.js';

export type DemangleMode = 'none' | 'full' | 'templates' | 'default';
export const DEMANGLE_MODES: readonly DemangleMode[] = ['none', 'full', 'templates', 'default'];

export function isMangled(name: string): boolean {
  return /^_{1,2}Z/.test(name);
}

/**
 * Demangles the distinct names of `names` with `c++filt` (batched, bounded by a timeout).
 * Returns system name → demangled name for the mangled ones.
 */
export async function demangleAll(cxxfilt: string, names: Iterable<string>, options: { timeoutMs: number; signal?: AbortSignal }): Promise<Map<string, string>> {
  const todo = [...new Set([...names].filter(isMangled))];
  const out = new Map<string, string>();
  const BATCH = 20000;
  for (let b = 0; b < todo.length; b += BATCH) {
    const batch = todo.slice(b, b + BATCH);
    const got: string[] = [];
    await runLines(cxxfilt, [], batch.join('\n') + '\n', (l) => got.push(l), options);
    if (got.length !== batch.length) throw new Error(`c++filt answered ${got.length} lines for ${batch.length} names`);
    batch.forEach((n, i) => out.set(n, got[i]!));
  }
  // macOS-style leading underscore: retry `__Z…` names c++filt left alone without it.
  const retry = todo.filter((n) => n.startsWith('__Z') && out.get(n) === n);
  if (retry.length > 0) {
    const got: string[] = [];
    await runLines(cxxfilt, [], retry.map((n) => n.slice(1)).join('\n') + '\n', (l) => got.push(l), options);
    retry.forEach((n, i) => {
      if (got[i] !== undefined && got[i] !== n.slice(1)) out.set(n, got[i]!);
    });
  }
  return out;
}

const PROTECT: [RegExp, string][] = [
  [/\(anonymous namespace\)/g, '\u0001A'],
  [/operator\(\)/g, '\u0001B'],
  [/operator<<=/g, '\u0001C'],
  [/operator>>=/g, '\u0001D'],
  [/operator<=>/g, '\u0001E'],
  [/operator<</g, '\u0001F'],
  [/operator>>/g, '\u0001G'],
  [/operator<=/g, '\u0001H'],
  [/operator>=/g, '\u0001I'],
  [/operator->\*/g, '\u0001J'],
  [/operator->/g, '\u0001K'],
  [/operator</g, '\u0001L'],
  [/operator>/g, '\u0001M'],
  [/operator /g, '\u0001N'],
];
const RESTORE: Record<string, string> = {
  A: '(anonymous namespace)',
  B: 'operator()',
  C: 'operator<<=',
  D: 'operator>>=',
  E: 'operator<=>',
  F: 'operator<<',
  G: 'operator>>',
  H: 'operator<=',
  I: 'operator>=',
  J: 'operator->*',
  K: 'operator->',
  L: 'operator<',
  M: 'operator>',
  N: 'operator ',
};

/** Removes balanced groups opened by `open` (at any depth), keeping `{…}` groups intact. */
function removeGroups(s: string, open: string, close: string): string {
  let out = '';
  let depth = 0;
  let braces = 0;
  for (const ch of s) {
    if (depth === 0 && ch === '{') braces++;
    if (depth === 0 && ch === '}') braces = Math.max(0, braces - 1);
    if (braces > 0) {
      out += ch;
      continue;
    }
    if (ch === open) {
      depth++;
      continue;
    }
    if (ch === close && depth > 0) {
      depth--;
      continue;
    }
    if (depth === 0) out += ch;
  }
  return out;
}

/** The last top-level (outside `<>`, `()`, `{}`) space-separated token: drops a return type. */
function dropReturnType(s: string): string {
  let depth = 0;
  let cut = -1;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch === '<' || ch === '(' || ch === '{' || ch === '[') depth++;
    else if ((ch === '>' || ch === ')' || ch === '}' || ch === ']') && depth > 0) depth--;
    else if (ch === ' ' && depth === 0) cut = i;
  }
  return cut >= 0 ? s.slice(cut + 1) : s;
}

/** Simplifies a demangled C++ name for `mode` (see the module comment). */
export function simplifyDemangled(name: string, mode: DemangleMode): string {
  let s = name.replace(/( \[clone [^\]]*\])+$/g, '');
  if (mode === 'full' || mode === 'none') return s;
  for (const [re, ph] of PROTECT) s = s.replace(re, ph);
  // `operator< <T>`: the space before an operator's template arguments is not a separator.
  s = s.replace(/(\u0001[A-M]) </g, '$1\u0002<');
  s = removeGroups(s, '(', ')');
  if (mode === 'default') s = removeGroups(s, '<', '>');
  s = s.replace(/(\s+(const|volatile|&&|&))+\s*$/g, '').trim();
  s = dropReturnType(s);
  s = s.replace(/\u0001([A-N])/g, (_, k: string) => RESTORE[k]!).replace(/\u0002/g, ' ').trim();
  return s || name;
}

/** The human name for a system name under `mode`, given c++filt's output for it (if any). */
export function displayName(systemName: string, demangled: string | undefined, mode: DemangleMode): string {
  if (mode === 'none') return systemName;
  if (demangled !== undefined && demangled !== systemName) return simplifyDemangled(demangled, mode);
  if (!isMangled(systemName) && systemName.includes('::')) return simplifyDemangled(systemName, mode);
  return systemName;
}
