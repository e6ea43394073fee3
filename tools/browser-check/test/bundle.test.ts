/**
 * The main entries of core and the adapters bundle for the browser: esbuild with
 * `--platform=browser` fails on any `node:` (or bare built-in) import it cannot resolve, and the
 * bundle uses no Node global. Sizes are printed (the numbers in docs/browser.md).
 */

import { describe, expect, it } from 'vitest';
import { ADAPTER_BUDGET_BYTES, CORE_PPROF, CORE_PPROF_VIEWER, PLATFORM_NEUTRAL_PACKAGES, bundleForBrowser, findNodeGlobals, lazilyInitializedModules, reexportAll } from '../src/bundle.js';

const kb = (n: number) => `${(n / 1000).toFixed(1)} KB`;

describe('the Node-global scan', () => {
  it('finds Buffer, process and require as code uses them, not in names or messages', () => {
    expect(findNodeGlobals('let a=Buffer.from(x);if(b instanceof Buffer)process.exit(1);const m=require("fs")').map((s) => s.split(' at ')[0])).toEqual(['Buffer', 'Buffer', 'process.', 'require(']);
    expect(findNodeGlobals('const myBuffer=1;x.process.y;o.require(z);throw Error("a Buffer larger than")')).toEqual([]);
  });
});

describe('main entries bundled for the browser', () => {
  it.each(PLATFORM_NEUTRAL_PACKAGES)('%s: no Node built-in, no Node global', async (pkg) => {
    const b = await bundleForBrowser({ source: reexportAll([pkg]) });
    expect(b.errors, `esbuild --platform=browser could not bundle ${pkg}`).toEqual([]);
    expect(b.nodeGlobals, `Node globals in the browser bundle of ${pkg}`).toEqual([]);
    console.log(`${pkg}: ${kb(b.bytes)} minified (largest parts: ${b.bytesByPackage.slice(0, 4).map((i) => `${i.name} ${kb(i.bytes)}`).join(', ')})`);
  });

  it.each(Object.entries(ADAPTER_BUDGET_BYTES))('core + %s (everything it exports, with the core it imports): within its budget of %i bytes', async (pkg, budget) => {
    const b = await bundleForBrowser({ source: reexportAll([pkg]) });
    expect(b.errors).toEqual([]);
    const parts = b.bytesByPackage.map((i) => `${i.name} ${kb(i.bytes)}`).join(', ');
    console.log(`core + ${pkg}: ${kb(b.bytes)} minified (budget ${kb(budget)}); parts: ${parts}`);
    expect(b.bytes, `core + ${pkg} is over its ${kb(budget)} budget; parts: ${parts}`).toBeLessThanOrEqual(budget);
  });

  it('a pprof viewer (core + pprof with Registry, applyDropFrames, topReport) bundles', async () => {
    const viewer = await bundleForBrowser({ source: CORE_PPROF_VIEWER });
    expect(viewer.errors).toEqual([]);
    console.log(`a pprof viewer (+ Registry, applyDropFrames, topReport): ${kb(viewer.bytes)} minified (not budgeted)`);
  });

  it('the lazy-initializer scan finds the modules a dynamic import() reaches, and what they import', async () => {
    // The control for the test below: were esbuild to rename its helper, that test would pass on anything.
    const wrapped = await lazilyInitializedModules({ source: "export const loadPerf = () => import('@profkit/perf');" });
    expect(wrapped).toContain('packages/perf/dist/index.js');
    expect(wrapped).toContain('packages/core/dist/errors.js');
  });

  it.each(['@profkit/core', ...Object.keys(ADAPTER_BUDGET_BYTES)])('%s: no profkit module wrapped in a lazy initializer (no dynamic import() in its graph)', async (pkg) => {
    // An adapter's `load: async () => (await import('./codec.js')).codec` wrapped every module of
    // the adapter and of core, keeping their unused top-level code: 22 KB of core + perf's 49 KB.
    // (Core's own lazy `import('re2js')` wraps only re2js, a package of its own.)
    const wrapped = await lazilyInitializedModules({ source: reexportAll([pkg]) });
    expect(wrapped.filter((path) => !path.startsWith('node_modules/'))).toEqual([]);
  });

  it('core + pprof holds none of core\'s report or flame graph code (no module of it wrapped in a lazy initializer)', async () => {
    // A dynamic import() anywhere in the graph (the adapter's load() had one) makes esbuild wrap
    // every module it reaches in a lazy initializer that keeps all their top-level constants,
    // needed or not: the flame graph page's script alone was 6.8 KB of core + pprof.
    const b = await bundleForBrowser({ source: CORE_PPROF });
    expect(b.errors).toEqual([]);
    expect(b.bytesByFile.filter((f) => /^packages\/core\/dist\/(flame|ops)\//.test(f.path))).toEqual([]);
  });

  it('everything core and every adapter export, together: no Node built-in, no Node global', async () => {
    const b = await bundleForBrowser({ source: reexportAll(PLATFORM_NEUTRAL_PACKAGES) });
    expect(b.errors).toEqual([]);
    expect(b.nodeGlobals).toEqual([]);
    const core = await bundleForBrowser({ source: reexportAll(['@profkit/core']) });
    console.log(`everything core exports: ${kb(core.bytes)}; core + all adapters: ${kb(b.bytes)} minified (not budgeted)`);
  });
});
