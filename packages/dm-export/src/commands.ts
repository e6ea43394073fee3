/**
 * CLI subcommands contributed by the adapter (`profkit dm-export ...`). The CLI dispatches them
 * without knowing the format; they use only the services of `CommandContext`.
 */

import { basename, join } from 'node:path';
import { ErrorCodes, ProfkitError, parseLimitArgs, writeFileAtomic, type AdapterCommand, type CommandContext, type Warning } from '@profkit/core/node';
import { TABLES } from './schema.js';

// Errors are thrown as `ProfkitError`s: the CLI prints the one-line message with its code and
// chooses the exit code (docs/cli.md, "Exit codes"). `--json` documents follow docs/cli.md
// ("JSON output"): one object with `"schema": "profkit.dm-export.<command>/1"`.

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function usage(command: string, message: string): ProfkitError {
  return new ProfkitError(ErrorCodes.USAGE, `dm-export ${command}: ${message}`, { rule: `usage of profkit dm-export ${command}` });
}

function intOption(v: unknown, name: string): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 0xffffffff) throw new ProfkitError(ErrorCodes.USAGE, `--${name} must be an integer in 1..4294967295, got ${JSON.stringify(v)}`, { option: name });
  return n;
}


function document(ctx: CommandContext, command: string, body: Record<string, unknown>): void {
  ctx.stdout.write(JSON.stringify({ schema: `profkit.dm-export.${command}/1`, ...body }) + '\n');
}

function jsonWarnings(ws: Warning[]): { code: string; message: string }[] {
  return ws.map((w) => ({ code: w.code, message: w.message }));
}

function printWarnings(ctx: CommandContext, ws: Warning[]): void {
  if (ctx.quiet || ctx.json) return;
  for (const w of ws) ctx.stderr.write(`profkit: warning: ${w.message} [${w.code}]\n`);
}

/** A progress bar over the tables of the relational model (Parquet/CSV directories). */
function tableProgress(ctx: CommandContext, label: string): (table: string, rows: number) => void {
  const total = TABLES.length;
  const bar = ctx.progress(label, total);
  let done = 0;
  return () => {
    done++;
    bar.update(done, total);
    if (done === total) bar.done();
  };
}

/** A progress bar over the rows of one profile loaded into SQLite. */
function rowProgress(ctx: CommandContext, label: string): { onRows: (done: number, total: number) => void; done: () => void } {
  const bar = ctx.progress(label);
  return { onRows: (done, total) => bar.update(done, total), done: () => bar.done() };
}

const appendCommand: AdapterCommand = {
  name: 'dm-export append',
  summary: 'add profiles to a profkit SQLite database (created when absent)',
  usage: [
    'profkit dm-export append DB.sqlite PROFILE... [--name NAME]',
    '',
    'Appends on disk, atomically, under the lock file DB.sqlite.lock: a concurrent append waits',
    'for it (up to 30 s), then fails with "database is locked by pid N".',
    '',
    'Examples:',
    '  $ profkit dm-export append all.sqlite cpu1.pb.gz cpu2.pb.gz',
    '  cpu1.pb.gz → all.sqlite profile_id 1',
    '  cpu2.pb.gz → all.sqlite profile_id 2',
    '  $ profkit dm-export append all.sqlite cpu1.pb.gz --name again --json',
    '  {"schema":"profkit.dm-export.append/1","database":"all.sqlite","profiles":[{"input":"cpu1.pb.gz","profileId":3,"name":"again"}]}',
  ].join('\n'),
  options: { name: { type: 'string', description: 'profiles.name of the added profiles (default: each input file name)', valueName: 'NAME' } },
  async run(ctx) {
    const [db, ...inputs] = ctx.positionals;
    if (!db || inputs.length === 0) throw usage('append', 'needs DB.sqlite and at least one PROFILE: profkit dm-export append DB.sqlite PROFILE...');
    const { writeSqliteFile } = await import('./sqlite-file.js');
    const added: { input: string; profileId: number; name: string }[] = [];
    await writeSqliteFile(db, { append: true, inputs }, async (add) => {
      for (const input of inputs) {
        const r = await ctx.readProfile(input);
        printWarnings(ctx, r.warnings);
        const name = str(ctx.values.name) ?? input;
        const bar = rowProgress(ctx, `appending ${input} to ${db}`);
        added.push({ input, profileId: add(r.profile, { name, onRows: bar.onRows }), name });
        bar.done();
      }
    });
    if (ctx.json) document(ctx, 'append', { database: db, profiles: added });
    else if (!ctx.quiet) for (const a of added) ctx.stderr.write(`${a.input} → ${db} profile_id ${a.profileId}\n`);
    return 0;
  },
};

