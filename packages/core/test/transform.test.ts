/** Adapter transforms: the optional `transforms` field, registry support, running one by name. */

import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  ADAPTER_API_VERSION,
  ProfileBuilder,
  ProfkitError,
  checkAdapter,
  checkTransformValues,
  createRegistry,
  defineAdapter,
  missingTransformError,
  resolveStack,
  type AdapterTransform,
  type Profile,
  type TransformContext,
} from '../src/node/index.js';

/** A transform that renames every function to upper case (and says how many it renamed). */
function upperTransform(name = 'upper'): AdapterTransform {
  return {
    name,
    summary: 'upper-cases function names',
    options: { prefix: { type: 'string', description: 'prepended to every name', valueName: 'TEXT' }, loud: { type: 'boolean', description: 'also note on stderr' } },
    async apply(p, ctx) {
      const prefix = typeof ctx.values.prefix === 'string' ? ctx.values.prefix : '';
      const names = p.functions.name.map((n) => prefix + n.toUpperCase());
      if (ctx.values.loud === true) ctx.stderr.write(`renamed ${names.length}\n`);
      return { profile: { ...p, functions: { ...p.functions, name: names } }, warnings: [{ code: 'PROFKIT_W_TEST_RENAMED', message: `renamed ${names.length} functions` }] };
    },
  };
}

function adapterWith(name: string, transforms: AdapterTransform[]) {
  return defineAdapter({
    name,
    formats: [{ id: `${name}-fmt`, extensions: [], binary: true, read: false, write: false }],
    sniff: () => 0,
    load: async () => ({ read: async () => Promise.reject(new Error('unused')) }),
    transforms,
  });
}

function sample(): Profile {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
  const f = b.internFunction({ name: 'main' });
  const g = b.internFunction({ name: 'work' });
  b.addSample([b.addLocation({ functionId: g }), b.addLocation({ functionId: f })], [2]);
  return b.build();
}

function ctx(values: TransformContext['values'] = {}): TransformContext & { text(): string } {
  const stderr = new PassThrough();
  let text = '';
  stderr.on('data', (c: Buffer) => (text += c.toString()));
  return { values, stderr, signal: new AbortController().signal, verbose: false, text: () => text };
}

async function rejection(p: Promise<unknown>): Promise<ProfkitError> {
  try {
    await p;
  } catch (e) {
    return e as ProfkitError;
  }
  throw new Error('expected a rejection');
}

function thrown(f: () => unknown): ProfkitError {
  try {
    f();
  } catch (e) {
    return e as ProfkitError;
  }
  throw new Error('expected an error');
}

describe('the transforms field of the adapter contract', () => {
  it('is optional: the contract version stays 1 and adapters without it still register', () => {
    expect(ADAPTER_API_VERSION).toBe(1);
    const reg = createRegistry([adapterWith('plain', [])]);
    expect(reg.transforms()).toEqual([]);
  });
  it('is checked when an adapter registers', () => {
    const bad = { ...adapterWith('bad', []), transforms: [{ name: 'x', summary: 's', apply: 'not a function' }] };
    const e = thrown(() => checkAdapter(bad));
    expect(e.code).toBe('PROFKIT_E_ADAPTER_SHAPE');
    expect(e.message).toContain('transforms.0.apply');
    const badName = { ...adapterWith('bad2', []), transforms: [{ ...upperTransform(), name: 'Two Words' }] };
    expect(thrown(() => checkAdapter(badName)).message).toContain('transform name');
  });
});

describe('registry.transforms()', () => {
  it('lists every transform with the adapter that contributed it', () => {
    const reg = createRegistry([adapterWith('a', [upperTransform('upper')]), adapterWith('b', [upperTransform('other')])]);
    expect(reg.transforms().map((t) => [t.adapter, t.transform.name])).toEqual([
      ['a', 'upper'],
      ['b', 'other'],
    ]);
  });
  it('refuses two adapters contributing the same transform name', () => {
    const reg = createRegistry([adapterWith('a', [upperTransform('upper')])]);
    const e = thrown(() => reg.register(adapterWith('b', [upperTransform('upper')])));
    expect(e.code).toBe('PROFKIT_E_ADAPTER_DUPLICATE');
    expect(e.message).toContain('duplicate transform "upper"');
    expect(e.message).toContain('adapter a');
    expect(reg.transforms()).toHaveLength(1);
  });
  it('refuses one adapter listing a transform twice', () => {
    const e = thrown(() => createRegistry([adapterWith('a', [upperTransform('upper'), upperTransform('upper')])]));
    expect(e.code).toBe('PROFKIT_E_ADAPTER_SHAPE');
    expect(e.message).toContain('lists transform "upper" twice');
  });
  it('drops the transforms of an adapter replaced with override', () => {
    const reg = createRegistry([adapterWith('a', [upperTransform('upper')])]);
    reg.register(adapterWith('a', [upperTransform('renamed')]), { override: true });
    expect(reg.transforms().map((t) => t.transform.name)).toEqual(['renamed']);
  });
});

