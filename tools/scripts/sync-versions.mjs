// Run by `npm run version-packages` after `changeset version`: writes each workspace package's
// new version (package.json) into its src/version.ts, the constant the package reports (core's
// CORE_VERSION, the adapters' PACKAGE_VERSION in their adapter objects) on every platform: a
// browser bundle cannot read package.json. tools/release-check/test/versions.test.ts checks they
// agree. Usage: node tools/scripts/sync-versions.mjs [ROOT] (default: this repository).
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(process.argv[2] ?? join(fileURLToPath(new URL('.', import.meta.url)), '../..'));
const CONSTANT = /^(export const [A-Z][A-Z0-9_]*VERSION = )'[^']*';$/m;

let updated = 0;
for (const group of ['packages', 'tools']) {
  const groupDir = join(root, group);
  if (!existsSync(groupDir)) continue;
  for (const folder of readdirSync(groupDir).sort()) {
    const file = join(groupDir, folder, 'src', 'version.ts');
    const pkgFile = join(groupDir, folder, 'package.json');
    if (!existsSync(file) || !existsSync(pkgFile)) continue;
    const { name, version } = JSON.parse(readFileSync(pkgFile, 'utf8'));
    const text = readFileSync(file, 'utf8');
    if (!CONSTANT.test(text)) throw new Error(`${file}: no \`export const …VERSION = '…';\` line to update`);
    const next = text.replace(CONSTANT, `$1'${version}';`);
    if (next !== text) {
      writeFileSync(file, next);
      updated++;
    }
    console.log(`${name}: ${version}`);
  }
}
console.log(`version constants: ${updated} updated`);