const exportCommand: AdapterCommand = {
  name: 'dm-export export',
  summary: 'export a profile as a relational model: SQLite file, PostgreSQL script, or a directory of Parquet/CSV files',
  usage: [
    'profkit dm-export export PROFILE OUT --to sqlite|sql|parquet|csv [--profile-id N] [--name NAME]',
    '',
    '--to defaults to sqlite for OUT ending in .sqlite/.db and to sql for .sql.',
    '',
    'Examples:',
    '  $ profkit dm-export export cpu1.pb.gz cpu.sql',
    '  $ profkit dm-export export cpu1.pb.gz cpu-tables --to parquet',
    '  $ profkit dm-export export cpu1.pb.gz cpu.sqlite --profile-id 7 --json',
    '  {"schema":"profkit.dm-export.export/1","input":"cpu1.pb.gz","output":"cpu.sqlite","to":"sqlite","profileId":7,"name":"cpu1.pb.gz","files":["cpu.sqlite"],"warnings":[]}',
  ].join('\n'),
  options: {
    to: { type: 'string', description: 'sqlite (file), sql (PostgreSQL script), parquet or csv (directory of one file per table)', valueName: 'FORMAT' },
    'profile-id': { type: 'string', description: 'profile_id of the exported rows (default 1)', valueName: 'N' },
    name: { type: 'string', description: 'profiles.name (default: the input file name)', valueName: 'NAME' },
  },
  async run(ctx) {
    const [input, out, extra] = ctx.positionals;
    const to = str(ctx.values.to) ?? (out?.endsWith('.sql') ? 'sql' : out?.endsWith('.sqlite') || out?.endsWith('.db') ? 'sqlite' : undefined);
    if (!input || !out || extra !== undefined) throw usage('export', 'needs PROFILE and OUT: profkit dm-export export PROFILE OUT --to sqlite|sql|parquet|csv');
    if (!to) throw usage('export', `cannot tell the target format from ${out}: give --to sqlite|sql|parquet|csv`);
    if (!['sqlite', 'sql', 'parquet', 'csv'].includes(to)) throw usage('export', `--to must be sqlite, sql, parquet or csv, not ${to}`);
    const profileId = intOption(ctx.values['profile-id'], 'profile-id');
    const name = str(ctx.values.name) ?? input;
    const r = await ctx.readProfile(input);
    printWarnings(ctx, r.warnings);
    let files = [out];
    let id = profileId ?? 1;
    if (to === 'sqlite') {
      const { writeSqliteFile } = await import('./sqlite-file.js');
      const bar = rowProgress(ctx, `exporting ${input} to ${out}`);
      id = await writeSqliteFile(out, { append: false, inputs: [input] }, async (add) => add(r.profile, { profileId, name, onRows: bar.onRows }));
      bar.done();
    } else if (to === 'sql') {
      const { postgresScript } = await import('./text.js');
      const bar = ctx.progress(`exporting ${input} to sql`);
      let bytes = 0;
      const chunks = postgresScript(r.profile, { profileId, name }).chunks;
      await writeFileAtomic(out, (function* () {
        for (const c of chunks) {
          bytes += c.length;
          bar.update(bytes);
          yield c;
        }
        bar.done();
      })(), { inputs: [input], signal: ctx.signal });
    } else {
      const d = await import('./directory.js');
      const onTable = tableProgress(ctx, `exporting ${input} to ${out}`);
      const w = await (to === 'parquet' ? d.writeParquetDir : d.writeCsvDir)(r.profile, out, { profileId, name, onTable });
      files = w.files.map((f) => join(out, basename(f)));
      if (ctx.verbose && !ctx.json) for (const f of w.files) ctx.stderr.write(`wrote ${f}\n`);
    }
    if (ctx.json) document(ctx, 'export', { input, output: out, to, profileId: id, name, files, warnings: jsonWarnings(r.warnings) });
    return 0;
  },
};

