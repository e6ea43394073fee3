/**
 * Real fixtures (../shared/fixtures, never copied here) through the registry: every fixture the
 * workspace's other adapters can read is exported to SQLite (and Parquet for a few), read back,
 * validated, and compared in meaning with the original.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { assertValid, createRegistry, type Adapter, type Profile } from '@profkit/core/node';
import { dmExportAdapter, readSqlite, writeSqlite } from '../src/index.js';
import { fixturesDir, haveFixtures, meaning, meaningText } from './helpers.js';

if (!haveFixtures) console.warn(`[dm-export] skipping fixture round trips: ${fixturesDir} not found (set PROFKIT_SHARED)`);

async function otherAdapters(): Promise<{ adapters: Adapter[]; missing: string[] }> {
  const adapters: Adapter[] = [];
  const missing: string[] = [];
  for (const name of ['@profkit/pprof', '@profkit/rprof', '@profkit/gperftools-heap']) {
    try {
      const mod = (await import(name)) as { default?: Adapter };
      if (mod.default) adapters.push(mod.default);
      else missing.push(name);
    } catch {
      missing.push(name);
    }
  }
  return { adapters, missing };
}

function files(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) out.push(...files(p));
    else if (!e.endsWith('.md') && !e.endsWith('.json') && !e.endsWith('.textproto')) out.push(p);
  }
  return out.sort();
}

const { adapters, missing } = await otherAdapters();
if (adapters.length === 0) console.warn(`[dm-export] skipping fixture round trips: no reading adapter in the workspace (${missing.join(', ')})`);

describe.skipIf(!haveFixtures || adapters.length === 0)('fixtures through the registry', () => {
  const registry = createRegistry([...adapters, dmExportAdapter]);

  it('round-trips every readable fixture through SQLite in meaning, and the result is valid', async () => {
    const done: string[] = [];
    for (const f of files(fixturesDir)) {
      let p: Profile;
      try {
        p = (await registry.read(f)).profile;
      } catch {
        continue; // not a format of the adapters present (or a deliberately broken fixture)
      }
      const { bytes } = writeSqlite(p, { name: f });
      const back = await readSqlite(bytes, { file: f });
      assertValid(back.profile, f);
      // Compare canonical texts (fast); on a mismatch, compare structurally for a readable diff.
      if (meaningText(back.profile) !== meaningText(p)) expect(meaning(back.profile), f).toEqual(meaning(p));
      done.push(f);
    }
    console.info(`[dm-export] fixture round trips: ${done.length} files`);
    // With pprof: the proto fixtures plus the legacy ones; without: the legacy/Rprof ones only.
    expect(done.length).toBeGreaterThanOrEqual(adapters.some((a) => a.name === 'pprof') ? 20 : 5);
    if (adapters.some((a) => a.name === 'pprof')) expect(done.some((f) => f.endsWith('1.out.prof.pb.gz'))).toBe(true);
  }, 180_000); // ~15 s of CPU for 23 files; generous for a loaded CI machine

  const havePprof = adapters.some((a) => a.name === 'pprof');
  if (!havePprof) console.warn('[dm-export] skipping the registry conversion test: @profkit/pprof is not built in the workspace');
  it.skipIf(!havePprof)('converts through the registry by extension (x.pb.gz → x.sqlite → y.pb.gz) and appends with the write option', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const tmp = mkdtempSync(join(tmpdir(), 'dm-export-reg-'));
    try {
      const input = join(fixturesDir, 'r-profile/inst/samples/proto/1.out.prof.pb.gz');
      const second = join(fixturesDir, 'pprof/internal/report/testdata/sample.cpu');
      const a = await registry.read(input);
      const b = await registry.read(second);
      const db = join(tmp, 'x.sqlite');
      const w1 = await registry.write(a.profile, db);
      expect(w1.format).toBe('sqlite');
      const det = await registry.detectFile(db);
      expect(JSON.stringify(det)).toContain('sqlite');
      await registry.write(b.profile, db, { options: { append: true } });
      const back1 = await registry.read(db, { options: { profileId: 1 } });
      expect(back1.format).toBe('sqlite');
      expect(meaning(back1.profile)).toEqual(meaning(a.profile));
      const back2 = await registry.read(db);
      expect(meaning(back2.profile)).toEqual(meaning(b.profile));
      const out = join(tmp, 'y.pb.gz');
      await registry.write(back1.profile, out);
      expect(meaning((await registry.read(out)).profile)).toEqual(meaning(a.profile));
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
