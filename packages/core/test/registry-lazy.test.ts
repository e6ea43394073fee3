/** `loadLazyAdapters` swaps a lazy stand-in for its real adapter without a moment where neither is registered. */
import { describe, expect, it } from 'vitest';
import { createProfile, createRegistry, defineAdapter, type Adapter } from '../src/index.js';

const enc = (s: string) => new TextEncoder().encode(s);

function adapter(commands: Adapter['commands'] = []): Adapter {
  return defineAdapter({
    name: 'late',
    formats: [{ id: 'late', extensions: ['.late'], binary: false }],
    sniff: (head) => (new TextDecoder().decode(head).startsWith('#late') ? 1 : 0),
    read: async () => ({ profile: createProfile() }),
    commands,
  });
}

describe('Registry.loadLazyAdapters', () => {
  it('keeps the stand-in detectable while the real adapter is imported, then lists the real one', async () => {
    let release!: () => void;
    const gate = new Promise<void>((ok) => (release = ok));
    const real = adapter([{ name: 'late-cmd', summary: 's', usage: 'u', run: async () => 0 }]);
    const registry = createRegistry();
    registry.register(adapter(), { loadReal: async () => (await gate, real) });
    const loading = registry.loadLazyAdapters();
    expect(registry.detect(enc('#late x')).adapter).toBe('late');
    release();
    expect(await loading).toEqual([]);
    expect(registry.get('late')).toBe(real);
    expect(registry.commands().map((c) => c.command.name)).toEqual(['late-cmd']);
  });

  it('drops a stand-in whose real adapter cannot be imported', async () => {
    const registry = createRegistry();
    registry.register(adapter(), { loadReal: () => Promise.reject(new Error('no module')) });
    const failures = await registry.loadLazyAdapters();
    expect(failures.map((f) => f.adapter)).toEqual(['late']);
    expect(registry.get('late')).toBeUndefined();
  });
});
