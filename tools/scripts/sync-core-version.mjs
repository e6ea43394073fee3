// Run by `npm run version-packages` after `changeset version`: writes @profkit/core's new version
// into packages/core/src/version.ts, the constant that lets every platform (a browser bundle
// cannot read package.json) report it. packages/core/test/version.test.ts checks they agree.
import { readFileSync, writeFileSync } from 'node:fs';

const root = new URL('../../packages/core/', import.meta.url);
const { version } = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
const file = new URL('src/version.ts', root);
const text = readFileSync(file, 'utf8');
const next = text.replace(/export const CORE_VERSION = '[^']*';/, `export const CORE_VERSION = '${version}';`);
if (!next.includes(`'${version}'`)) throw new Error(`${file.pathname}: no CORE_VERSION constant to update`);
if (next !== text) writeFileSync(file, next);
console.log(`@profkit/core version constant: ${version}`);
