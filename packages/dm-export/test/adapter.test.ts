import { existsSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { checkAdapter, createRegistry, readInput, type CommandContext, type Profile } from '@profkit/core/node';
import dmDefault, { TABLES, dmExportAdapter, listProfiles, profileToTables, readSqlite, writeSqlite } from '../src/index.js';
import { meaning, richProfile, syntheticProfile } from './helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'dm-export-cmd-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function sink(): Writable & { text: string } {
  const w = new Writable({
    write(chunk, _enc, cb) {
      w.text += String(chunk);
      cb();
    },
  }) as Writable & { text: string };
  w.text = '';
  return w;
}

const registry = createRegistry([dmExportAdapter]);

function context(positionals: string[], values: CommandContext['values'] = {}): CommandContext & { out: { text: string }; err: { text: string } } {
  const out = sink();
  const err = sink();
  return {
    positionals,
    values,
    readProfile: (path, o) => registry.read(path, { format: o?.format }),
    readProfileBytes: (bytes, o) => registry.read(bytes, { format: o?.format, fileName: o?.fileName }),
    writeProfile: async (p: Profile, path: string, o) => (await registry.write(p, path, { format: o?.format, inputs: o?.inputs })).warnings,
    stdout: out,
    stderr: err,
    json: false,
    quiet: true,
    verbose: false,
    progress: () => ({ update() {}, done() {} }),
    signal: new AbortController().signal,
    out,
    err,
  };
}

function command(name: string) {
  const c = dmExportAdapter.commands!.find((x) => x.name === `dm-export ${name}`);
  if (!c) throw new Error(`no command ${name}`);
  return c;
}

describe('the adapter object', () => {
  it('has the shape of the contract and is the default export', () => {
    expect(dmDefault).toBe(dmExportAdapter);
    expect(() => checkAdapter(dmExportAdapter)).not.toThrow();
    expect(dmExportAdapter.name).toBe('dm-export');
    expect(dmExportAdapter.formats.map((f) => f.id)).toEqual(['sqlite', 'sql', 'parquet', 'csv']);
    expect(dmExportAdapter.formats[0]!.extensions).toEqual(['.sqlite', '.db']);
  });

  it('reads and writes through the lazily loaded codec, with the profileId and append options', async () => {
    const codec = await dmExportAdapter.load!();
    const p = richProfile();
    const w = await codec.write!(p, { format: 'sqlite' });
    const bytes = w.data as Uint8Array;
    const input = { fileName: 'x.sqlite', gzipped: false, bytes: async () => bytes, chunks: async function* () { yield bytes; } };
    expect(meaning((await codec.read(input, {})).profile)).toEqual(meaning(p));
    const file = join(tmp, 'codec.sqlite');
    writeFileSync(file, bytes);
    const w2 = await codec.write!(syntheticProfile(50), { format: 'sqlite', fileName: file, options: { append: true, name: 'second' } });
    // Appending streams the appended database (prepared on disk beside the file) and holds the
    // lock until the caller has renamed its output over the file.
    expect(existsSync(`${file}.lock`)).toBe(true);
    const parts: Uint8Array[] = [];
    for await (const c of w2.data as AsyncIterable<Uint8Array>) parts.push(c);
    const appended = new Uint8Array(Buffer.concat(parts));
    expect(listProfiles(appended).map((r) => r.name)).toEqual(['', 'second']);
    expect(listProfiles(file).map((r) => r.name)).toEqual(['']);
    writeFileSync(`${file}.new`, appended);
    renameSync(`${file}.new`, file);
    for (let i = 0; i < 200 && existsSync(`${file}.lock`); i++) await new Promise((r) => setTimeout(r, 10));
    expect(existsSync(`${file}.lock`)).toBe(false);
    expect(readdirSync(tmp).filter((f) => f.startsWith('.profkit-tmp-'))).toEqual([]);
    const input2 = { ...input, bytes: async () => appended };
    expect(meaning((await codec.read(input2, { options: { profileId: 1 } })).profile)).toEqual(meaning(p));
    await expect(codec.read(input2, { options: { profileId: 'x' } })).rejects.toMatchObject({ code: 'PROFKIT_E_USAGE' });
    await expect(codec.write!(p, { format: 'parquet' })).rejects.toMatchObject({ code: 'PROFKIT_E_UNSUPPORTED' });
    const sql = await codec.write!(p, { format: 'sql' });
    let text = '';
    for await (const c of sql.data as AsyncIterable<Uint8Array>) text += new TextDecoder().decode(c);
    expect(text).toMatch(/^-- profkit dm-export/);
    expect(text).toContain('CREATE TABLE IF NOT EXISTS "sample_locations"');
    expect(text).toMatch(/COMMIT;\nANALYZE /);
  });

  it('is chosen by the registry for .sqlite/.db names and detected by content', async () => {
    const p = richProfile();
    const f = join(tmp, 'reg.db');
    expect((await registry.write(p, f)).format).toBe('sqlite');
    const r = await registry.read(f);
    expect(r.format).toBe('sqlite');
    expect(meaning(r.profile)).toEqual(meaning(p));
    const renamed = join(tmp, 'no-extension');
    writeFileSync(renamed, readFileSync(f));
    expect((await registry.read(renamed)).format).toBe('sqlite');
  });
});

describe('profkit dm-export commands', () => {
  const a = join(tmp, 'a.sqlite');
  const b = join(tmp, 'b.sqlite');
  const all = join(tmp, 'all.sqlite');
  writeFileSync(a, writeSqlite(richProfile()).bytes);
  writeFileSync(b, writeSqlite(syntheticProfile(100, 9)).bytes);

  it('append adds each profile to the database (created when absent)', async () => {
    const ctx = context([all, a, b]);
    expect(await command('append').run(ctx)).toBe(0);
    expect(await command('append').run(context([all, a]))).toBe(0);
    const rows = listProfiles(await readInput(all));
    expect(rows.map((r) => [r.profileId, r.name])).toEqual([[1, a], [2, b], [3, a]]);
    expect(meaning((await readSqlite(await readInput(all), { profileId: 2 })).profile)).toEqual(meaning(syntheticProfile(100, 9)));
    const list = context([all]);
    expect(await command('list').run(list)).toBe(0);
    expect(list.out.text.split('\n')[1]).toBe(`2\t100\t2\t${b}`);
  });

  it('append refuses a foreign database and reports usage errors', async () => {
    const foreign = join(tmp, 'foreign.sqlite');
    writeFileSync(foreign, 'not a database, just text that is long enough to be more than a header. '.repeat(3));
    const before = readFileSync(foreign);
    await expect(command('append').run(context([foreign, a]))).rejects.toMatchObject({ code: 'PROFKIT_E_DM_NOT_SQLITE' });
    expect(readFileSync(foreign)).toEqual(before);
    expect(existsSync(`${foreign}.lock`)).toBe(false);
    await expect(command('append').run(context([all]))).rejects.toMatchObject({ code: 'PROFKIT_E_USAGE', message: expect.stringMatching(/at least one PROFILE/) });
    // The output is an input: refused before anything is written.
    await expect(command('append').run(context([a, a]))).rejects.toMatchObject({ code: 'PROFKIT_E_CLOBBER' });
  });

  it('export writes Parquet/CSV directories, SQLite and SQL; import reads a directory back', async () => {
    for (const to of ['parquet', 'csv'] as const) {
      const dir = join(tmp, `out-${to}`);
      expect(await command('export').run(context([a, dir], { to, 'profile-id': '7' }))).toBe(0);
      expect(existsSync(join(dir, `sample_locations.${to}`))).toBe(true);
      const out = join(tmp, `back-${to}.sqlite`);
      expect(await command('import').run(context([dir, out], { from: to }))).toBe(0);
      const back = await readSqlite(await readInput(out));
      expect(meaning(back.profile)).toEqual(meaning(richProfile()));
    }
    const sqlFile = join(tmp, 'x.sql');
    expect(await command('export').run(context([a, sqlFile]))).toBe(0);
    expect(readFileSync(sqlFile, 'utf8')).toContain('INSERT INTO "functions"');
    const dbFile = join(tmp, 'x.db');
    expect(await command('export').run(context([a, dbFile], { to: 'sqlite', name: 'n' }))).toBe(0);
    expect(listProfiles(await readInput(dbFile))[0]!.name).toBe('n');
    await expect(command('export').run(context([a, join(tmp, 'y')], { to: 'xml' }))).rejects.toMatchObject({ code: 'PROFKIT_E_USAGE' });
    await expect(command('export').run(context([a, join(tmp, 'y')]))).rejects.toMatchObject({ code: 'PROFKIT_E_USAGE', message: expect.stringMatching(/--to/) });
    await expect(command('export').run(context([a, join(tmp, 'y')], { to: 'csv', 'profile-id': '0' }))).rejects.toMatchObject({ code: 'PROFKIT_E_USAGE' });
    await expect(command('import').run(context([join(tmp, 'missing-dir'), join(tmp, 'z.sqlite')]))).rejects.toMatchObject({ code: 'PROFKIT_E_IO' });
  });

  it('diagram prints DOT, Mermaid or SVG, or writes a file', async () => {
    const dot = context([], { format: 'dot' });
    expect(await command('diagram').run(dot)).toBe(0);
    expect(dot.out.text).toMatch(/^digraph dm \{/);
    const mm = context([], { format: 'mermaid', view: 'all' });
    expect(await command('diagram').run(mm)).toBe(0);
    expect(mm.out.text).toMatch(/^erDiagram/);
    const file = join(tmp, 'model.svg');
    expect(await command('diagram').run(context([], { out: file }))).toBe(0);
    expect(readFileSync(file, 'utf8')).toMatch(/^<svg /);
    await expect(command('diagram').run(context([], { format: 'png' }))).rejects.toMatchObject({ code: 'PROFKIT_E_USAGE' });
    // No JSON form of a diagram: --json is refused rather than printing SVG.
    const j = context([]);
    j.json = true;
    await expect(command('diagram').run(j)).rejects.toMatchObject({ code: 'PROFKIT_E_USAGE', message: expect.stringMatching(/no --json output/) });
    expect(j.out.text).toBe('');
  });

  it('--json prints one versioned document per command (profkit.dm-export.<command>/1)', async () => {
    const db = join(tmp, 'json.sqlite');
    const ap = context([db, a, b], { name: 'j' });
    ap.json = true;
    expect(await command('append').run(ap)).toBe(0);
    expect(JSON.parse(ap.out.text)).toEqual({ schema: 'profkit.dm-export.append/1', database: db, profiles: [{ input: a, profileId: 1, name: 'j' }, { input: b, profileId: 2, name: 'j' }] });
    const ls = context([db]);
    ls.json = true;
    expect(await command('list').run(ls)).toBe(0);
    const doc = JSON.parse(ls.out.text);
    expect(doc).toEqual({ schema: 'profkit.dm-export.list/1', database: db, profiles: listProfiles(db) });
    expect(doc.profiles.map((r: { samples: number }) => r.samples)).toEqual([richProfile().samples.value.length, 100]);
    const ex = context([a, join(tmp, 'json-csv')], { to: 'csv', 'profile-id': '4' });
    ex.json = true;
    expect(await command('export').run(ex)).toBe(0);
    const e = JSON.parse(ex.out.text);
    expect(e).toMatchObject({ schema: 'profkit.dm-export.export/1', input: a, output: join(tmp, 'json-csv'), to: 'csv', profileId: 4, warnings: [] });
    expect(e.files.map((f: string) => f.replace(/^.*\//, '')).sort()).toEqual(readdirSync(join(tmp, 'json-csv')).sort());
    const im = context([join(tmp, 'json-csv'), join(tmp, 'json-back.sqlite')]);
    im.json = true;
    expect(await command('import').run(im)).toBe(0);
    expect(JSON.parse(im.out.text)).toMatchObject({ schema: 'profkit.dm-export.import/1', input: join(tmp, 'json-csv'), output: join(tmp, 'json-back.sqlite'), profileId: 4 });
  });

  it('reports progress: rows loaded into SQLite (export, and each profile of append), tables of a directory', async () => {
    const calls: { label: string; updates: [number, number | undefined][]; done: boolean }[] = [];
    const withProgress = (ctx: ReturnType<typeof context>) => {
      ctx.progress = (label) => {
        const c = { label, updates: [] as [number, number | undefined][], done: false };
        calls.push(c);
        return { update: (done: number, total?: number) => c.updates.push([done, total]), done: () => (c.done = true) };
      };
      return ctx;
    };
    const big = syntheticProfile(3000, 3);
    const bigFile = join(tmp, 'big.sqlite');
    writeFileSync(bigFile, writeSqlite(big).bytes);
    const rows = (p: Profile) => profileToTables(p, { profileId: 1 }).reduce((n, t) => n + t.rowCount, 0);
    expect(await command('export').run(withProgress(context([bigFile, join(tmp, 'p.sqlite')])))).toBe(0);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.label).toBe(`exporting ${bigFile} to ${join(tmp, 'p.sqlite')}`);
    const u = calls[0]!.updates;
    // Increasing row counts, all against the profile's total, ending at the total.
    expect(rows(big)).toBeGreaterThan(16_384);
    expect(u.every(([, t]) => t === rows(big))).toBe(true);
    expect(u.every(([d], i) => i === 0 || d >= u[i - 1]![0])).toBe(true);
    expect(u.at(-1)![0]).toBe(rows(big));
    // One report at the end of each table, plus reports inside the tables of more than 16,384 rows.
    expect(u.length).toBeGreaterThan(TABLES.length);
    expect(calls[0]!.done).toBe(true);
    calls.length = 0;
    expect(await command('append').run(withProgress(context([join(tmp, 'p2.sqlite'), a, bigFile])))).toBe(0);
    expect(calls.map((c) => [c.label, c.updates.at(-1), c.done])).toEqual([
      [`appending ${a} to ${join(tmp, 'p2.sqlite')}`, [rows(richProfile()), rows(richProfile())], true],
      [`appending ${bigFile} to ${join(tmp, 'p2.sqlite')}`, [rows(big), rows(big)], true],
    ]);
    calls.length = 0;
    expect(await command('export').run(withProgress(context([a, join(tmp, 'p-csv')], { to: 'csv' })))).toBe(0);
    expect(calls[0]!.updates).toEqual(TABLES.map((_, i) => [i + 1, TABLES.length]));
    expect(calls[0]!.done).toBe(true);
  });
});
