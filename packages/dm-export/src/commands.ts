/**
 * CLI subcommands contributed by the adapter (`profkit dm-export ...`). The CLI dispatches them
 * without knowing the format; they use only the services of `CommandContext`.
 */

import { existsSync } from 'node:fs';
import { ErrorCodes, ProfkitError, isProfkitError, readInput, writeFileAtomic, type AdapterCommand, type CommandContext } from '@profkit/core';

function fail(ctx: CommandContext, e: unknown): number {
  if (isProfkitError(e)) {
    ctx.stderr.write(`profkit dm-export: ${e.describe()} [${e.code}]\n`);
    return e.code === ErrorCodes.USAGE ? 2 : e.code === ErrorCodes.IO || e.code === ErrorCodes.CLOBBER ? 3 : 1;
  }
  throw e;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function usage(ctx: CommandContext, message: string): number {
  ctx.stderr.write(`profkit dm-export: ${message}\n`);
  return 2;
}

function intOption(v: unknown, name: string): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 0xffffffff) throw new ProfkitError(ErrorCodes.USAGE, `--${name} must be an integer in 1..4294967295`, { option: name });
  return n;
}

const appendCommand: AdapterCommand = {
  name: 'dm-export append',
  summary: 'add profiles to a profkit SQLite database (created when absent)',
  usage: 'profkit dm-export append DB.sqlite PROFILE... [--name NAME]\n  e.g. profkit dm-export append all.sqlite cpu1.pb.gz cpu2.pb.gz',
  options: { name: { type: 'string', description: 'profiles.name of the added profiles (default: each input file name)', valueName: 'NAME' } },
  async run(ctx) {
    const [db, ...inputs] = ctx.positionals;
    if (!db || inputs.length === 0) return usage(ctx, 'usage: profkit dm-export append DB.sqlite PROFILE...');
    try {
      const { writeSqlite } = await import('./sqlite.js');
      let bytes: Uint8Array | undefined = existsSync(db) ? await readInput(db) : undefined;
      const ids: number[] = [];
      for (const input of inputs) {
        const r = await ctx.readProfile(input);
        const w = writeSqlite(r.profile, { append: true, existing: bytes, name: str(ctx.values.name) ?? input, file: db });
        bytes = w.bytes;
        ids.push(w.profileId);
        if (!ctx.quiet && !ctx.json) ctx.stderr.write(`${input} → ${db} profile_id ${w.profileId}\n`);
      }
      await writeFileAtomic(db, bytes!, { inputs });
      if (ctx.json) ctx.stdout.write(JSON.stringify({ database: db, profileIds: ids }) + '\n');
      return 0;
    } catch (e) {
      return fail(ctx, e);
    }
  },
};

const exportCommand: AdapterCommand = {
  name: 'dm-export export',
  summary: 'export a profile as a relational model: SQLite file, PostgreSQL script, or a directory of Parquet/CSV files',
  usage:
    'profkit dm-export export PROFILE OUT --to sqlite|sql|parquet|csv [--profile-id N] [--name NAME]\n' +
    '  e.g. profkit dm-export export cpu.pb.gz cpu-tables/ --to parquet',
  options: {
    to: { type: 'string', description: 'sqlite (file), sql (PostgreSQL script), parquet or csv (directory of one file per table)', valueName: 'FORMAT' },
    'profile-id': { type: 'string', description: 'profile_id of the exported rows (default 1)', valueName: 'N' },
    name: { type: 'string', description: 'profiles.name (default: the input file name)', valueName: 'NAME' },
  },
  async run(ctx) {
    const [input, out] = ctx.positionals;
    const to = str(ctx.values.to) ?? (out?.endsWith('.sql') ? 'sql' : out?.endsWith('.sqlite') || out?.endsWith('.db') ? 'sqlite' : undefined);
    if (!input || !out || !to) return usage(ctx, 'usage: profkit dm-export export PROFILE OUT --to sqlite|sql|parquet|csv');
    if (!['sqlite', 'sql', 'parquet', 'csv'].includes(to)) return usage(ctx, `--to must be sqlite, sql, parquet or csv, not ${to}`);
    try {
      const profileId = intOption(ctx.values['profile-id'], 'profile-id');
      const name = str(ctx.values.name) ?? input;
      const r = await ctx.readProfile(input);
      if (to === 'sqlite') {
        const { writeSqlite } = await import('./sqlite.js');
        await writeFileAtomic(out, writeSqlite(r.profile, { profileId, name, file: out }).bytes, { inputs: [input] });
      } else if (to === 'sql') {
        const { postgresScript } = await import('./text.js');
        await writeFileAtomic(out, postgresScript(r.profile, { profileId, name }).chunks, { inputs: [input] });
      } else {
        const d = await import('./directory.js');
        const w = await (to === 'parquet' ? d.writeParquetDir : d.writeCsvDir)(r.profile, out, { profileId, name });
        if (ctx.verbose) for (const f of w.files) ctx.stderr.write(`wrote ${f}\n`);
      }
      return 0;
    } catch (e) {
      return fail(ctx, e);
    }
  },
};

