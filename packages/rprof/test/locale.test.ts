/**
 * Ids and orders never depend on the process locale. The reader (and the summary, folded and
 * Rprof writers) run in child processes under several locales whose collation orders the names
 * below differently (Turkish dotted/dotless i, German and Swedish ä, Czech "ch", case order);
 * every child must produce exactly what the default (C locale) child and this process produce:
 * the same function ids for the same names, the same location ids, the same samples, and the
 * same bytes out of the writers.
 *
 * Node takes its default ICU locale from LC_ALL/LC_COLLATE/LANG even when the OS has no such
 * locale installed; each child reports the locale it got, and the test checks that the name set
 * really sorts differently under it, so the comparison cannot pass vacuously.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readRprofBytes, summarizeRprof, writeFolded, writeRprofText } from '../src/index.js';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'index.js');

/** Names whose order differs between locales (and from code-unit order). */
const NAMES = ['ı', 'I', 'i', 'İ', 'ä', 'a', 'z', 'Z', 'ch', 'h', 'c', 'Straße', 'strasse', 'é', 'e', 'ö', 'o'];

/** A line-profiling Rprof file using those names as functions and in file names. */
function rprofText(): string {
  const files = ['/src/ä.R', '/src/İ.R', '/src/z.R', '/src/ch.R'];
  const out = ['line profiling: memory profiling: sample.interval=20000', ...files.map((f, i) => `#File ${i + 1}: ${f}`)];
  for (let s = 0; s < 40; s++) {
    const frames: string[] = [];
    for (let d = 0; d < 4; d++) {
      const k = (s * 7 + d * 5) % NAMES.length;
      frames.push(`${((s + d) % files.length) + 1}#${(s * 3 + d) % 50 + 1} "${NAMES[k]}"`);
    }
    out.push(`:${1000 + s}:${2000 + 3 * s}:${s * 100}:${s}:${frames.join(' ')} "${NAMES[s % NAMES.length]}" `);
  }
  return out.join('\n') + '\n';
}

/** What the child prints: tables with ids, the summary in its iteration order, and the writers' bytes. */
const CHILD = `
import { readRprofBytes, summarizeRprof, writeFolded, writeRprofText } from ${JSON.stringify('file://' + dist)};
let input = '';
process.stdin.setEncoding('utf8');
for await (const c of process.stdin) input += c;
const { profile: p } = readRprofBytes(new TextEncoder().encode(input), { fileName: 'x.out' });
const s = summarizeRprof(p);
const names = JSON.parse(process.argv[1]);
process.stdout.write(JSON.stringify({
  locale: Intl.Collator().resolvedOptions().locale,
  collated: names.slice().sort((a, b) => a.localeCompare(b)),
  result: ${resultExpr('p', 's')},
}));
`;

function resultExpr(p: string, s: string): string {
  return `{
    functions: [...${p}.functions.function_id].map((id, i) => [id, ${p}.functions.name[i], ${p}.functions.filename[i]]),
    locations: [...${p}.locations.location_id].map((id, i) => [id, ${p}.locations.function_id[i], ${p}.locations.line[i]]),
    stacks: [...${p}.samples.locations.location_id],
    byFunction: [...${s}.byFunction].map(([k, e]) => [k, String(e.self), String(e.total)]),
    byLine: [...${s}.byLine].map(([k, e]) => [k, String(e.self), String(e.total)]),
    folded: writeFolded(${p}).text,
    rprof: (await writeRprofText(${p})).text,
  }`;
}

/** Locale, environment, and whether its collation of NAMES differs from the default (en) one. */
const LOCALES: [string, Record<string, string>, boolean][] = [
  ['tr-TR', { LC_ALL: 'tr_TR.UTF-8' }, true],
  ['de-DE', { LANG: 'de_DE.UTF-8' }, false],
  ['sv-SE', { LC_ALL: 'sv_SE.UTF-8' }, true],
  ['cs-CZ', { LC_ALL: 'cs_CZ.UTF-8' }, true],
];

function runChild(env: Record<string, string>) {
  const base = { ...process.env };
  for (const k of ['LC_ALL', 'LC_COLLATE', 'LC_CTYPE', 'LANG', 'LANGUAGE']) delete base[k];
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', CHILD, JSON.stringify(NAMES)], { input: rprofText(), encoding: 'utf8', env: { ...base, ...env }, timeout: 60_000 });
  if (r.status !== 0) throw new Error(`child failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout) as { locale: string; collated: string[]; result: unknown };
}

const built = existsSync(dist);
if (!built) console.warn(`skipping the locale tests: ${dist} is missing (build with npx tsc -b packages/rprof)`);

describe.skipIf(!built)('ids and orders are independent of the locale', () => {
  it('the default child (C locale) gives what this process gives', async () => {
    const p = readRprofBytes(new TextEncoder().encode(rprofText()), { fileName: 'x.out' }).profile;
    const s = summarizeRprof(p);
    // the same expression the child evaluates, evaluated here on the source build
    const here = await (new Function('p', 's', 'writeFolded', 'writeRprofText', `return (async () => (${resultExpr('p', 's')}))();`)(p, s, writeFolded, writeRprofText) as Promise<unknown>);
    const def = runChild({ LC_ALL: 'C' });
    expect(def.result).toEqual(here);
    const r = here as { functions: [number, string, string][] };
    expect(new Set(r.functions.map((f) => f[1]))).toEqual(new Set(NAMES));
  });

  for (const [tag, env, differsFromDefault] of LOCALES) {
    it(`${tag} (${Object.entries(env).map(([k, v]) => `${k}=${v}`).join(' ')}): same ids, names, orders and bytes`, () => {
      const def = runChild({ LC_ALL: 'C' });
      const loc = runChild(env);
      // the child really runs in that locale, and it collates the names differently from
      // code-unit order (German: ä next to a) and, where the locale says so, from the default
      expect(loc.locale).toBe(tag);
      expect(loc.collated).not.toEqual(NAMES.slice().sort());
      if (differsFromDefault) expect(loc.collated).not.toEqual(def.collated);
      expect(loc.result).toEqual(def.result);
    });
  }
});