describe('registry.transform()', () => {
  it('applies the named transform with the values and returns its profile, warnings and adapter', async () => {
    const reg = createRegistry([adapterWith('a', [upperTransform()])]);
    const p = sample();
    const c = ctx({ prefix: 'x_', loud: true });
    const r = await reg.transform('upper', p, c);
    expect(r.adapter).toBe('a');
    expect(resolveStack(r.profile, 0).map((f) => f.name)).toEqual(['x_WORK', 'x_MAIN']);
    expect(r.warnings.map((w) => w.code)).toEqual(['PROFKIT_W_TEST_RENAMED']);
    expect(c.text()).toBe('renamed 2\n');
    expect(resolveStack(p, 0).map((f) => f.name)).toEqual(['work', 'main']);
  });
  it('refuses options the transform does not declare, or of the wrong type (PROFKIT_E_USAGE)', async () => {
    const reg = createRegistry([adapterWith('a', [upperTransform()])]);
    const unknown = await rejection(reg.transform('upper', sample(), ctx({ binary: '/bin/x' })));
    expect(unknown.code).toBe('PROFKIT_E_USAGE');
    expect(unknown.message).toContain('has no option --binary');
    expect(unknown.message).toContain('--prefix, --loud');
    const wrongType = await rejection(reg.transform('upper', sample(), ctx({ loud: 'yes' })));
    expect(wrongType.code).toBe('PROFKIT_E_USAGE');
    expect(wrongType.detail.option).toBe('loud');
    // undefined values are "not given"
    expect(() => checkTransformValues(upperTransform(), { prefix: undefined, loud: undefined })).not.toThrow();
  });
  it('names the npm package of a missing first-party transform (PROFKIT_E_NO_ADAPTER)', async () => {
    const reg = createRegistry([adapterWith('a', [upperTransform()])]);
    const e = await rejection(reg.transform('symbolize', sample(), ctx()));
    expect(e.code).toBe('PROFKIT_E_NO_ADAPTER');
    expect(e.message).toContain('`npm install @profkit/symbolize`');
    expect(e.message).not.toContain('\n');
    expect(e.detail.install).toBe('npm install @profkit/symbolize');
  });
  it('lists the installed transforms when an unknown one is asked for', async () => {
    const reg = createRegistry([adapterWith('a', [upperTransform()])]);
    const e = await rejection(reg.transform('nope', sample(), ctx()));
    expect(e.code).toBe('PROFKIT_E_NO_ADAPTER');
    expect(e.message).toContain('installed transforms: upper');
    expect(missingTransformError('nope', []).message).toContain('installed transforms: none');
  });
  it('turns a transform that throws a plain Error into PROFKIT_E_ADAPTER_FAILED naming adapter and transform', async () => {
    const boom: AdapterTransform = { name: 'boom', summary: 's', apply: async () => Promise.reject(new TypeError('oops')) };
    const reg = createRegistry([adapterWith('a', [boom])]);
    const e = await rejection(reg.transform('boom', sample(), ctx()));
    expect(e.code).toBe('PROFKIT_E_ADAPTER_FAILED');
    expect(e.message).toContain('the boom transform of the a adapter failed: oops');
  });
  it('passes ProfkitErrors through unchanged', async () => {
    const t: AdapterTransform = { name: 'net', summary: 's', apply: async () => Promise.reject(new ProfkitError('PROFKIT_E_NETWORK', 'down')) };
    const e = await rejection(createRegistry([adapterWith('a', [t])]).transform('net', sample(), ctx()));
    expect(e.code).toBe('PROFKIT_E_NETWORK');
  });
  it("hands the transform the registry's default limits under the caller's own (ctx.limits)", async () => {
    let seen: TransformContext['limits'];
    const spy: AdapterTransform = { name: 'spy', summary: 's', apply: async (p, c) => ((seen = c.limits), { profile: p, warnings: [] }) };
    const reg = createRegistry([adapterWith('a', [spy])]);
    reg.setDefaultLimits({ maxTableEntries: 5, maxSamples: 7 });
    await reg.transform('spy', sample(), { ...ctx(), limits: { maxSamples: 9 } });
    expect(seen).toEqual({ maxTableEntries: 5, maxSamples: 9 });
    await reg.transform('spy', sample(), ctx());
    expect(seen).toEqual({ maxTableEntries: 5, maxSamples: 7 });
  });
  it('refuses a result that is not { profile, warnings }', async () => {
    const t = { name: 'bad', summary: 's', apply: async () => ({ profile: sample() }) } as unknown as AdapterTransform;
    const e = await rejection(createRegistry([adapterWith('a', [t])]).transform('bad', sample(), ctx()));
    expect(e.code).toBe('PROFKIT_E_ADAPTER_FAILED');
    expect(e.detail.rule).toBe('transform result shape');
  });
});