const importCommand: AdapterCommand = {
  name: 'dm-export import',
  summary: 'read a profile back from a directory of Parquet or CSV tables and write it in any format',
  usage: 'profkit dm-export import DIR OUT [--from parquet|csv] [--profile-id N]\n  e.g. profkit dm-export import cpu-tables/ cpu.pb.gz',
  options: {
    from: { type: 'string', description: 'parquet or csv (default: parquet when DIR/profiles.parquet exists)', valueName: 'FORMAT' },
    'profile-id': { type: 'string', description: 'which profile (default: the only or the last one)', valueName: 'N' },
  },
  async run(ctx) {
    const [dir, out] = ctx.positionals;
    if (!dir || !out) return usage(ctx, 'usage: profkit dm-export import DIR OUT');
    const from = str(ctx.values.from);
    if (from !== undefined && from !== 'parquet' && from !== 'csv') return usage(ctx, `--from must be parquet or csv, not ${from}`);
    try {
      const { readDirectory } = await import('./directory.js');
      const r = await readDirectory(dir, { format: from, profileId: intOption(ctx.values['profile-id'], 'profile-id') });
      for (const w of r.warnings) if (!ctx.quiet) ctx.stderr.write(`warning: ${w.message}\n`);
      const warnings = await ctx.writeProfile(r.profile, out);
      for (const w of warnings) if (!ctx.quiet) ctx.stderr.write(`warning: ${w.message}\n`);
      return 0;
    } catch (e) {
      return fail(ctx, e);
    }
  },
};

const diagramCommand: AdapterCommand = {
  name: 'dm-export diagram',
  summary: 'draw the relational data model (like R dm_draw): Graphviz DOT, Mermaid or SVG',
  usage: 'profkit dm-export diagram [--format dot|mermaid|svg] [--view keys|all] [--out FILE]\n  e.g. profkit dm-export diagram --format svg --out model.svg',
  options: {
    format: { type: 'string', description: 'dot, mermaid or svg (default svg)', valueName: 'FORMAT' },
    view: { type: 'string', description: 'keys (key columns only, default) or all (every column)', valueName: 'VIEW' },
    out: { type: 'string', short: 'o', description: 'output file (default stdout)', valueName: 'FILE' },
  },
  async run(ctx) {
    const format = str(ctx.values.format) ?? 'svg';
    const view = str(ctx.values.view) ?? 'keys';
    if (format !== 'dot' && format !== 'mermaid' && format !== 'svg') return usage(ctx, `--format must be dot, mermaid or svg, not ${format}`);
    if (view !== 'keys' && view !== 'all') return usage(ctx, `--view must be keys or all, not ${view}`);
    const { diagram } = await import('./diagram.js');
    const text = diagram(format, { view });
    const out = str(ctx.values.out);
    try {
      if (out) await writeFileAtomic(out, new TextEncoder().encode(text));
      else ctx.stdout.write(text);
      return 0;
    } catch (e) {
      return fail(ctx, e);
    }
  },
};

const listCommand: AdapterCommand = {
  name: 'dm-export list',
  summary: 'list the profiles stored in a profkit SQLite database',
  usage: 'profkit dm-export list DB.sqlite',
  async run(ctx) {
    const [db] = ctx.positionals;
    if (!db) return usage(ctx, 'usage: profkit dm-export list DB.sqlite');
    try {
      const { listProfiles } = await import('./sqlite.js');
      const rows = listProfiles(await readInput(db), db);
      if (ctx.json) ctx.stdout.write(JSON.stringify(rows) + '\n');
      else for (const r of rows) ctx.stdout.write(`${r.profileId}\t${r.samples}\t${r.sampleTypes}\t${r.name}\n`);
      return 0;
    } catch (e) {
      return fail(ctx, e);
    }
  },
};

export const commands: AdapterCommand[] = [appendCommand, exportCommand, importCommand, diagramCommand, listCommand];