const importCommand: AdapterCommand = {
  name: 'dm-export import',
  summary: 'read a profile back from a directory of Parquet or CSV tables and write it in any format',
  usage: [
    'profkit dm-export import DIR OUT [--from parquet|csv] [--profile-id N] [--limit NAME=N]...',
    '',
    'The global --limit options apply (maxSamples, maxFramesPerStack, maxStringLength, maxInputBytes',
    'for the files together, maxDecompressedBytes for the decoded Parquet rows).',
    '',
    'Examples:',
    '  $ profkit dm-export import cpu-tables back.pb.gz --json',
    '  {"schema":"profkit.dm-export.import/1","input":"cpu-tables","output":"back.pb.gz","profileId":1,"name":"cpu1.pb.gz","warnings":[]}',
  ].join('\n'),
  options: {
    from: { type: 'string', description: 'parquet or csv (default: parquet when DIR/profiles.parquet exists)', valueName: 'FORMAT' },
    'profile-id': { type: 'string', description: 'which profile (default: the only or the last one)', valueName: 'N' },
  },
  async run(ctx) {
    const [dir, out, extra] = ctx.positionals;
    if (!dir || !out || extra !== undefined) throw usage('import', 'needs DIR and OUT: profkit dm-export import DIR OUT');
    const from = str(ctx.values.from);
    if (from !== undefined && from !== 'parquet' && from !== 'csv') throw usage('import', `--from must be parquet or csv, not ${from}`);
    const { readDirectory } = await import('./directory.js');
    const r = await readDirectory(dir, { format: from, profileId: intOption(ctx.values['profile-id'], 'profile-id'), limits: parseLimitArgs(ctx.values.limit) });
    printWarnings(ctx, r.warnings);
    const warnings = await ctx.writeProfile(r.profile, out);
    printWarnings(ctx, warnings);
    if (ctx.json) document(ctx, 'import', { input: dir, output: out, profileId: r.profileId, name: r.name, warnings: jsonWarnings([...r.warnings, ...warnings]) });
    return 0;
  },
};

const diagramCommand: AdapterCommand = {
  name: 'dm-export diagram',
  summary: 'draw the relational data model (like R dm_draw): Graphviz DOT, Mermaid or SVG',
  usage: [
    'profkit dm-export diagram [--format dot|mermaid|svg] [--view keys|all] [--out FILE]',
    '',
    'No --json output (the diagram is the output).',
    '',
    'Examples:',
    '  $ profkit dm-export diagram --out model.svg',
    '  $ profkit dm-export diagram --format mermaid | head -3',
    '  erDiagram',
    '    profiles ||--o{ profile_comments : "profile_id"',
    '    profiles ||--o{ meta : "profile_id"',
  ].join('\n'),
  options: {
    format: { type: 'string', description: 'dot, mermaid or svg (default svg)', valueName: 'FORMAT' },
    view: { type: 'string', description: 'keys (key columns only, default) or all (every column)', valueName: 'VIEW' },
    out: { type: 'string', short: 'o', description: 'output file (default stdout)', valueName: 'FILE' },
  },
  async run(ctx) {
    if (ctx.json) throw usage('diagram', 'has no --json output (it prints DOT, Mermaid or SVG); drop --json');
    if (ctx.positionals.length > 0) throw usage('diagram', `takes no arguments, got ${ctx.positionals.map((x) => JSON.stringify(x)).join(' ')}`);
    const format = str(ctx.values.format) ?? 'svg';
    const view = str(ctx.values.view) ?? 'keys';
    if (format !== 'dot' && format !== 'mermaid' && format !== 'svg') throw usage('diagram', `--format must be dot, mermaid or svg, not ${format}`);
    if (view !== 'keys' && view !== 'all') throw usage('diagram', `--view must be keys or all, not ${view}`);
    const { diagram } = await import('./diagram.js');
    const text = diagram(format, { view });
    const out = str(ctx.values.out);
    if (out) await writeFileAtomic(out, new TextEncoder().encode(text), { signal: ctx.signal });
    else ctx.stdout.write(text);
    return 0;
  },
};

const listCommand: AdapterCommand = {
  name: 'dm-export list',
  summary: 'list the profiles stored in a profkit SQLite database',
  usage: [
    'profkit dm-export list DB.sqlite',
    '',
    'Prints one line per profile: profile_id, samples, sample types, name (tab-separated).',
    '',
    'Examples:',
    '  $ profkit dm-export list all.sqlite',
    '  1\t24\t2\tcpu1.pb.gz',
    '  2\t206\t2\tcpu2.pb.gz',
    '  $ profkit dm-export list all.sqlite --json',
    '  {"schema":"profkit.dm-export.list/1","database":"all.sqlite","profiles":[{"profileId":1,"name":"cpu1.pb.gz","samples":24,"sampleTypes":2},{"profileId":2,"name":"cpu2.pb.gz","samples":206,"sampleTypes":2}]}',
  ].join('\n'),
  async run(ctx) {
    const [db, extra] = ctx.positionals;
    if (!db || extra !== undefined) throw usage('list', 'needs one DB.sqlite: profkit dm-export list DB.sqlite');
    const { listProfiles } = await import('./sqlite.js');
    const rows = listProfiles(db);
    if (ctx.json) document(ctx, 'list', { database: db, profiles: rows });
    else for (const r of rows) ctx.stdout.write(`${r.profileId}\t${r.samples}\t${r.sampleTypes}\t${r.name}\n`);
    return 0;
  },
};

export const commands: AdapterCommand[] = [appendCommand, exportCommand, importCommand, diagramCommand, listCommand];
