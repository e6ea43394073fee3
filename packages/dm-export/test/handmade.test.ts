/**
 * A database written by hand (test/fixtures/handmade.sql), as another tool might write one: no
 * constraints, no application_id, sparse ids, rows out of key order. The expected profile is
 * built by hand from the same facts.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { ProfileBuilder, assertValid } from '@profkit/core/node';
import type BetterSqlite3 from 'better-sqlite3';
import { readSqlite, sniffDm } from '../src/index.js';
import { meaning } from './helpers.js';

const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
const script = readFileSync(new URL('./fixtures/handmade.sql', import.meta.url), 'utf8');

function handmadeDb(): Uint8Array {
  const db = new Database(':memory:');
  db.exec(script);
  const bytes = new Uint8Array(db.serialize());
  db.close();
  return bytes;
}

function expected() {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }, { type: 'cpu', unit: 'nanoseconds' }], facts: { period_type: { type: 'cpu', unit: 'nanoseconds' }, period: 10_000_000n, comments: ['first', 'second'] } });
  const main = b.internFunction({ name: 'main', filename: 'main.c', startLine: 1 });
  const parse = b.internFunction({ name: 'parse', filename: 'parse.c', startLine: 3 });
  const kernel = b.internMapping({ memoryStart: 0xffffffff81000000n, memoryLimit: 0xffffffffffffffffn, filename: '[kernel]' });
  const lMain = b.internLocation({ functionId: main, line: 5, column: 2 });
  const lParse = b.internLocation({ functionId: parse, line: 7, address: 4096, inlinedInto: [{ functionId: main, line: 9 }] });
  const lKernel = b.internLocation({ address: 0xffffffff81001000n, mappingId: kernel });
  b.addSample([lParse, lMain], [1, 10_000_000]);
  b.setSampleExtension('handmade', 'weight', 0.5);
  b.addSample([lKernel, lMain], [2, 9007199254740993n], [{ key: 'thread', str: 'worker' }, { key: 'bytes', num: 512, unit: 'bytes' }]);
  b.setSampleExtension('handmade', 'weight', 0.25);
  b.addSample([lMain], [3, -30_000_000]);
  b.setSampleExtension('handmade', 'weight', 1.5);
  b.extension('handmade').facts = { answer: 42n };
  return b.build();
}

describe('a database written by another tool', () => {
  it('is detected as a profkit export by its tables (no application_id)', () => {
    const s = sniffDm(handmadeDb().subarray(0, 4096), {}) as { score: number };
    expect(s.score).toBeGreaterThanOrEqual(0.9);
  });

  it('reads into the profile its rows describe, ids renumbered or not', async () => {
    const r = await readSqlite(handmadeDb(), { file: 'handmade.sqlite' });
    expect(r.profileId).toBe(5);
    expect(r.name).toBe('by hand');
    assertValid(r.profile, 'handmade.sqlite');
    expect(meaning(r.profile)).toEqual(meaning(expected()));
  });
});
