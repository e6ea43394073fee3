// Run by optional-engines.test.ts as `node [--import block-engines.mjs] run.mjs MODE DIR`, against
// the built package (dist). Prints one JSON line: what worked, or the error's code and message.
import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ProfileBuilder } from '@profkit/core/node';
import dmExport, { SQLITE_APPLICATION_ID, diagramMermaid, postgresScript, sniffDm, writeCsvDir, writeParquetDir, writeSqlite } from '@profkit/dm-export';

const [mode, dir] = process.argv.slice(2);

function profile() {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
  const main = b.internLocation({ functionId: b.internFunction({ name: 'main', filename: 'main.c' }), line: 3 });
  b.addSample([main], [7]);
  return b.build();
}

/** The first 100 bytes of a SQLite file written by dm-export: the magic and our application_id. */
function sqliteHeader() {
  const head = new Uint8Array(100);
  head.set(new TextEncoder().encode('SQLite format 3\0'));
  new DataView(head.buffer).setUint32(68, SQLITE_APPLICATION_ID);
  return head;
}

async function neutral() {
  const p = profile();
  mkdirSync(dir, { recursive: true });
  const csv = await writeCsvDir(p, join(dir, 'csv'));
  const script = Buffer.concat([...postgresScript(p, { name: 'x' }).chunks]).toString('utf8');
  const codec = await dmExport.load();
  const written = await codec.write(p, { format: 'sql', fileName: join(dir, 'x.sql'), options: { name: 'x' } });
  let viaCodec = '';
  for await (const c of written.data) viaCodec += Buffer.from(c).toString('utf8');
  const sniffed = sniffDm(sqliteHeader(), {});
  return {
    csvFiles: readdirSync(join(dir, 'csv')).length === csv.files.length ? csv.files.length : -1,
    samplesCsv: readFileSync(join(dir, 'csv', 'samples.csv'), 'utf8').split('\n')[0],
    script: script.includes('INSERT INTO "profiles"') && viaCodec === script,
    sniff: sniffed.format,
    diagram: diagramMermaid().startsWith('erDiagram'),
  };
}

const modes = {
  neutral,
  sqlite: async () => writeSqlite(profile(), { name: 'x' }).bytes.length,
  parquet: async () => (await writeParquetDir(profile(), join(dir, 'parquet'))).files.length,
};

try {
  console.log(JSON.stringify({ ok: await modes[mode]() }));
} catch (e) {
  console.log(JSON.stringify({ error: { code: e.code, message: e.message, install: e.detail?.install } }));
}
