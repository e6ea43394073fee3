import { describe, expect, it } from 'vitest';
import { ErrorCodes, assertValid, createRegistry, isProfkitError, type ReadLimits } from '@profkit/core/node';
import adapter, { readRprofBytes } from '../src/index.js';
import { pprofRewritesName } from '../src/names.js';
import { stacks } from './helpers.js';

// Read limits of issue 10 for Rprof and folded input (inputs of tools/fuzz's special set):
// exceeding a limit is PROFKIT_E_LIMIT naming its option, with the line; raising it reads.

const registry = createRegistry([adapter]);
const enc = (s: string) => new TextEncoder().encode(s);

async function outcome(format: string, text: string, limits: ReadLimits) {
  try {
    const r = await registry.read(enc(text), { format, fileName: `x.${format}`, limits });
    return r;
  } catch (e) {
    return e;
  }
}

const HEAD = 'sample.interval=20000\n';
const cases: [string, keyof ReadLimits, string, number][] = [
  ['rprof', 'maxFramesPerStack', HEAD + '"f" '.repeat(40) + '\n', 39],
  ['rprof', 'maxStringLength', HEAD + `"${'a'.repeat(200)}" "main" \n`, 199],
  ['rprof', 'maxSamples', HEAD + '"f" "main" \n'.repeat(30), 29],
  ['folded', 'maxFramesPerStack', 'f;'.repeat(40) + 'g 1\n', 40],
  ['folded', 'maxStringLength', 'main;' + 'a'.repeat(200) + ' 3\n', 199],
  ['folded', 'maxSamples', 'main;f 1\n'.repeat(30), 29],
];

describe('rprof and folded read limits', () => {
  for (const [format, option, text, limit] of cases) {
    it(`${format} ${option}`, async () => {
      const e = await outcome(format, text, { [option]: limit });
      expect(isProfkitError(e) && e.code).toBe(ErrorCodes.LIMIT);
      if (!isProfkitError(e)) return;
      expect(e.detail.option).toBe(option);
      expect(e.message).toContain(option);
      expect(e.detail.line).toBeGreaterThan(0);
      const ok = await outcome(format, text, { [option]: limit + 1 });
      expect(isProfkitError(ok)).toBe(false);
    });
  }

  it('aggregated reads count distinct stacks against maxSamples', async () => {
    const text = HEAD + '"f" "main" \n'.repeat(30) + '"g" "main" \n';
    const r = await registry.read(enc(text), { format: 'rprof', fileName: 'x.out', limits: { maxSamples: 2 }, options: { aggregate: true } });
    expect(r.profile.samples.value.length).toBe(2);
    const e = await registry.read(enc(text + '"h" "main" \n'), { format: 'rprof', fileName: 'x.out', limits: { maxSamples: 2 }, options: { aggregate: true } }).catch((x: unknown) => x);
    expect(isProfkitError(e) && e.detail.option).toBe('maxSamples');
  });
});

// Issue 15 item 12: R's `<Anonymous>` and pprof; files of frames without srcref.
describe('names pprof would rewrite, and names of calls', () => {
  it('pprofRewritesName follows pprof’s demangle heuristic on R names', () => {
    const rewritten = ['<Anonymous>', 'f<T>', 'pkg::g(x)', '_Z3foov', '_GLOBAL__sub_I_a'];
    const kept = ['f', '[[<-.data.frame', 'names<-', '<-', '<<-', '[.data.frame', 'pkg::f', 'pkg:::f', 'obj$m', 'x[["a"]]', 'class.<init>', '%%', 'my fun', '<GC'];
    expect(rewritten.filter((n) => !pprofRewritesName(n))).toEqual([]);
    expect(kept.filter((n) => pprofRewritesName(n))).toEqual([]);
  });

  it('pprofRewritesName agrees with pprof’s cut-and-rescan removeMatching, in linear time', () => {
    // google/pprof's removeMatching, verbatim: cut each outermost pair out, rescan from the cut.
    const goRemoveMatching = (name: string, start: string, end: string): string => {
      let nesting = 0;
      let first = 0;
      for (let i = 0; i < name.length; i++) {
        if (name[i] === start) {
          if (++nesting === 1) first = i;
        } else if (name[i] === end) {
          if (--nesting < 0) return name;
          if (nesting === 0) {
            name = name.slice(0, first) + name.slice(i + 1);
            i = first - 1;
          }
        }
      }
      return name;
    };
    const goRewrites = (n: string) => /[<>[\]]/.test(n) && !n.includes('.<') && goRemoveMatching(goRemoveMatching(n, '(', ')'), '<', '>') !== n;
    const differing: string[] = [];
    const alphabet = ['<', '>', '(', ')', 'x'];
    const all = (len: number): string[] => (len === 0 ? [''] : all(len - 1).flatMap((s) => alphabet.map((c) => s + c)));
    for (let len = 1; len <= 6; len++) for (const n of all(len)) if (pprofRewritesName(n) !== goRewrites(n)) differing.push(n);
    expect(differing).toEqual([]);
    // 2 Mi characters of pairs: the cut-and-rescan way copies the name once per pair (minutes).
    expect(pprofRewritesName('x<>'.repeat(700_000))).toBe(true);
  });

  it('<Anonymous> gets an empty system name (<?>); every other R name keeps its own', () => {
    const text = HEAD + '"<Anonymous>" "lapply" "[[<-.data.frame" "pkg::f" "main" \n';
    const { profile: p } = readRprofBytes(enc(text));
    assertValid(p, 'x.out');
    expect(p.functions.name).toEqual(['<Anonymous>', 'lapply', '[[<-.data.frame', 'pkg::f', 'main']);
    expect(p.functions.system_name).toEqual(['<?>', 'lapply', '[[<-.data.frame', 'pkg::f', 'main']);
  });

  it('frames without srcref named <Anonymous>, FUN or .local do not borrow a file; other names still do', () => {
    const text = [
      'line profiling: sample.interval=20000',
      '#File 1: b.R',
      '1#4 "busy" 1#3 "<Anonymous>" 1#3 "FUN" "lapply" 1#3 "run" ',
      '"busy" "<Anonymous>" "FUN" "lapply" "lazyLoadDBfetch" ',
      '1#9 ".local" "standardGeneric" "run" ',
      '".local" "standardGeneric" ',
      '',
    ].join('\n');
    const { profile: p } = readRprofBytes(enc(text));
    expect(stacks(p)).toEqual([
      ['busy@b.R:4', '<Anonymous>@b.R:3', 'FUN@b.R:3', 'lapply@:0', 'run@b.R:3'],
      ['busy@b.R:0', '<Anonymous>@:0', 'FUN@:0', 'lapply@:0', 'lazyLoadDBfetch@:0'],
      ['.local@b.R:9', 'standardGeneric@:0', 'run@b.R:0'],
      ['.local@:0', 'standardGeneric@:0'],
    ]);
  });
});
