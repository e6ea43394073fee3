/**
 * The page's patterns (patterns.ts): the flame search and the filters run in pprof's syntax with
 * re2js, in linear time. A link with `q=(a+)+$` (or `focus=(a+)+$`) over long names hung the tab:
 * JavaScript's backtracking RegExp takes about 2^n steps there.
 */

import { describe, expect, it } from 'vitest';
import { ErrorCodes, ProfileBuilder, isProfkitError } from '@profkit/core';
import { serializePprof } from '@profkit/pprof';
import { thrownBy } from '@profkit/test-utils';
import { ProfileSession, webRegistry } from '../src/app/engine.js';
import { searchMatches } from '../src/app/flame.js';
import type { FlameLayout, ViewOptions } from '../src/app/protocol.js';
import { NO_FILTERS } from '../src/app/state.js';

/** Names on which `(a+)+$` backtracks exponentially (no `$` right after the a's). */
const LONG_NAMES = Array.from({ length: 20 }, (_, i) => 'a'.repeat(30_000 + i) + '!');
const NAMES = ['main', 'runtime.mallocgc', 'net/http.(*conn).serve', 'éclair.bake', 'Worker.run', ...LONG_NAMES];

function profile(): { name: string; bytes: Uint8Array } {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'cpu', unit: 'nanoseconds' }] });
  const at = (name: string) => b.internLocation({ functionId: b.internFunction({ name, filename: `${name.slice(0, 6)}.go` }) });
  const main = at('main');
  NAMES.slice(1).forEach((name, i) => b.addSample([at(name), main], [i + 1]));
  return { name: 'p.pb.gz', bytes: serializePprof(b.build()) };
}

const OPTIONS: ViewOptions = { sampleType: -1, by: 'function', cum: false, nodeFraction: -1, nodeCount: -1, ...NO_FILTERS };

async function flame(options: ViewOptions = OPTIONS): Promise<FlameLayout> {
  const s = await ProfileSession.open(webRegistry(), profile());
  return s.view(options, 'flame').flame!;
}

/** The names of the frames `pattern` marks. */
function searched(layout: FlameLayout, pattern: string): string[] {
  const m = searchMatches(layout, pattern)!;
  return [...new Set([...m.keys()].filter((i) => m[i]).map((i) => layout.names[layout.nameIndex[i]!]!))].sort();
}

describe('the flame search', () => {
  it('returns on a crafted pattern over long names, with the right frames', async () => {
    const layout = await flame();
    expect(searched(layout, '(a+)+$')).toEqual([]);
    expect(searched(layout, '(a+)+!$')).toEqual([...LONG_NAMES].sort());
  });

  it("reads pprof's (Go) syntax, which JavaScript's RegExp refuses or reads otherwise", async () => {
    const layout = await flame();
    expect(searched(layout, '(?i)WORKER')).toEqual(['Worker.run']);
    expect(searched(layout, '^\\pL+\\.bake')).toEqual(['éclair.bake']);
  });

  it('marks the frames JavaScript marked for ordinary patterns', async () => {
    const layout = await flame();
    for (const pattern of ['main', '^runtime\\.', 'http\\.\\(\\*conn\\)', 'mallocgc|serve', '[A-Z]\\w+\\.run$', 'a{999}!']) {
      const js = new RegExp(pattern);
      expect(searched(layout, pattern), pattern).toEqual([...new Set(layout.names.filter((n) => js.test(n)))].sort());
    }
  });

  it('reports an invalid pattern as PROFKIT_E_USAGE naming the search', async () => {
    const layout = await flame();
    const e = thrownBy(() => searchMatches(layout, 'a('));
    expect(isProfkitError(e) && e.code).toBe(ErrorCodes.USAGE);
    expect(isProfkitError(e) && e.detail.option).toBe('search');
  });
});

describe('the filters', () => {
  it('run a crafted focus and ignore over long names to the end', async () => {
    expect((await flame({ ...OPTIONS, focus: '(a+)+$' })).depth.length).toBe(1);
    const kept = await flame({ ...OPTIONS, ignore: '(a+)+$' });
    expect(kept.exactValue[0]).toBe(BigInt((NAMES.length - 1) * NAMES.length / 2));
  });

  it("read pprof's syntax (a (?i) group inside the pattern, \\pL)", async () => {
    const focused = await flame({ ...OPTIONS, focus: 'r\\.(?i:RUN)$' });
    expect(focused.names.filter((n) => n !== 'main' && n !== 'all' && n !== 'root')).toEqual(['Worker.run']);
    expect((await flame({ ...OPTIONS, tagFocus: '', show: '^\\pL+\\.bake$|^main$' })).names).toContain('éclair.bake');
  });

  it('report an invalid pattern as PROFKIT_E_USAGE naming the filter', async () => {
    const s = await ProfileSession.open(webRegistry(), profile());
    for (const [option, filters] of [['focus', { focus: 'a(' }], ['hide', { hide: '(a)\\1' }], ['tagIgnore', { tagIgnore: 'k=[' }]] as const) {
      const e = thrownBy(() => s.view({ ...OPTIONS, ...filters }, 'flame'));
      expect(isProfkitError(e) && e.code, option).toBe(ErrorCodes.USAGE);
      expect(isProfkitError(e) && e.detail.option).toBe(option);
    }
  });
});
