/** Demangling: simplification modes (pprof's), and c++filt end to end. */

import { describe, expect, it } from 'vitest';
import { demangleAll, displayName, simplifyDemangled } from '../src/index.js';
import { haveTool, which } from './helpers.js';

describe('simplifyDemangled', () => {
  const cases: [string, string, string, string][] = [
    // demangled, full, templates, default
    ['ns::Widget::compute(int) const', 'ns::Widget::compute(int) const', 'ns::Widget::compute', 'ns::Widget::compute'],
    ['long ns::twice<long>(long)', 'long ns::twice<long>(long)', 'ns::twice<long>', 'ns::twice'],
    ['std::vector<int, std::allocator<int> >::push_back(int const&)', 'std::vector<int, std::allocator<int> >::push_back(int const&)', 'std::vector<int, std::allocator<int> >::push_back', 'std::vector::push_back'],
    ['foo(int) [clone .constprop.0] [clone .cold]', 'foo(int)', 'foo', 'foo'],
    ['(anonymous namespace)::helper(char*)', '(anonymous namespace)::helper(char*)', '(anonymous namespace)::helper', '(anonymous namespace)::helper'],
    ['Matrix::operator()(int, int) const', 'Matrix::operator()(int, int) const', 'Matrix::operator()', 'Matrix::operator()'],
    ['std::ostream::operator<<(int)', 'std::ostream::operator<<(int)', 'std::ostream::operator<<', 'std::ostream::operator<<'],
    ['bool operator< <Key>(Key const&, Key const&)', 'bool operator< <Key>(Key const&, Key const&)', 'operator< <Key>', 'operator<'],
    ['outer(int)::{lambda(int)#1}::operator()(int) const', 'outer(int)::{lambda(int)#1}::operator()(int) const', 'outer::{lambda(int)#1}::operator()', 'outer::{lambda(int)#1}::operator()'],
    ['Foo::operator new(unsigned long)', 'Foo::operator new(unsigned long)', 'Foo::operator new', 'Foo::operator new'],
  ];
  for (const [d, full, templates, def] of cases) {
    it(d, () => {
      expect(simplifyDemangled(d, 'full')).toBe(full);
      expect(simplifyDemangled(d, 'templates')).toBe(templates);
      expect(simplifyDemangled(d, 'default')).toBe(def);
    });
  }
  it('displayName: C and Go names are left alone; unmangled C++-looking names are simplified', () => {
    expect(displayName('leaf_fn', undefined, 'default')).toBe('leaf_fn');
    expect(displayName('main.(*T).Method', undefined, 'default')).toBe('main.(*T).Method');
    expect(displayName('ns::f(int)', undefined, 'default')).toBe('ns::f');
    expect(displayName('_Z1fv', 'f()', 'none')).toBe('_Z1fv');
    expect(displayName('_Z1fv', 'f()', 'default')).toBe('f');
  });
});

describe.skipIf(!haveTool('c++filt', 'binutils'))('c++filt', () => {
  it('demangles a batch, leaves plain names out, keeps the mapping by system name', async () => {
    const m = await demangleAll(which('c++filt')!, ['_ZNK2ns6Widget7computeEi', 'plain_c', '_ZN2ns5twiceIlEET_S1_', '_ZNK2ns6Widget7computeEi'], { timeoutMs: 10000 });
    expect([...m.entries()]).toEqual([
      ['_ZNK2ns6Widget7computeEi', 'ns::Widget::compute(int) const'],
      ['_ZN2ns5twiceIlEET_S1_', 'long ns::twice<long>(long)'],
    ]);
  });
  it('a missing demangler is a typed tool error', async () => {
    await expect(demangleAll('/nonexistent/c++filt', ['_Z1fv'], { timeoutMs: 1000 })).rejects.toMatchObject({ code: 'PROFKIT_E_SYMBOLIZE_TOOL' });
  });
});
