// Preloaded with `node --import` by optional-engines.test.ts: makes the two native engines look
// uninstalled, the way Node reports a missing package, for both ways dm-export loads them
// (`import()` for @duckdb/node-api, `createRequire` for better-sqlite3). Every attempt is
// reported on stderr as `[blocked] <package>`, so a test can also prove no attempt was made.
import Module, { register } from 'node:module';

const BLOCKED = ['better-sqlite3', '@duckdb/node-api'];
const isBlocked = (specifier) => BLOCKED.some((p) => specifier === p || specifier.startsWith(`${p}/`));

// ESM resolution (import(), import.meta.resolve): a resolve hook, in Node's hooks thread.
const hook = `
import { writeSync } from 'node:fs';
const BLOCKED = ${JSON.stringify(BLOCKED)};
export async function resolve(specifier, context, next) {
  if (BLOCKED.some((p) => specifier === p || specifier.startsWith(p + '/'))) {
    writeSync(2, '[blocked] ' + specifier + '\\n');
    const e = new Error("Cannot find package '" + specifier + "' imported from " + context.parentURL);
    e.code = 'ERR_MODULE_NOT_FOUND';
    throw e;
  }
  return next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`);

// CommonJS resolution (require, require.resolve): Node 20's ESM hooks do not see these.
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (isBlocked(request)) {
    process.stderr.write(`[blocked] ${request}\n`);
    const e = new Error(`Cannot find module '${request}'`);
    e.code = 'MODULE_NOT_FOUND';
    throw e;
  }
  return resolveFilename.call(this, request, ...rest);
};
