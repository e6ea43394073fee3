import { describe, expect, it } from 'vitest';
import { makeTarget } from '../src/index.js';

// Outcome features guide the corpus: a feature that changes with every extra mapping made each
// input with one more line "new", so the gperftools-maps corpus filled with ever-larger inputs
// (mean 13 KB after 10k executions, 377 executions/s instead of about 2,000).
const maps = (n: number) => {
  const lines = ['MAPPED_LIBRARIES:'];
  for (let i = 0; i < n; i++) {
    const start = 0x400000 + i * 0x10000;
    lines.push(`${start.toString(16)}-${(start + 0x8000).toString(16)} r-xp 00000000 08:02 ${i + 1} /usr/lib/lib${i}.so`);
  }
  return new TextEncoder().encode(lines.join('\n') + '\n');
};

describe('fuzz target features', () => {
  it('gperftools-maps: counts of mappings are bucketed by powers of two', async () => {
    const t = makeTarget('gperftools-maps');
    try {
      const f20 = await t.exec(maps(20));
      const f25 = await t.exec(maps(25));
      const f40 = await t.exec(maps(40));
      const f1 = await t.exec(maps(1));
      expect(f20).toMatch(/^ok:/);
      expect(f25).toBe(f20);
      expect(f40).not.toBe(f20);
      expect(f1).not.toBe(f20);
    } finally {
      t.close?.();
    }
  });
});

describe('views target', () => {
  it('runs every view on a readable input; an unreadable one ends in the typed read error', async () => {
    const { VIEW_COMMANDS } = await import('../src/views-target.js');
    const t = makeTarget('views');
    try {
      const folded = new TextEncoder().encode(`main;${'rec;'.repeat(3000)}leaf 7\nmain;other 3\n`);
      expect(await t.exec(folded)).toBe(`views:${VIEW_COMMANDS.map(() => 'ok').join(',')}`);
      const e = (await t.exec(Uint8Array.of(0x1f, 0x8b, 8, 0, 1, 2, 3)).catch((x: unknown) => x)) as { name: string; code: string };
      expect({ name: e.name, code: e.code }).toEqual({ name: 'ProfkitError', code: expect.stringMatching(/^PROFKIT_E_(DECOMPRESS|TRUNCATED|PARSE)$/) });
    } finally {
      t.close?.();
    }
  }, 120_000);
});
